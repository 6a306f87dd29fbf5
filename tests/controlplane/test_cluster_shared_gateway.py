"""Many models behind one Gateway: two services, installed by helm 3 and helm 4 in namespaces of their
own, join one Gateway (router.sharedGateway) with the body-based router installed once for it
(charts/fusioninfer-bbr, in the Gateway's namespace, which enforces the Pod Security Standard
"restricted"). Their pickers, the engines (llm-d's simulator) and the body-based router (built from the
Inference Extension v1.5.0) run as their pods; the gateway stand-in calls the body-based router first,
then routes on the HTTPRoutes as the API server has them (tests/controlplane/watch.py, GatewayView).

Requests for model A reach only A's pods, B's only B's, a model nobody serves gets 404, and the Gateway's
one GET /v1/models (the chart's lister, run as its pod, told to name the services) lists both with their
services; a third release in B's namespace claiming A's model name is refused by its pre-install check (run
for real, as its own ServiceAccount listing every namespace's routes), naming A's route, and nothing of it is
applied; a fourth, a canary of A at weight 10, passes the same check (its hooks run for real too, its status
saying it owns its names), takes 10 % of A's requests (measured over 2,000) and is listed beside A. Each
shown failing without its protection: routes without the model header match send B's requests to A; a
gateway without the body-based router routes nothing; without the lister's route /v1/models is a 404; a
canary route without its POST match takes none."""

from __future__ import annotations

import contextlib
import json
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.controlplane.clients import completion, routes_gateway
from tests.controlplane.cluster import Cluster, Release, eventually, ready_pods, release
from tests.controlplane.hook_kubelet import BBR_LABEL, MODELS_LABEL, REAL_HOOKS, HookKubelet
from tests.controlplane.network_policies import Enforcer, Outcome, connect
from tests.controlplane.scenarios import serving_values
from tests.controlplane.serving import SERVING, ServingKubelet
from tests.controlplane.watch import BBR_GRPC_PORT, GatewayView
from tests.helm import BBR_CHART, CHART, VALUES, Helm, make_helm

# The service's NetworkPolicies enforced while it serves (tests/controlplane/network_policies.py).
pytestmark = pytest.mark.usefixtures("network_policies")

GATEWAY = "inference-gateway"
GATEWAYS = "gateways"
"""The shared Gateway's namespace."""
MODEL_A, MODEL_B = "org/model-a", "org/model-b"
POOL_A, POOL_B, POOL_CANARY = "shared-a/a-router", "shared-b/b-router", "shared-a/canary-router"
CANARY_REQUESTS, CANARY_WEIGHT = 2000, 10
"""Two thousand requests: a 10 % share of them varies by 0.7 points (one standard deviation), the ±3 allowed
is over four."""


def service_values(tmp_path: Path, release_name: str, gateway_namespace: str, args: list[str], **router: Any
                   ) -> Path:
    """A monolithic service of two replicas whose engines take ARGS, its router on the shared Gateway of
    namespace with one picker run as its pod."""
    picker = {"replicas": 1, "podAnnotations": SERVING, **router.pop("endpointPicker", {})}
    values = yaml.safe_load(serving_values(VALUES / "story1-monolithic-qwen3-8b.yaml", tmp_path, endpointPicker=picker,
                                           sharedGateway={"name": GATEWAY, "namespace": gateway_namespace},
                                           **router).read_text())
    values.pop("name")  # the release's name
    [worker, router_role] = values["roles"]
    worker["replicas"] = 2
    worker["template"]["spec"]["containers"][0]["args"] = args
    router_role.pop("httproute")  # the shared Gateway's
    path = tmp_path / f"{release_name}.yaml"
    path.write_text(yaml.safe_dump(values))
    return path


def with_real_hooks(values: Path) -> Path:
    """VALUES with the chart's hook Jobs run for real (tests.controlplane.hook_kubelet), the status written once."""
    changed = yaml.safe_load(values.read_text())
    changed["hooks"] = {**REAL_HOOKS["hooks"], "statusWaitSeconds": 0}
    path = values.with_name(f"{values.stem}-hooks.yaml")
    path.write_text(yaml.safe_dump(changed))
    return path


@contextlib.contextmanager
def body_router(cluster: Cluster, helm: Helm, namespace: str) -> Iterator[None]:
    """The Gateway, and its body-based router and /v1/models installed from their chart into the Gateway's
    NAMESPACE, which enforces "restricted": their pods are admitted and run (Ready) before this yields."""
    kubectl = cluster.control_plane.kubectl
    kubectl("create", "namespace", namespace)
    kubectl("label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted",
            "pod-security.kubernetes.io/enforce-version=latest")
    kubectl("apply", "-f", "-", stdin=yaml.safe_dump({
        "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
        "metadata": {"name": GATEWAY, "namespace": namespace},
        "spec": {"gatewayClassName": "stand-in", "listeners": [{
            "name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": {"namespaces": {"from": "All"}}}]}}))
    helm.run("install", "gateway", BBR_CHART, "--namespace", namespace, "--kubeconfig", cluster.kubeconfig,
             "--set", "replicas=1", "--set", "models.replicas=1", "--set", "models.owners=true",
             "--set-json", f'podAnnotations={{"{next(iter(SERVING))}": "custom"}}')
    try:
        ready_pods(cluster, namespace, 2)  # the router's and the lister's
        yield
    finally:
        helm.run("uninstall", "gateway", "--namespace", namespace, "--kubeconfig", cluster.kubeconfig,
                 "--wait")
        kubectl("delete", "namespace", namespace, "--wait=false")


def ask(gateway: str, model: str, prompt: str = "hello") -> tuple[int, dict[str, str], dict[str, Any]]:
    return completion(gateway, {"model": model, "prompt": prompt, "max_tokens": 2})


def models_listed(gateway: str) -> dict[str, str]:
    """The Gateway's GET /v1/models: each model's services (owned_by); {"<status>": body} if it failed."""
    try:
        with urllib.request.urlopen(f"http://{gateway}/v1/models", timeout=10) as answer:
            return {model["id"]: model["owned_by"] for model in json.loads(answer.read())["data"]}
    except urllib.error.HTTPError as error:
        return {str(error.code): error.read().decode()}


def pools_reached(gateway: str, model: str, requests: int) -> Counter[str]:
    """The pool each of REQUESTS requests for MODEL went to (eight clients at once); "<status>" for one that
    failed."""
    def one(number: int) -> str:
        status, headers, _ = ask(gateway, model, f"request {number}")
        return headers.get("x-stand-in-pool", "") if status == 200 else str(status)
    with ThreadPoolExecutor(8) as clients:
        return Counter(clients.map(one, range(requests)))


@contextlib.contextmanager
def through(cluster: Cluster, gateway_namespace: str, workdir: Path, **view: Any) -> Iterator[str]:
    """A gateway stand-in over the shared Gateway of GATEWAY_NAMESPACE as VIEW's options show it: its address."""
    workdir.mkdir()
    with GatewayView(cluster, gateway_namespace, GATEWAY, workdir, **view) as seen, routes_gateway(seen) as address:
        yield address


def without(field: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A route with FIELD removed from each of its matches ("headers": no model match; "method")."""
    def change(route: dict[str, Any]) -> dict[str, Any]:
        rules = [{**rule, "matches": [{k: v for k, v in match.items() if k != field} for match in rule["matches"]]}
                 for rule in route["spec"]["rules"]]
        return {**route, "spec": {**route["spec"], "rules": rules}}
    return change


def load_adapter(gateway: str) -> tuple[int, str | None]:
    """POST /v1/load_lora_adapter through the gateway, its body naming A's model: the status, and the pool it
    reached (None: none)."""
    body = {"model": MODEL_A, "lora_name": "planted", "lora_path": "/adapters/planted"}
    status, headers, _ = completion(gateway, body, path="/v1/load_lora_adapter")
    return status, headers.get("x-stand-in-pool")


def without_rules(name: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Route NAME with no rules; the others as they are."""
    def change(route: dict[str, Any]) -> dict[str, Any]:
        return {**route, "spec": {**route["spec"], "rules": []}} if route["metadata"]["name"] == name else route
    return change


def refused_by_its_check(cluster: Cluster, helm: Helm, hook_kubelet: HookKubelet, name: str, namespace: str,
                         values: Path, reasons: tuple[str, ...], routes: list[str]) -> None:
    """Installing release NAME of VALUES fails on its pre-install check, run for real, whose error gives each of
    REASONS; nothing of it is applied (the namespace's HTTPRoutes stay ROUTES)."""
    release = Release(cluster, helm, name, namespace)
    try:
        done = helm.run("install", name, CHART, "-f", values, "--post-renderer", "fusion-postrender", "--namespace",
                        namespace, "--kubeconfig", cluster.kubeconfig, check=False)
        assert done.returncode != 0, done.stdout
        [run] = [run for run in hook_kubelet.outputs(namespace)
                 if "fusion_helm.programs.check" in map(str, run.args) and run.returncode]
        assert all(reason in run.stderr for reason in reasons), run.stderr
        found = cluster.custom(("gateway.networking.k8s.io", "v1", "httproutes"), namespace)
        assert [route["metadata"]["name"] for route in found] == routes, f"nothing of {name} applied"
    finally:
        if release.exists():
            release.uninstall()


def refused_claim(cluster: Cluster, helm: Helm, hook_kubelet: HookKubelet, tmp_path: Path) -> None:
    """A release of B's namespace whose engines serve A's model: its check refuses it naming A's route."""
    refused_by_its_check(
        cluster, helm, hook_kubelet, "thief", "shared-b",
        with_real_hooks(service_values(tmp_path, "thief", GATEWAYS, ["--model", MODEL_A])),
        (f"check_prerequisites: model name {MODEL_A} is already matched on Gateway {GATEWAYS}/{GATEWAY} by "
         "HTTPRoute shared-a/a-router, another service's: requests for it would reach whichever route ranks first",),
        ["b-router"])


def refused_canary_typo(cluster: Cluster, helm: Helm, hook_kubelet: HookKubelet, tmp_path: Path) -> None:
    """A canary of A naming A's service where its pool belongs (`a`, not `a-router`): its check refuses it
    naming the pools there; its route would have sent 90 % of A's requests to no pool."""
    refused_by_its_check(
        cluster, helm, hook_kubelet, "typo", "shared-a",
        with_real_hooks(service_values(tmp_path, "typo", GATEWAYS, ["--model", MODEL_A],
                                       canaryOf={"inferencePool": "a", "weight": CANARY_WEIGHT})),
        ("check_prerequisites: InferencePool a does not exist in namespace shared-a, and canaryOf.inferencePool "
         "names it", "(pools there: a-router)"),
        ["a-router"])


def test_services_share_one_gateway_routed_by_model(cluster: Cluster, helm4: Helm, serving_kubelet: ServingKubelet,
                                                    hook_kubelet: HookKubelet, network_policies: Enforcer,
                                                    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    helm3 = make_helm(3, tmp_path_factory.mktemp("shared-gateway-helm3"))
    with body_router(cluster, helm4, GATEWAYS), release(cluster, helm3, "a", "shared-a") as a, \
            release(cluster, helm4, "b", "shared-b") as b:
        a.install(service_values(tmp_path, "a", GATEWAYS, ["--model", MODEL_A]))
        b.install(service_values(tmp_path, "b", GATEWAYS, ["--model", MODEL_B]))
        ready_pods(cluster, "shared-a", 3)
        ready_pods(cluster, "shared-b", 3)
        pods = {namespace: {pod.address for pod in serving_kubelet.served(namespace) if pod.role == "inference"}
                for namespace in ("shared-a", "shared-b")}

        with through(cluster, GATEWAYS, tmp_path / "routed") as gateway:
            eventually("both services routed",
                       lambda: all(ask(gateway, model)[0] == 200 for model in (MODEL_A, MODEL_B)), timeout=60,
                       describe=lambda: f"{ask(gateway, MODEL_A)} {ask(gateway, MODEL_B)}")
            for model, namespace, pool in ((MODEL_A, "shared-a", POOL_A), (MODEL_B, "shared-b", POOL_B)):
                for number in range(20):
                    status, headers, answer = ask(gateway, model, f"question {number}")
                    assert status == 200, (status, answer)
                    assert headers["x-stand-in-pool"] == pool and answer["model"] == model, (headers, answer)
                    assert headers["x-stand-in-destination"].rpartition(":")[0] in pods[namespace], headers
            status, _, answer = ask(gateway, "org/nobody-serves-this")
            assert status == 404, (status, answer)
            # Only the inference paths: a request to load an adapter into A's engines, its body naming A's model,
            # matches no route.
            assert load_adapter(gateway) == (404, None)
            # One /v1/models for the Gateway: every model behind it, with the service that serves it.
            assert models_listed(gateway) == {MODEL_A: "shared-a/a", MODEL_B: "shared-b/b"}
        # The Gateway's namespace alone reaches its body-based router: the lister's pod there does, a serving
        # pod of another namespace does not.
        gateway_pods = {pod.labels[BBR_LABEL[0]]: pod for pod in serving_kubelet.served(GATEWAYS)}
        router, lister = gateway_pods[BBR_LABEL[1]], gateway_pods[MODELS_LABEL[1]]
        [serving_a, *_] = [pod for pod in serving_kubelet.served("shared-a") if pod.role == "inference"]
        network_policies.sync()
        assert connect(lister, router.address, BBR_GRPC_PORT) is Outcome.CONNECTED
        assert connect(serving_a, router.address, BBR_GRPC_PORT) is Outcome.TIMED_OUT

        # Without the lister's route, the Gateway has no /v1/models: no service's route matches a request
        # that names no model.
        with through(cluster, GATEWAYS, tmp_path / "unlisted", change=without_rules("gateway-models")) as gateway:
            eventually("services routed", lambda: ask(gateway, MODEL_A)[0] == 200, timeout=60)
            assert list(models_listed(gateway)) == ["404"]

        # Without the routes' paths the same request reaches A's pool, and its engines.
        with through(cluster, GATEWAYS, tmp_path / "pathless", change=without("path")) as gateway:
            eventually("routes without paths", lambda: ask(gateway, MODEL_A)[0] == 200, timeout=60)
            assert load_adapter(gateway)[1] == POOL_A

        # Without the model match, the older route (A's) takes every request: B's reach A.
        with through(cluster, GATEWAYS, tmp_path / "unmatched", change=without("headers")) as gateway:
            eventually("routes without model matches", lambda: ask(gateway, MODEL_A)[0] == 200, timeout=60)
            assert pools_reached(gateway, MODEL_B, 20) != Counter({POOL_B: 20})
        # Without the body-based router nothing sets the header the routes match: nothing is routed.
        with through(cluster, GATEWAYS, tmp_path / "no-body-router", body_router=False) as gateway:
            assert pools_reached(gateway, MODEL_A, 10) == Counter({"404": 10})

        # A model name has one owner: B's namespace cannot take A's.
        refused_claim(cluster, helm4, hook_kubelet, tmp_path)
        # A canary that names A's service for its pool is refused before anything is applied.
        refused_canary_typo(cluster, helm4, hook_kubelet, tmp_path)
        # A canary of A shares its name.
        canary_takes_its_share(cluster, helm4, tmp_path)


def canary_takes_its_share(cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    """A canary of A, at weight 10: a tenth of A's requests. Its check, run for real, lets it share A's
    name, and its status says it owns its names with A. (A's release, on leaving, waits for every pod of the
    namespace to go: the canary's too.)"""
    canary = Release(cluster, helm, "canary", "shared-a")
    canary.install(with_real_hooks(service_values(tmp_path, "canary", GATEWAYS, ["--model", MODEL_A],
                                                  canaryOf={"inferencePool": "a-router", "weight": CANARY_WEIGHT})))
    try:
        [service] = [s for s in cluster.custom(("fusioninfer.io", "v1alpha1", "inferenceservices"), "shared-a")
                     if s["metadata"]["name"] == "canary"]
        owned = {c["type"]: c for c in service["status"]["conditions"]}["ModelNamesOwned"]
        assert (owned["status"], owned["reason"]) == ("True", "Owned"), owned
        ready_pods(cluster, "shared-a", 6)
        with through(cluster, GATEWAYS, tmp_path / "canary") as gateway:
            eventually("the canary's pool routed", lambda: pools_reached(gateway, MODEL_A, 20)[POOL_CANARY] > 0,
                       timeout=60)
            reached = pools_reached(gateway, MODEL_A, CANARY_REQUESTS)
            assert set(reached) == {POOL_A, POOL_CANARY}, reached
            share = 100 * reached[POOL_CANARY] / CANARY_REQUESTS
            print(f"canary: {reached[POOL_CANARY]} of {CANARY_REQUESTS} requests ({share:.1f} %)")
            assert abs(share - CANARY_WEIGHT) <= 3, reached
            assert pools_reached(gateway, MODEL_B, 20) == Counter({POOL_B: 20})
            assert models_listed(gateway) == {MODEL_A: "shared-a/a,shared-a/canary", MODEL_B: "shared-b/b"}
        # Without its POST match the canary's route ties with A's older one, and A's wins every request.
        with through(cluster, GATEWAYS, tmp_path / "canary-unmatched", change=without("method")) as gateway:
            eventually("routes", lambda: ask(gateway, MODEL_A)[0] == 200, timeout=60)
            assert pools_reached(gateway, MODEL_A, 100) == Counter({POOL_A: 100})
    finally:
        canary.uninstall()


def lora(name: str) -> str:
    """A LoRA module as vLLM (and llm-d's simulator) take one in JSON."""
    return json.dumps({"name": name, "path": f"/adapters/{name}"})


def asked_for(gateway: str, number: int, model: str = "sql") -> str:
    """The model the engine was asked for when a client asked for MODEL ("<status>" for a failed request)."""
    status, headers, _ = ask(gateway, model, f"query {number}")
    return headers.get("x-stand-in-model", "") if status == 200 else str(status)


REWRITING = {"llm-d-router": ("llm-d.ai", 3), "gie-v1.5": ("inference.networking.x-k8s.io", 4)}
"""The pickers that apply rewrites: the group they read them in, and the helm that installs the service."""


@pytest.mark.parametrize("generation", sorted(REWRITING))
def test_a_rewrite_splits_an_adapter_s_requests_between_its_versions(
        cluster: Cluster, generation: str, serving_kubelet: ServingKubelet, tmp_path: Path,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """Inside one service: requests for "sql" are rewritten by the picker to the adapter's two versions,
    90/10, as the InferenceModelRewrite says; the engines (the simulator, with both adapters loaded) are
    asked for the version chosen. Without the rewrite neither version is asked for."""
    group, major = REWRITING[generation]
    helm = make_helm(major, tmp_path_factory.mktemp(f"rewrite-helm{major}"))
    gateways, namespace = f"rewrite-gateways-{generation}".replace(".", "-"), f"rewrite-{generation}".replace(".", "-")
    args = ["--model", "org/base", "--enable-lora", "--max-loras", "2", "--lora-modules", lora("sql-v1"),
            lora("sql-v2")]
    rewrites = [{"model": "sql", "targets": [{"model": "sql-v1", "weight": 90}, {"model": "sql-v2", "weight": 10}]}]
    with body_router(cluster, helm, gateways), release(cluster, helm, "svc", namespace) as installed:
        installed.install(service_values(tmp_path, "svc", gateways, args, modelRewrites=rewrites,
                                         endpointPicker={"generation": generation}))
        ready_pods(cluster, namespace, 3)
        with through(cluster, gateways, tmp_path / "rewritten") as gateway:
            eventually("the rewrite applied", lambda: asked_for(gateway, 0) in ("sql-v1", "sql-v2"), timeout=60,
                       describe=lambda: str(ask(gateway, "sql")))
            with ThreadPoolExecutor(8) as clients:
                answers = Counter(clients.map(lambda n: asked_for(gateway, n), range(CANARY_REQUESTS)))
            share = 100 * answers["sql-v2"] / CANARY_REQUESTS
            print(f"rewrite: {answers['sql-v2']} of {CANARY_REQUESTS} requests to sql-v2 ({share:.1f} %)")
            assert set(answers) == {"sql-v1", "sql-v2"}, answers
            assert abs(share - 10) <= 3, answers
            # The client sees the name it asked for; each version is served by its own name too (the route
            # matches the adapters the engines load).
            assert ask(gateway, "sql")[2]["model"] == "sql"
            assert asked_for(gateway, 0, "sql-v2") == "sql-v2"

            # Without the rewrite no request reaches either version: "sql" itself is no adapter the engines loaded.
            cluster.control_plane.kubectl("delete", f"inferencemodelrewrites.{group}", "svc-router", "-n", namespace)
            eventually("the rewrite gone", lambda: asked_for(gateway, 0) not in ("sql-v1", "sql-v2"), timeout=60)
            unrewritten = Counter(asked_for(gateway, n) for n in range(20))
            print(f"without the rewrite: {dict(unrewritten)}")
            assert not {"sql-v1", "sql-v2"} & set(unrewritten), unrewritten
