"""InferenceService objects for unit tests, and their expansion keyed by kind/name."""

from __future__ import annotations

from typing import Any

from fusion_helm import InvalidSpec, parse_inference_service
from fusion_helm.expand import expand

NIXL = ["--kv-transfer-config", '{"kv_connector":"NixlConnector","kv_role":"kv_both"}']
"""A prefill or decode engine's KV transfer, as llm-d runs vLLM."""


def role(name: str, component_type: str = "decoder", replicas: int = 1, nodes: int = 1,
         **container: Any) -> dict[str, Any]:
    """A role of one vLLM container (a prefiller's and decoder's with NIXL KV transfer); CONTAINER's
    fields over those."""
    args = ["--model", "m", *(NIXL if component_type in ("prefiller", "decoder") else [])]
    spec = {"name": name, "componentType": component_type, "replicas": replicas,
            "template": {"spec": {"containers": [{"name": "vllm", "image": "vllm/vllm-openai:v0.11.0",
                                                  "args": args, **container}]}}}
    if nodes > 1:
        spec["multinode"] = {"nodeCount": nodes}
    return spec


REQUESTS_CPU = {"resources": {"requests": {"cpu": "100m"}}}
"""A container's fields that let a HorizontalPodAutoscaler on CPU (its default) read a utilization."""


WAITING_REQUESTS = [{"type": "Pods", "pods": {"metric": {"name": "vllm:num_requests_waiting"},
                                             "target": {"type": "AverageValue", "averageValue": "5"}}}]
"""A HorizontalPodAutoscaler's metrics that need no resource requests: the engines' queue per pod."""


def requesting_cpu(spec: dict[str, Any]) -> dict[str, Any]:
    """A role's SPEC (changed in place) with CPU requested by each of its template's containers."""
    for container in spec["template"]["spec"]["containers"]:
        resources = container.setdefault("resources", {})
        resources["requests"] = {**resources.get("requests", {}), **REQUESTS_CPU["resources"]["requests"]}
    return spec

SCRAPED_FROM_MONITORING = {"networkPolicy": {"prometheus": {"namespaceLabels": {
    "kubernetes.io/metadata.name": "monitoring"}}}}
"""Where a spec's PodMonitors ask Prometheus to scrape, its policies admit Prometheus's namespace."""


def service(*roles: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
            "metadata": {"name": "svc", "namespace": "llm", "labels": {"team": "a"}},
            "spec": {"roles": list(roles), **spec}}


def render(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{o['kind']}/{o['metadata']['name']}": o for o in expand(parse_inference_service(obj))}


def refusal(obj: dict[str, Any]) -> InvalidSpec:
    """The error OBJ's expansion refuses it with (the test fails where it renders)."""
    try:
        render(obj)
    except InvalidSpec as refused:
        return refused
    raise AssertionError("rendered, not refused")


def policies(podgroup: dict[str, Any]) -> dict[str, tuple[int, int, str]]:
    """subGroupPolicy name → (subGroupSize, minSubGroups, the replica indices it selects: "In 0,1" …)."""
    found = {}
    for policy in podgroup["spec"]["subGroupPolicy"]:
        expressions = policy["labelSelector"].get("matchExpressions", [])
        selects = " ".join(f"{e['operator']} {','.join(e['values'])}" for e in expressions) or "all"
        found[policy["name"]] = (policy["subGroupSize"], policy["minSubGroups"], selects)
    return found


SERVES_EVERYWHERE = "dp-hybrid"


def engine(image: str, *args: str, command: list[str] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "engine", "image": image, "args": list(args),
                                 "ports": [{"containerPort": 8000, "name": "http"}],
                                 "readinessProbe": {"httpGet": {"path": "/health", "port": "http"}},
                                 "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    if command:
        container["command"] = command
    return {"spec": {"containers": [container]}}


def worker_role(name: str, template: dict[str, Any], **multinode: Any) -> dict[str, Any]:
    return {"name": name, "componentType": "worker", "replicas": 1, "multinode": {"nodeCount": 2, **multinode},
            "template": template}


def every_bootstrap() -> list[dict[str, Any]]:
    """A worker role of each multi-node bootstrap, two nodes of one GPU each; the role named
    SERVES_EVERYWHERE serves from every node."""
    return [
        worker_role("ray", engine("vllm/vllm-openai:v0.11.0", "--model", "m", "--tensor-parallel-size", "2")),
        worker_role("vllm", engine("vllm/vllm-openai:v0.27.1", "m", "--tensor-parallel-size", "2")),
        worker_role("dp", engine("vllm/vllm-openai:v0.27.1", "m", "--enable-expert-parallel"),
                    bootstrap="vllm-data-parallel", dataParallel={"ranksPerNode": 1}),
        worker_role(SERVES_EVERYWHERE, engine("vllm/vllm-openai:v0.27.1", "m", "--enable-expert-parallel"),
                    bootstrap="vllm-data-parallel", dataParallel={"ranksPerNode": 1, "hybridLoadBalancing": True}),
        worker_role("sglang", engine("lmsysorg/sglang:v0.5.23", "--model-path", "m", "--tp", "2",
                                     command=["python3", "-m", "sglang.launch_server"])),
        worker_role("custom", engine("ghcr.io/ggml-org/llama.cpp:server", "-m", "/models/m.gguf",
                                     command=["/app/llama-server"]),
                    bootstrap="custom", workerTemplate={"spec": {"containers": [{
                        "name": "rpc", "image": "ghcr.io/ggml-org/llama.cpp:full", "command": ["/app/rpc-server"],
                        "args": ["--host", "0.0.0.0", "--port", "50052"], "ports": [{"containerPort": 50052}]}]}}),
    ]
