"""A frontend role that serves, helm 3 and 4: SGLang's router (PyPI's sglang-router, run by
tests/controlplane/serving.py in its pod's network with its ServiceAccount's token) finds the serving pods
through the API server by the labels and port the expansion gives it, and requests sent to it reach every
replica's engine (llm-d's vLLM simulator). Shown failing without what it proves: the same router given a
selector the serving pods do not carry finds none and answers nothing."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from tests.controlplane.clients import metrics, total
from tests.controlplane.cluster import Cluster, eventually, ready_pods, release
from tests.controlplane.serving import SERVING, ServingKubelet
from tests.helm import Helm

MODEL = "Qwen/Qwen3-8B"
ROUTER_PORT = 30000
SUCCESS = "vllm:request_success_total"


def values(tmp_path: Path, *router_args: str) -> Path:
    engine = {"name": "vllm", "image": "vllm/vllm-openai:v0.32.0", "args": [MODEL],
              "ports": [{"containerPort": 8000, "name": "http"}],
              "readinessProbe": {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 2}}
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump({"roles": [
        {"name": "worker", "componentType": "worker", "replicas": 2,
         "template": {"metadata": {"annotations": SERVING}, "spec": {"containers": [engine]}}},
        {"name": "gateway", "componentType": "frontend", "replicas": 1, "frontend": {"kind": "sglang-router"},
         "template": {"metadata": {"annotations": SERVING}, "spec": {"containers": [
             {"name": "router", "image": "lmsysorg/sglang:v0.5.23",
              "args": ["--policy", "round_robin", "--health-check-interval-secs", "1", *router_args]}]}}},
    ]}))
    return path


def ask(address: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"http://{address}:{ROUTER_PORT}/v1/completions", method="POST", headers={"Content-Type": "application/json"},
        data=json.dumps({"model": MODEL, "prompt": "hello", "max_tokens": 4}).encode())
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, {"error": error.read().decode(errors="replace")}
    except OSError as error:
        return 0, {"error": repr(error)}


def test_sglang_s_router_finds_every_replica_and_serves_through_them(
        cluster: Cluster, helm: Helm, serving_kubelet: ServingKubelet, tmp_path: Path) -> None:
    namespace = f"frontend-helm{helm.major}"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(values(tmp_path))
        ready_pods(cluster, namespace, 3)
        [router] = [pod for pod in serving_kubelet.served(namespace) if pod.role == "gateway"]
        engines = [pod for pod in serving_kubelet.served(namespace) if pod.role == "worker"]

        def answered() -> bool:
            return ask(router.address)[0] == 200
        eventually("an answer through the frontend", answered, timeout=60,
                   describe=lambda: f"{ask(router.address)}\n{router.log('router')[-3000:]}")
        before = {pod.address: total(metrics(pod.address, 8000), SUCCESS) for pod in engines}
        answers = [ask(router.address) for _ in range(6)]
        assert [status for status, _ in answers] == [200] * 6, answers
        after = {pod.address: total(metrics(pod.address, 8000), SUCCESS) for pod in engines}
        # Round robin over the two replicas it found: each engine answered its share.
        assert {address: after[address] - before[address] for address in after} == {
            pod.address: 3.0 for pod in engines}


def test_a_router_whose_selector_matches_no_serving_pod_serves_nothing(
        cluster: Cluster, helm: Helm, serving_kubelet: ServingKubelet, tmp_path: Path) -> None:
    """The protection's proof: the router as rendered, but its selector one label the pods do not carry."""
    if helm.major == 3:
        return  # the router's behaviour, not helm's: once is enough
    namespace = "frontend-unmatched"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(values(tmp_path))
        ready_pods(cluster, namespace, 3)
        [deployment] = cluster.apps.list_namespaced_deployment(namespace).items
        args = deployment.spec.template.spec.containers[0].args
        selector = args.index("--selector")
        patched = [*args[:selector + 1], "fusioninfer.io/service=another", *args[selector + 2:]]
        cluster.control_plane.kubectl("patch", "deployment", deployment.metadata.name, "-n", namespace, "--type=json",
                                      "-p", json.dumps([{"op": "replace",
                                                         "path": "/spec/template/spec/containers/0/args",
                                                         "value": patched}]))

        def rolled() -> Any:
            routers = [pod for pod in serving_kubelet.served(namespace) if pod.role == "gateway"]
            return routers[0] if len(routers) == 1 and "fusioninfer.io/service=another" in \
                routers[0].argv.get("router", []) else None
        router = eventually("the router with the other selector", rolled, timeout=60)
        ready_pods(cluster, namespace, 3)
        status, answer = eventually("the router up", lambda: (lambda a: a if a[0] else None)(ask(router.address)))
        assert status != 200, answer
