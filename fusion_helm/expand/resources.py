"""What a pod requests, as the scheduler counts it, in exact quantities."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from fusion_helm.expand.quantity import ZERO, Quantity, parse_quantity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

Resources = dict[str, Quantity]
Path = tuple[str | int, ...]


class QuantityError(ValueError):
    """A quantity in a pod spec that is not one, or is negative: at PATH (within the pod spec)."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path


def _quantities(values: Mapping[str, Any], path: Path) -> Resources:
    out = {}
    for name, value in values.items():
        try:
            quantity = parse_quantity(value)
        except ValueError as error:
            raise QuantityError((*path, name), str(error)) from None
        if quantity.nanos < 0:
            raise QuantityError((*path, name), f"must not be negative, got {value}")
        out[name] = quantity
    return out


def container_requests(container: Mapping[str, Any], path: Path = ()) -> Resources:
    """Requests, where a resource given only as a limit counts as requested at that limit."""
    resources = container.get("resources") or {}
    limits = _quantities(resources.get("limits") or {}, (*path, "resources", "limits"))
    requests = _quantities(resources.get("requests") or {}, (*path, "resources", "requests"))
    return {**limits, **requests}


def pod_requests(pod_spec: Mapping[str, Any]) -> Resources:
    """The pod's effective request: app containers and sidecars run together, plain init
    containers one at a time (beside the sidecars started before them), plus pod overhead."""
    running = add(container_requests(c, ("containers", i)) for i, c in enumerate(pod_spec.get("containers") or []))
    sidecars: Resources = {}
    peak_init: Resources = {}
    for index, container in enumerate(pod_spec.get("initContainers") or []):
        requests = container_requests(container, ("initContainers", index))
        if container.get("restartPolicy") == "Always":
            sidecars = add([sidecars, requests])
            peak_init = maximum(peak_init, sidecars)
        else:
            peak_init = maximum(peak_init, add([sidecars, requests]))
    overhead = _quantities(pod_spec.get("overhead") or {}, ("overhead",))
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
    return {name: max(a.get(name, ZERO), b.get(name, ZERO), key=lambda q: q.nanos)
            for name in {**a, **b}}


def to_manifest(resources: Resources) -> dict[str, str]:
    return {name: str(resources[name]) for name in sorted(resources)}
