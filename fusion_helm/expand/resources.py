"""What a pod requests, as the scheduler counts it, in exact quantities."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fusion_helm.expand.quantity import ZERO, Quantity, parse_quantity

Resources = dict[str, Quantity]


def container_requests(container: Mapping[str, Any]) -> Resources:
    """Requests, where a resource given only as a limit counts as requested at that limit."""
    resources = container.get("resources") or {}
    merged = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
    return {name: parse_quantity(value) for name, value in merged.items()}


def pod_requests(pod_spec: Mapping[str, Any]) -> Resources:
    """The pod's effective request: app containers and sidecars run together, plain init
    containers one at a time (beside the sidecars started before them), plus pod overhead."""
    running = add(container_requests(c) for c in pod_spec.get("containers", []))
    sidecars: Resources = {}
    peak_init: Resources = {}
    for container in pod_spec.get("initContainers", []):
        requests = container_requests(container)
        if container.get("restartPolicy") == "Always":
            sidecars = add([sidecars, requests])
            peak_init = maximum(peak_init, sidecars)
        else:
            peak_init = maximum(peak_init, add([sidecars, requests]))
    overhead = {name: parse_quantity(v) for name, v in (pod_spec.get("overhead") or {}).items()}
    return add([maximum(add([running, sidecars]), peak_init), overhead])


def add(items: Iterable[Resources]) -> Resources:
    total: Resources = {}
    for resources in items:
        for name, quantity in resources.items():
            total[name] = total.get(name, ZERO) + quantity
    return total


def scale(resources: Resources, factor: int) -> Resources:
    return {name: quantity * factor for name, quantity in resources.items()}


def maximum(a: Resources, b: Resources) -> Resources:
    return {name: max(a.get(name, ZERO), b.get(name, ZERO), key=lambda q: q.value)
            for name in {**a, **b}}


def to_manifest(resources: Resources) -> dict[str, str]:
    return {name: str(resources[name]) for name in sorted(resources)}
