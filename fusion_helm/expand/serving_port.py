"""Where a serving role's pods serve: the port the router routes to and Prometheus scrapes."""

from __future__ import annotations

from collections.abc import Mapping

from fusion_helm.errors import InvalidSpec, show
from fusion_helm.model import InferenceService, Role
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

VLLM_DEFAULT_PORT = 8000
MAX_PORT = 65535


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


def serving_port(service: InferenceService, role: Role, use: PortUse) -> ServingPort:
    """The serving (first) container's port named http, else its first port; a container that declares
    none serves where vLLM does: its ``--port`` argument, else 8000."""
    container: Mapping[str, Any] = role.template["spec"]["containers"][0]
    ports: list[Mapping[str, Any]] = container.get("ports") or []
    if not ports:
        return ServingPort(_vllm_port(service, role, container, use), None)
    index, named = next(((i, port) for i, port in enumerate(ports) if port.get("name") == "http"), (0, ports[0]))
    port = named["containerPort"]
    if not 1 <= port <= MAX_PORT:
        raise InvalidSpec(service.where, f"{role.path}.template.spec.containers[0].ports[{index}].containerPort",
                          f"must be a port number (1 to {MAX_PORT}) to be {use.verb}, got {port}")
    return ServingPort(int(port), named.get("name"))


def _vllm_port(service: InferenceService, role: Role, container: Mapping[str, Any], use: PortUse) -> int:
    args = [str(arg) for arg in container.get("args") or []]
    path = f"{role.path}.template.spec.containers[0]"
    if container.get("command") and container["command"][0] != "vllm":
        raise InvalidSpec(service.where, f"{path}.ports",
                          f"is required {use.needed} when the container does not run vllm: {use.remedy}")
    for index, arg in enumerate(args):
        value = arg.partition("=")[2] if arg.startswith("--port=") else \
            (args[index + 1] if arg == "--port" and index + 1 < len(args) else None)
        if value is not None:
            if not (value.isascii() and value.isdigit() and 1 <= int(value) <= MAX_PORT):
                raise InvalidSpec(service.where, f"{path}.args[{index}]",
                                  f"must give vllm a port number (1 to {MAX_PORT}) to be {use.verb}, got {show(value)}")
            return int(value)
    return VLLM_DEFAULT_PORT
