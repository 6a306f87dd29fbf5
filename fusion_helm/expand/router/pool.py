"""The InferencePool: the service's serving pods (leaders only: a multi-node replica serves from its
leader), behind the router's endpoint picker."""

from __future__ import annotations

from collections.abc import Mapping

from fusion_helm.errors import InvalidSpec, show
from fusion_helm.expand import naming
from fusion_helm.model import InferenceService, PoolAPI, Role, Router

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LWS_WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
"""LWS numbers the pods of a replica; the leader, the one that serves, is 0 (a one-pod replica's only pod)."""
PICKER_GRPC_PORT = 9002
VLLM_DEFAULT_PORT = 8000
MAX_PORT = 65535


def selector(service: InferenceService) -> dict[str, str]:
    return {naming.LABEL_SERVICE: service.name, LWS_WORKER_INDEX: "0"}


def target_port(service: InferenceService, router: Router) -> int:
    """The router's targetPort, else the serving port every serving role agrees on."""
    if router.target_port is not None:
        return router.target_port
    ports = {role.name: _serving_port(service, role) for role in service.roles}
    first, port = next(iter(ports.items()))
    for name, other in ports.items():
        if other != port:
            raise InvalidSpec(service.where, f"{router.path}.targetPort",
                              f"is required: the serving roles listen on different ports ({first}: {port}, "
                              f"{name}: {other}) and an InferencePool routes to one")
    return port


def _serving_port(service: InferenceService, role: Role) -> int:
    """The serving (first) container's port named http, else its first port; a container that declares
    none serves where vLLM does: its ``--port`` argument, else 8000."""
    container: Mapping[str, Any] = role.template["spec"]["containers"][0]
    ports: list[Mapping[str, Any]] = container.get("ports") or []
    if not ports:
        return _vllm_port(service, role, container)
    index, named = next(((i, port) for i, port in enumerate(ports) if port.get("name") == "http"), (0, ports[0]))
    port = named["containerPort"]
    if not 1 <= port <= MAX_PORT:
        raise InvalidSpec(service.where, f"{role.path}.template.spec.containers[0].ports[{index}].containerPort",
                          f"must be a port number (1 to {MAX_PORT}) to be routed to, got {port}")
    return int(port)


def _vllm_port(service: InferenceService, role: Role, container: Mapping[str, Any]) -> int:
    args = [str(arg) for arg in container.get("args") or []]
    path = f"{role.path}.template.spec.containers[0]"
    if container.get("command") and container["command"][0] != "vllm":
        raise InvalidSpec(service.where, f"{path}.ports",
                          "is required under a router when the container does not run vllm: the InferencePool "
                          "routes to the serving port (or set the router's targetPort)")
    for index, arg in enumerate(args):
        value = arg.partition("=")[2] if arg.startswith("--port=") else \
            (args[index + 1] if arg == "--port" and index + 1 < len(args) else None)
        if value is not None:
            if not (value.isascii() and value.isdigit() and 1 <= int(value) <= MAX_PORT):
                raise InvalidSpec(service.where, f"{path}.args[{index}]",
                                  f"must give vllm a port number (1 to {MAX_PORT}) to be routed to, got {show(value)}")
            return int(value)
    return VLLM_DEFAULT_PORT


def inference_pool(service: InferenceService, router: Router, port: int) -> dict[str, Any]:
    picker = naming.picker_name(service.name, router.name)
    spec: dict[str, Any]
    if router.pool_api is PoolAPI.V1:
        spec = {"selector": {"matchLabels": selector(service)}, "targetPorts": [{"number": port}],
                "endpointPickerRef": {"name": picker, "port": {"number": PICKER_GRPC_PORT}}}
    else:
        spec = {"selector": selector(service), "targetPortNumber": port,
                "extensionRef": {"name": picker, "portNumber": PICKER_GRPC_PORT}}
    return {
        "apiVersion": router.pool_api.value,
        "kind": "InferencePool",
        "metadata": naming.object_metadata(service, naming.router_name(service.name, router.name),
                                           naming.role_labels(service, router)),
        "spec": spec,
    }
