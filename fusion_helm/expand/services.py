"""Services clients call serving pods through without a Gateway: a role's (``roles[].service``) over the
role's serving pods, and the service's (``spec.service``) over every serving role's.

The pods a Service selects are those the InferencePool would: each replica's leader, or each pod of a role
whose every node serves. Its ports are the ones the serving container declares, the one the role serves
on first (where a routing proxy stands in front of the engine, the proxy's): named as declared, else
``http``, and ``https`` (appProtocol too) where ``spec.tls`` has the engines serve TLS.
"""

from __future__ import annotations

from fusion_helm.base.kinds import SERVICE
from fusion_helm.base.labels import LABEL_ROLE_NAME, LABEL_SERVICE
from fusion_helm.errors import InvalidSpec, show
from fusion_helm.expand.labelling import object_metadata, role_labels, serving_selector
from fusion_helm.expand.names import role_service_name, service_service_name
from fusion_helm.expand.serving_port import EXPOSED, common_port, serving_port
from fusion_helm.model import InferenceService, Role
from fusion_helm.model.exposure import ClientService, ServiceType
from fusion_helm.model.metadata import is_dns_label

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

HTTP = "http"
HTTPS = "https"


def client_services(service: InferenceService) -> list[dict[str, Any]]:
    """The Services the roles and the service ask for, in role order, the service's last."""
    objects = [service_object(service, role_service_name(service, role), role_labels(service, role),
                        {LABEL_SERVICE: service.name, LABEL_ROLE_NAME: role.name, **serving_selector(service)},
                        role.service, _ports(service, role))
               for role in service.roles if role.service is not None]
    if service.service is not None:
        port = common_port(service, EXPOSED, service.service.path, "the service's one Service needs")
        objects.append(service_object(service, service_service_name(service), {LABEL_SERVICE: service.name},
                                {LABEL_SERVICE: service.name, **serving_selector(service)}, service.service,
                                [service_port(service, port, None)]))
    return objects


def service_object(service: InferenceService, name: str, labels: dict[str, str], selector: Mapping[str, str],
                   wanted: ClientService, ports: list[dict[str, Any]]) -> dict[str, Any]:
    """A Service NAME of SERVICE's over the pods SELECTOR selects, as WANTED says, on PORTS."""
    metadata = object_metadata(service, name, labels)
    if wanted.annotations:
        metadata["annotations"] = {**metadata.get("annotations", {}), **wanted.annotations}
    spec: dict[str, Any] = {"type": str(wanted.type), "selector": dict(selector), "ports": ports}
    if wanted.headless:
        spec["clusterIP"] = "None"
    if wanted.type is ServiceType.CLUSTER_IP:
        del spec["type"]  # the default, as the API server would store it
    return {"apiVersion": SERVICE.api_version, "kind": SERVICE.kind, "metadata": metadata, "spec": spec}


def _ports(service: InferenceService, role: Role) -> list[dict[str, Any]]:
    """The role's serving port first, then every other port its serving container declares by name."""
    serving = serving_port(service, role, EXPOSED)
    ports = [service_port(service, serving.number, serving.name)]
    container = role.template["spec"]["containers"][0]
    path = f"{role.template_path}.spec.containers[0].ports"
    for index, given in enumerate(container.get("ports") or []):
        number, name = given.get("containerPort"), given.get("name")
        if number == serving.number or not name:
            continue  # a port without a name cannot be one of several in a Service
        if not is_dns_label(str(name)):
            raise InvalidSpec(service.where, f"{path}[{index}].name",
                              f"must be a DNS label to name a Service port, got {show(name)}")
        protocol = given.get("protocol", "TCP")
        if any(port["name"] == name or (port["port"], port["protocol"]) == (number, protocol) for port in ports):
            raise InvalidSpec(service.where, f"{path}[{index}]",
                              f"repeats port {show(name)} ({number}/{protocol}) of the Service over the role's pods")
        ports.append({"name": name, "port": number, "targetPort": number, "protocol": protocol})
    return ports


def service_port(service: InferenceService, number: int, name: str | None) -> dict[str, Any]:
    """A Service port NUMBER for clients, named NAME (else for its scheme)."""
    scheme = HTTPS if service.tls is not None else HTTP
    port: dict[str, Any] = {"name": name or scheme, "port": number, "targetPort": number, "protocol": "TCP"}
    if service.tls is not None:
        port["appProtocol"] = HTTPS
    return port
