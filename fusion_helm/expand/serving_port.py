"""Where a serving role's pods serve: the port the router routes to and Prometheus scrapes."""

from __future__ import annotations

from collections.abc import Mapping

from fusion_helm.errors import InvalidSpec, show
from fusion_helm.expand.proxies import routing_proxy
from fusion_helm.limits import count
from fusion_helm.model import InferenceService, Role
from fusion_helm.model.engine_flags import MAX_PORT, PORT
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any



@record
class ServingPort:
    number: int
    name: str | None
    """The container port's name, when the container declares it with one."""


@record
class PortUse:
    """Who needs the port, as errors say it."""
    needed: str
    """e.g. "under a router"."""
    verb: str
    """e.g. "routed to"."""
    remedy: str
    """Why a port is needed and how else to give one."""


ROUTED = PortUse("under a router", "routed to",
                 "the InferencePool routes to the serving port (or set the router's targetPort)")
SCRAPED = PortUse("with spec.monitoring.podMonitor", "scraped",
                  "its PodMonitor scrapes /metrics on the serving port")
EXPOSED = PortUse("with a service", "exposed", "its Service sends clients to the serving port")
ADMITTED = PortUse("with network policies", "admitted to",
                   "its NetworkPolicy admits the service's clients to the serving port")
FRONTED = PortUse("under a frontend", "called by the frontend", "the frontend sends requests to the serving port")


def common_port(service: InferenceService, use: PortUse, field: str, what: str) -> int:
    """The serving port every serving role agrees on; where they differ, FIELD is required (WHAT needs
    one port)."""
    ports = {role.name: serving_port(service, role, use).number for role in service.roles}
    first, port = next(iter(ports.items()))
    for name, other in ports.items():
        if other != port:
            raise InvalidSpec(service.where, field,
                              f"is required: the serving roles listen on different ports ({first}: {port}, "
                              f"{name}: {other}) and {what} one")
    return port


def serving_port(service: InferenceService, role: Role, use: PortUse) -> ServingPort:
    """Where requests reach the role's serving pods: a routing proxy's port where the template runs one in
    front of its engine; else the serving (first) container's port named http, else its first port; a
    container that declares none serves where its engine does: its ``--port`` (in any spelling), else
    the engine's default."""
    proxy = routing_proxy(role.template)
    if proxy is not None:
        listen = count(proxy.listen_port)
        if listen is None or not 1 <= listen <= MAX_PORT:
            raise InvalidSpec(service.where, f"{role.template_path}.spec.{proxy.field}.args",
                              f"--{proxy.kind.listen_flag} must be a port number (1 to {MAX_PORT}) for the routing "
                              f"proxy to be {use.verb}, got {show(proxy.listen_port)}")
        return ServingPort(listen, proxy.port_name(proxy.listen_port))
    container: Mapping[str, Any] = role.template["spec"]["containers"][0]
    ports: list[Mapping[str, Any]] = container.get("ports") or []
    if not ports:
        return ServingPort(_engine_port(service, role, use), None)
    index, named = next(((i, port) for i, port in enumerate(ports) if port.get("name") == "http"), (0, ports[0]))
    port = named["containerPort"]
    if not 1 <= port <= MAX_PORT:
        raise InvalidSpec(service.where, f"{role.path}.template.spec.containers[0].ports[{index}].containerPort",
                          f"must be a port number (1 to {MAX_PORT}) to be {use.verb}, got {port}")
    return ServingPort(int(port), named.get("name"))


def _engine_port(service: InferenceService, role: Role, use: PortUse) -> int:
    server = role.server(service.where)
    if server.engine is None:
        raise InvalidSpec(service.where, f"{role.template_path}.spec.containers[0].ports",
                          f"is required {use.needed} when the container runs neither vllm nor sglang: {use.remedy}")
    return server.port(PORT, server.engine.default_port,
                       f"to be {use.verb} (or declare the port in the container's ports)")
