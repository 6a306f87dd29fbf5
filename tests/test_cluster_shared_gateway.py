"""Many models behind one Gateway: two services, installed by helm 3 and helm 4 in namespaces of their
own, join one Gateway (router.sharedGateway) with the body-based router installed once for it
(charts/fusioninfer-bbr, in the Gateway's namespace, which enforces the Pod Security Standard
"restricted"). Their pickers, the engines (llm-d's simulator) and the body-based router (built from the
Inference Extension v1.5.0) run as their pods; the gateway stand-in calls the body-based router first,
then routes on the HTTPRoutes as the API server has them (tests/serving.py, GatewayView).

Requests for model A reach only A's pods, B's only B's, a model nobody serves gets 404; a third release,
a canary of A at weight 10, takes 10 % of A's requests (measured over 1,000). Each shown failing without
its protection: routes without the model header match send B's requests to A; a gateway without the
body-based router routes nothing; a canary route without its POST match takes none."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster import Cluster, Release, eventually, ready_pods, release
from tests.helm import BBR_CHART, VALUES, Helm, make_helm
from tests.serving import SERVING, GatewayView, ServingKubelet, completion, routes_gateway, serving_values

GATEWAY_NAMESPACE, GATEWAY = "gateways", "inference-gateway"
SHARED = {"name": GATEWAY, "namespace": GATEWAY_NAMESPACE}
MODEL_A, MODEL_B = "org/model-a", "org/model-b"
CANARY_REQUESTS, CANARY_WEIGHT = 1000, 10


def service_values(tmp_path: Path, release_name: str, model: str, **router: Any) -> Path:
    """A monolithic service of two replicas serving MODEL, its router on the shared Gateway with one picker
    run as its pod."""
    values = yaml.safe_load(serving_values(VALUES / "story1-monolithic-qwen3-8b.yaml", tmp_path, endpointPicker={
        "replicas": 1, "podAnnotations": SERVING}, sharedGateway=SHARED, **router).read_text())
    values.pop("name")  # the release's name
    [worker, router_role] = values["roles"]
    worker["replicas"] = 2
    worker["template"]["spec"]["containers"][0]["args"] = ["--model", model]
    router_role.pop("httproute")  # the shared Gateway's
    path = tmp_path / f"{release_name}.yaml"
    path.write_text(yaml.safe_dump(values))
    return path


@contextlib.contextmanager
def body_router(cluster: Cluster, helm: Helm) -> Iterator[None]:
    """The Gateway, and its body-based router installed from its chart into the Gateway's namespace, which
    enforces "restricted": its pod is admitted and runs (Ready) before this yields."""
    kubectl = cluster.control_plane.kubectl
    kubectl("create", "namespace", GATEWAY_NAMESPACE)
    kubectl("label", "namespace", GATEWAY_NAMESPACE, "pod-security.kubernetes.io/enforce=restricted",
            "pod-security.kubernetes.io/enforce-version=latest")
    kubectl("apply", "-f", "-", stdin=yaml.safe_dump({
        "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
        "metadata": {"name": GATEWAY, "namespace": GATEWAY_NAMESPACE},
        "spec": {"gatewayClassName": "stand-in", "listeners": [{
            "name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": {"namespaces": {"from": "All"}}}]}}))
    helm.run("install", "gateway", BBR_CHART, "--namespace", GATEWAY_NAMESPACE, "--kubeconfig", cluster.kubeconfig,
             "--set", "replicas=1", "--set-json", f'podAnnotations={{"{next(iter(SERVING))}": "custom"}}')
    try:
        ready_pods(cluster, GATEWAY_NAMESPACE, 1)
        yield
    finally:
        helm.run("uninstall", "gateway", "--namespace", GATEWAY_NAMESPACE, "--kubeconfig", cluster.kubeconfig,
                 "--wait")
        kubectl("delete", "namespace", GATEWAY_NAMESPACE, "--wait=false")


def ask(gateway: str, model: str, prompt: str = "hello") -> tuple[int, dict[str, str], dict[str, Any]]:
    return completion(gateway, {"model": model, "prompt": prompt, "max_tokens": 2})


def pools_reached(gateway: str, model: str, requests: int) -> Counter[str]:
    """The pool each of REQUESTS requests for MODEL went to (eight clients at once); "<status>" for one that
    failed."""
    def one(number: int) -> str:
        status, headers, _ = ask(gateway, model, f"request {number}")
        return headers.get("x-stand-in-pool", "") if status == 200 else str(status)
    with ThreadPoolExecutor(8) as clients:
        return Counter(clients.map(one, range(requests)))


def through(cluster: Cluster, tmp_path: Path, name: str, **view: Any) -> contextlib.AbstractContextManager[str]:
    """A gateway stand-in over the shared Gateway as VIEW's options show it: its address."""
    @contextlib.contextmanager
    def started() -> Iterator[str]:
        workdir = tmp_path / name
        workdir.mkdir()
        with GatewayView(cluster, GATEWAY_NAMESPACE, GATEWAY, workdir, **view) as seen, routes_gateway(seen) as address:
            yield address
    return started()


def without(field: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A route with FIELD removed from each of its matches ("headers": no model match; "method")."""
    def change(route: dict[str, Any]) -> dict[str, Any]:
        rules = [{**rule, "matches": [{k: v for k, v in match.items() if k != field} for match in rule["matches"]]}
                 for rule in route["spec"]["rules"]]
        return {**route, "spec": {**route["spec"], "rules": rules}}
    return change


def test_services_share_one_gateway_routed_by_model(cluster: Cluster, helm4: Helm, serving_kubelet: ServingKubelet,
                                                    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    helm3 = make_helm(3, tmp_path_factory.mktemp("shared-gateway-helm3"))
    pool_a, pool_b, pool_canary = "shared-a/a-router", "shared-b/b-router", "shared-a/canary-router"
    with body_router(cluster, helm4), release(cluster, helm3, "a", "shared-a") as a, \
            release(cluster, helm4, "b", "shared-b") as b:
        a.install(service_values(tmp_path, "a", MODEL_A))
        b.install(service_values(tmp_path, "b", MODEL_B))
        ready_pods(cluster, "shared-a", 3)
        ready_pods(cluster, "shared-b", 3)
        pods = {namespace: {pod.address for pod in serving_kubelet.served(namespace) if pod.role == "inference"}
                for namespace in ("shared-a", "shared-b")}

        with through(cluster, tmp_path, "routed") as gateway:
            eventually("both services routed",
                       lambda: all(ask(gateway, model)[0] == 200 for model in (MODEL_A, MODEL_B)), timeout=60,
                       describe=lambda: f"{ask(gateway, MODEL_A)} {ask(gateway, MODEL_B)}")
            for model, namespace, pool in ((MODEL_A, "shared-a", pool_a), (MODEL_B, "shared-b", pool_b)):
                for number in range(20):
                    status, headers, answer = ask(gateway, model, f"question {number}")
                    assert status == 200, (status, answer)
                    assert headers["x-stand-in-pool"] == pool and answer["model"] == model, (headers, answer)
                    assert headers["x-stand-in-destination"].rpartition(":")[0] in pods[namespace], headers
            status, _, answer = ask(gateway, "org/nobody-serves-this")
            assert status == 404, (status, answer)

        # Without the model match, the older route (A's) takes every request: B's reach A.
        with through(cluster, tmp_path, "unmatched", change=without("headers")) as gateway:
            eventually("routes without model matches", lambda: ask(gateway, MODEL_A)[0] == 200, timeout=60)
            assert pools_reached(gateway, MODEL_B, 20) != Counter({pool_b: 20})
        # Without the body-based router nothing sets the header the routes match: nothing is routed.
        with through(cluster, tmp_path, "no-body-router", body_router=False) as gateway:
            assert pools_reached(gateway, MODEL_A, 10) == Counter({"404": 10})

        # A canary of A, at weight 10, helm 4: a tenth of A's requests.
        # (A's release, on leaving, waits for every pod of the namespace to go: the canary's too.)
        canary = Release(cluster, helm4, "canary", "shared-a")
        canary.install(service_values(tmp_path, "canary", MODEL_A,
                                      canaryOf={"inferencePool": "a-router", "weight": CANARY_WEIGHT}))
        try:
            ready_pods(cluster, "shared-a", 6)
            with through(cluster, tmp_path, "canary") as gateway:
                eventually("the canary's pool routed", lambda: pools_reached(gateway, MODEL_A, 20)[pool_canary] > 0,
                           timeout=60)
                reached = pools_reached(gateway, MODEL_A, CANARY_REQUESTS)
                assert set(reached) == {pool_a, pool_canary}, reached
                share = 100 * reached[pool_canary] / CANARY_REQUESTS
                print(f"canary: {reached[pool_canary]} of {CANARY_REQUESTS} requests ({share:.1f} %)")
                assert abs(share - CANARY_WEIGHT) <= 3, reached
                assert pools_reached(gateway, MODEL_B, 20) == Counter({pool_b: 20})
            # Without its POST match the canary's route ties with A's older one, and A's wins every request.
            with through(cluster, tmp_path, "canary-unmatched", change=without("method")) as gateway:
                eventually("routes", lambda: ask(gateway, MODEL_A)[0] == 200, timeout=60)
                assert pools_reached(gateway, MODEL_A, 100) == Counter({pool_a: 100})
        finally:
            canary.uninstall()
