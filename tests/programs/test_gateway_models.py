"""The shared Gateway's one /v1/models (fusion_helm/programs/gateway_models.py), in process: it lists what the
services' HTTPRoutes on that Gateway match, as the expansion writes them, each model once, with the services
that serve it only where asked; nothing of another Gateway's; one LIST for a burst of clients; answered over
HTTP as OpenAI clients read it, and a clear 503 when the API server cannot be read. Its server holds up under
slow and many clients: a client that sends nothing, or a byte at a time, is cut off at its deadline and holds
no worker past it; one past the workers is answered 503 at once; each shown failing without it (the standard
library's per-read timeout, its unbounded threads). On the control plane, through the gateway stand-in:
tests/controlplane/test_cluster_shared_gateway.py."""

from __future__ import annotations

import contextlib
import copy
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from fusion_helm.base.labels import MODEL_HEADER
from fusion_helm.programs.gateway_models import (
    FRESH_SECONDS,
    OWNED_BY,
    Lister,
    ModelsServer,
    handler,
    listing,
    main,
    routed_models,
)
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
    listed = listing([a, canary, b, elsewhere, own_gateway], *GATEWAY, owners=True)
    assert listed["object"] == "list"
    assert [(model["id"], model["owned_by"]) for model in listed["data"]] == [
        ("b", "team-b/b"), ("b-chat", "team-b/b"), ("org/a", "team-a/a,team-a/a-canary"), ("sql", "team-a/a")]
    assert {model["created"] for model in listed["data"]} == {1793491200}  # the oldest route's time
    assert {model["object"] for model in listed["data"]} == {"model"}
    # Unless asked, the names alone: no client of the Gateway learns which namespace serves what.
    unnamed = listing([a, canary, b, elsewhere, own_gateway], *GATEWAY)
    assert [(model["id"], model["owned_by"]) for model in unnamed["data"]] == [
        (model["id"], OWNED_BY) for model in listed["data"]]
    assert "team-" not in json.dumps(unnamed)


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
    with serving(ModelsServer(("127.0.0.1", 0), handler(Lister(*GATEWAY, list_routes, clock=always_stale)))
                 ) as address:
        yield address, routes


@contextlib.contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[str]:
    """SERVER answering on loopback: its address."""
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def get(address: str, path: str, timeout: float = 10) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(f"http://{address}{path}", timeout=timeout) as answer:
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


@pytest.mark.parametrize(("argv", "said"), [
    (["--gateway", "no-namespace"], "--gateway is NAMESPACE/NAME"),
    (["--gateway", "gw/x", "--listen", "nowhere"], "--gateway is NAMESPACE/NAME"),
    (["--gateway", "gw/x", "--workers", "0"], "--workers is 1 or more"),
    (["--gateway", "gw/x", "--client-seconds", "0"], "--client-seconds more than 0")])
def test_arguments_it_cannot_use_are_refused(argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2 and said in capsys.readouterr().err


def models_server(seconds: float, workers: int, stock: bool = False) -> ThreadingHTTPServer:
    """The lister's server of WORKERS, each client given SECONDS; STOCK: its handler with the standard library's
    request reading instead (a socket timeout per read)."""
    answering = handler(Lister(*GATEWAY, lambda: [route_of("a", "team-a", ["--model", "org/a"])]), seconds)
    if stock:
        answering = type("Stock", (answering,), {"handle": BaseHTTPRequestHandler.handle})
    return ModelsServer(("127.0.0.1", 0), answering, workers)


def connected(address: str) -> socket.socket:
    host, _, port = address.rpartition(":")
    return socket.create_connection((host, int(port)), timeout=10)


def closed_by_server(client: socket.socket, within: float) -> bool:
    """The server has closed CLIENT's connection within WITHIN seconds (it reads end-of-file, or a reset)."""
    client.settimeout(within)
    try:
        return client.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


@pytest.mark.parametrize("seconds", [0.5, 30])
def test_a_client_that_sends_nothing_holds_its_worker_no_longer_than_its_time(seconds: float) -> None:
    """One worker; a client connects and sends nothing: meanwhile another is answered 503 at once, and once the
    silent client's time is up, 200. With 30 seconds for it (no timeout to speak of), still 503."""
    with serving(models_server(seconds, workers=1)) as address, connected(address) as silent:
        time.sleep(0.1)  # accepted: it holds the worker
        started = time.monotonic()
        status, answer = get(address, "/v1/models")
        assert status == 503 and answer["error"]["message"] == "too many clients at once; try again", answer
        assert time.monotonic() - started < 0.5
        time.sleep(0.6)
        assert get(address, "/v1/models")[0] == (200 if seconds < 1 else 503)
        assert closed_by_server(silent, 0.1) is (seconds < 1)


@pytest.mark.parametrize("stock", [False, True])
def test_a_client_that_sends_a_byte_at_a_time_is_cut_off_at_its_deadline(stock: bool) -> None:
    """Its time is the whole request's, not each read's: the standard library's handler, whose socket timeout
    each byte restarts, keeps serving it past it (its worker held)."""
    with serving(models_server(0.5, workers=1, stock=stock)) as address, connected(address) as dribbling:
        started = time.monotonic()
        for byte in b"GET /v1/models HTTP/1.0\r\n":
            try:
                dribbling.sendall(bytes([byte]))
            except OSError:  # cut off
                break
            time.sleep(0.05)
        cut = time.monotonic() - started < 1.0 and closed_by_server(dribbling, 0.1)
        if not stock:
            assert cut and get(address, "/v1/models")[0] == 200
        else:
            assert not cut and get(address, "/v1/models")[0] == 503


def test_a_slow_client_does_not_block_another_and_a_crowd_is_turned_away_at_once() -> None:
    with serving(models_server(2, workers=2)) as address, connected(address):
        started = time.monotonic()
        status, answer = get(address, "/v1/models")
        assert status == 200 and [model["id"] for model in answer["data"]] == ["org/a"]
        assert time.monotonic() - started < 0.5
    # Many clients that send nothing: two workers, two more threads turning clients away, and no more threads
    # however many come; a client beyond them all is closed unanswered, none waits.
    threads = threading.active_count()
    with serving(models_server(2, workers=2)) as address:
        crowd = [connected(address) for _ in range(20)]
        time.sleep(0.2)
        assert threading.active_count() - threads <= 1 + 2 + 2, threading.active_count() - threads
        with contextlib.suppress(urllib.error.URLError, ConnectionError):
            assert get(address, "/v1/models", timeout=1)[0] == 503
        for client in crowd:
            client.close()
    # The standard library's ThreadingHTTPServer starts a thread for each.
    threads = threading.active_count()
    unbounded = type("Unbounded", (ThreadingHTTPServer,), {"request_queue_size": ModelsServer.request_queue_size})
    with serving(unbounded(("127.0.0.1", 0), handler(Lister(*GATEWAY, list), 2))) as address:
        crowd = [connected(address) for _ in range(20)]
        deadline = time.monotonic() + 5
        while threading.active_count() - threads < 1 + 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert threading.active_count() - threads >= 1 + 20
        for client in crowd:
            client.close()


def test_a_refused_client_reads_the_503_and_when_to_try_again() -> None:
    with serving(models_server(2, workers=1)) as address, connected(address), connected(address) as second:
        time.sleep(0.1)
        second.sendall(b"GET /v1/models HTTP/1.0\r\n\r\n")
        second.settimeout(2)
        answer = b""
        while chunk := second.recv(4096):
            answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.0 503 ") and b"Retry-After: 1" in head, head
        assert json.loads(body)["error"]["code"] == 503
