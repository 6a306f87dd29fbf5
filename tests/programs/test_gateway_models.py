"""The shared Gateway's one /v1/models (fusion_helm/programs/gateway_models.py), in process: it lists what the
services' HTTPRoutes on that Gateway match, as the expansion writes them, each model once with the services
that serve it; nothing of another Gateway's; one LIST for a burst of clients; answered over HTTP as OpenAI
clients read it, and a clear 503 when the API server cannot be read. On the control plane, through the
gateway stand-in: tests/controlplane/test_cluster_shared_gateway.py."""

from __future__ import annotations

import copy
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import Any

import pytest

from fusion_helm.base.labels import MODEL_HEADER
from fusion_helm.programs.gateway_models import FRESH_SECONDS, Lister, handler, listing, main, routed_models
from fusion_helm.programs.kube import ApiError
from tests.builders import render, role, service

GATEWAY = ("gateways", "inference-gateway")
SHARED = {"name": GATEWAY[1], "namespace": GATEWAY[0]}


def route_of(name: str, namespace: str, args: list[str], **router: Any) -> dict[str, Any]:
    """The HTTPRoute the expansion writes for service NAME in NAMESPACE on the shared Gateway, its engines
    taking ARGS."""
    obj = service(role("w", "worker", args=args),
                  {"name": "router", "componentType": "router", "sharedGateway": SHARED, **router})
    obj["metadata"] |= {"name": name, "namespace": namespace}
    route = copy.deepcopy(render(obj)[f"HTTPRoute/{name}-router"])
    route["metadata"]["creationTimestamp"] = "2026-11-01T00:00:00Z"
    return route


def test_the_listing_is_what_the_services_routes_on_the_gateway_match() -> None:
    """Each model and adapter once, with the services serving it (a canary's too), as the routes the
    expansion writes match them; a route of another Gateway, or of a same-named one elsewhere, not at all."""
    a = route_of("a", "team-a", ["--model", "org/a", "--enable-lora", "--lora-modules", "sql=/adapters/sql"])
    canary = route_of("a-canary", "team-a", ["--model", "org/a"], canaryOf={"inferencePool": "a-router", "weight": 10})
    canary["metadata"]["creationTimestamp"] = "2026-11-20T00:00:00Z"
    b = route_of("b", "team-b", ["--model", "org/b", "--served-model-name", "b", "b-chat"])
    elsewhere = copy.deepcopy(b)
    elsewhere["spec"]["parentRefs"][0]["namespace"] = "other"
    own_gateway = copy.deepcopy(b)
    own_gateway["spec"]["parentRefs"] = [{"name": GATEWAY[1]}]  # the route's own namespace: team-b
    listed = listing([a, canary, b, elsewhere, own_gateway], *GATEWAY)
    assert listed["object"] == "list"
    assert [(model["id"], model["owned_by"]) for model in listed["data"]] == [
        ("b", "team-b/b"), ("b-chat", "team-b/b"), ("org/a", "team-a/a,team-a/a-canary"), ("sql", "team-a/a")]
    assert {model["created"] for model in listed["data"]} == {1793491200}  # the oldest route's time
    assert {model["object"] for model in listed["data"]} == {"model"}


def test_only_exact_model_matches_are_names() -> None:
    route = {"metadata": {"name": "r", "namespace": "n"}, "spec": {"rules": [{"matches": [
        {"headers": [{"type": "Exact", "name": MODEL_HEADER.lower(), "value": "m"},
                     {"type": "RegularExpression", "name": MODEL_HEADER, "value": "m-.*"},
                     {"name": "X-Other", "value": "o"}]},
        {"headers": [{"name": MODEL_HEADER, "value": "n"}]},  # Exact by default
        {"path": {"type": "PathPrefix", "value": "/"}}]}]}}
    assert routed_models(route) == ["m", "n"]


def test_a_burst_of_clients_costs_one_list() -> None:
    listed, now = [], [100.0]

    def list_routes() -> list[dict[str, Any]]:
        listed.append(now[0])
        return [route_of("a", "team-a", ["--model", "org/a"])]

    lister = Lister(*GATEWAY, list_routes, clock=lambda: now[0])
    answers = {lister.models() for _ in range(50)}
    now[0] += FRESH_SECONDS
    lister.models()
    assert listed == [100.0, 100.0 + FRESH_SECONDS] and len(answers) == 1
    assert [model["id"] for model in json.loads(answers.pop())["data"]] == ["org/a"]


@pytest.fixture
def served() -> Iterator[tuple[str, list[Exception | list[dict[str, Any]]]]]:
    """The lister over HTTP on loopback, its routes (or the error listing them raises) what the test puts in
    the list it is given: its address and that list."""
    routes: list[Exception | list[dict[str, Any]]] = []

    def list_routes() -> list[dict[str, Any]]:
        found = routes[-1]
        if isinstance(found, Exception):
            raise found
        return found

    always_stale = iter(range(0, 10**6, 10)).__next__
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(Lister(*GATEWAY, list_routes, clock=always_stale)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", routes
    finally:
        server.shutdown()


def get(address: str, path: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(f"http://{address}{path}", timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_it_answers_over_http_as_openai_clients_read_it(
        served: tuple[str, list[Exception | list[dict[str, Any]]]]) -> None:
    address, routes = served
    routes.append([route_of("a", "team-a", ["--model", "org/a"])])
    status, answer = get(address, "/v1/models")
    assert status == 200 and [model["id"] for model in answer["data"]] == ["org/a"], answer
    assert get(address, "/healthz") == (200, {"status": "ok"})
    status, answer = get(address, "/v1/completions")
    assert status == 404 and "GET /v1/models" in answer["error"]["message"], answer
    routes.append(ApiError("GET", "/apis/gateway.networking.k8s.io/v1/httproutes", 403, "forbidden"))
    status, answer = get(address, "/v1/models")
    assert status == 503 and answer["error"]["message"].startswith("cannot list the Gateway's routes: GET "), answer


@pytest.mark.parametrize("argv", [["--gateway", "no-namespace"], ["--gateway", "gw/x", "--listen", "nowhere"]])
def test_arguments_it_cannot_use_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2 and "--gateway is NAMESPACE/NAME" in capsys.readouterr().err
