"""InferenceService objects for unit tests, and their expansion keyed by kind/name."""

from __future__ import annotations

from typing import Any

from fusion_helm import parse_inference_service
from fusion_helm.expand import expand


def role(name: str, component_type: str = "decoder", replicas: int = 1, nodes: int = 1,
         **container: Any) -> dict[str, Any]:
    spec = {"name": name, "componentType": component_type, "replicas": replicas,
            "template": {"spec": {"containers": [{"name": "vllm", "image": "vllm/vllm-openai:v0.11.0",
                                                  "args": ["--model", "m"], **container}]}}}
    if nodes > 1:
        spec["multinode"] = {"nodeCount": nodes}
    return spec


def service(*roles: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
            "metadata": {"name": "svc", "namespace": "llm", "labels": {"team": "a"}},
            "spec": {"roles": list(roles), **spec}}


def render(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{o['kind']}/{o['metadata']['name']}": o for o in expand(parse_inference_service(obj))}


def policies(podgroup: dict[str, Any]) -> dict[str, tuple[int, int, str]]:
    """subGroupPolicy name → (subGroupSize, minSubGroups, the replica indices it selects: "In 0,1" …)."""
    found = {}
    for policy in podgroup["spec"]["subGroupPolicy"]:
        expressions = policy["labelSelector"].get("matchExpressions", [])
        selects = " ".join(f"{e['operator']} {','.join(e['values'])}" for e in expressions) or "all"
        found[policy["name"]] = (policy["subGroupSize"], policy["minSubGroups"], selects)
    return found
