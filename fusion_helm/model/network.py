"""``spec.networkPolicy``: who may reach the service's pods, and where they may go (docs/security.md)."""

from __future__ import annotations

from collections.abc import Mapping

from fusion_helm.errors import InvalidSpec, show
from fusion_helm.model.metadata import check_label_map
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PATH = "spec.networkPolicy"

Peer = Mapping[str, Mapping[str, str]]
"""A set of pods by their labels: ``podLabels`` (of the policy's namespace, alone) and ``namespaceLabels``."""


@record
class Endpoint:
    """Pods by their labels, or addresses, and ports: a source or destination the user adds."""

    peer: Peer
    cidr: str | None
    ports: tuple[int, ...]
    """TCP; empty: every port."""


@record
class Egress:
    """Where the service's pods may connect, once restricted."""

    api_server: tuple[str, ...]
    """The API server's addresses (CIDRs), for the pods that call it."""
    to: tuple[Endpoint, ...]
    """The user's destinations, for every pod."""


@record
class NetworkPolicies:
    gateway: Peer | None
    """The Gateway's pods; None: every pod of the Gateway's namespace."""
    prometheus: Peer | None
    """Prometheus's pods; None: the namespaces the autoscalers' Prometheus addresses name, else none."""
    clients: Peer | None
    """The clients of the Services and frontends; None: every pod of the service's namespace."""
    ingress: tuple[Endpoint, ...]
    """The user's sources, for every serving pod."""
    egress: Egress | None
    """None: egress is not restricted."""


PEER_FIELDS = ("podLabels", "namespaceLabels")


def parse_network_policies(raw: Mapping[str, Any] | None, where: str) -> NetworkPolicies | None:
    """The service's policies (on unless ``enabled: false``), or None."""
    raw = raw or {}
    if not raw.get("enabled", True):
        return None
    for field in ("gateway", "prometheus", "clients"):
        _check_peer(raw.get(field) or {}, f"{PATH}.{field}", where)
    return NetworkPolicies(gateway=raw.get("gateway"), prometheus=raw.get("prometheus"), clients=raw.get("clients"),
                           ingress=_endpoints(raw.get("ingress"), f"{PATH}.ingress", where),
                           egress=_egress(raw.get("egress"), where))


def _egress(raw: Mapping[str, Any] | None, where: str) -> Egress | None:
    if not (raw or {}).get("restrict", False):
        return None
    assert raw is not None
    path = f"{PATH}.egress"
    for index, cidr in enumerate(raw.get("apiServer") or []):
        _check_cidr(cidr, f"{path}.apiServer[{index}]", where)
    return Egress(api_server=tuple(raw.get("apiServer") or ()), to=_endpoints(raw.get("to"), f"{path}.to", where))


def _endpoints(raw: list[Mapping[str, Any]] | None, path: str, where: str) -> tuple[Endpoint, ...]:
    endpoints = []
    for index, item in enumerate(raw or []):
        item_path = f"{path}[{index}]"
        peer = {field: item[field] for field in PEER_FIELDS if field in item}
        _check_peer(peer, item_path, where)
        cidr = item.get("cidr")
        if cidr is not None:
            if peer:
                raise InvalidSpec(where, f"{item_path}.cidr",
                                  "names addresses, and podLabels or namespaceLabels pods: give one or the other")
            _check_cidr(cidr, f"{item_path}.cidr", where)
        elif not peer:
            raise InvalidSpec(where, item_path,
                              "names no source or destination: give podLabels, namespaceLabels or cidr")
        endpoints.append(Endpoint(peer=peer, cidr=cidr, ports=tuple(item.get("ports") or ())))
    return tuple(endpoints)


def _check_peer(peer: Mapping[str, Any], path: str, where: str) -> None:
    for field, labels in peer.items():
        check_label_map(where, f"{path}.{field}", labels)


def _check_cidr(cidr: str, path: str, where: str) -> None:
    import ipaddress  # only where a CIDR is given

    try:
        ipaddress.ip_network(cidr)
    except ValueError:
        raise InvalidSpec(where, path, f"must be a CIDR (an address and its prefix length, with no bits set past it, "
                                       f"e.g. 172.20.0.1/32), got {show(cidr)}") from None
