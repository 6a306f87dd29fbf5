"""How clients reach a service besides a router's Gateway, and how its traffic is protected: a Service over
serving pods (a role's or the service's ``service``), a frontend role (``componentType: frontend``: a
router of the engines' own, such as SGLang's, run as a Deployment that finds the serving pods itself),
and TLS between the gateway, the prefill/decode sidecar and the engines (``spec.tls``)."""

from __future__ import annotations

from enum import StrEnum

from fusion_helm.errors import InvalidSpec
from fusion_helm.records import EMPTY, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


class ServiceType(StrEnum):
    CLUSTER_IP = "ClusterIP"
    NODE_PORT = "NodePort"
    LOAD_BALANCER = "LoadBalancer"


@record
class ClientService:
    """A Service clients call serving pods (or a frontend) through."""

    path: str
    """Its field path, for errors."""
    type: ServiceType = ServiceType.CLUSTER_IP
    headless: bool = False
    """No cluster IP: DNS answers with the pods' own addresses."""
    annotations: Mapping[str, str] = EMPTY
    name: str | None = None
    """Its name, where not the one the expansion gives it."""


def parse_client_service(raw: Mapping[str, Any] | None, path: str, where: str) -> ClientService | None:
    if raw is None:
        return None
    service = ClientService(path=path, type=ServiceType(raw.get("type", ServiceType.CLUSTER_IP)),
                            headless=raw.get("headless", False), annotations=dict(raw.get("annotations") or {}),
                            name=raw.get("name"))
    if service.headless and service.type is not ServiceType.CLUSTER_IP:
        raise InvalidSpec(where, f"{path}.headless",
                          f"only applies to type ClusterIP (a headless Service has no cluster IP to expose as "
                          f"{service.type}), got type {service.type}")
    return service


class FrontendKind(StrEnum):
    SGLANG_ROUTER = "sglang-router"
    """SGLang's router (sglang_router, sgl-model-gateway): the serving pods from the Kubernetes API by label."""


FRONTEND_REPLICAS = 2
"""A frontend's pods by default: two, so that one keeps answering while the other restarts."""


@record
class Frontend:
    """A frontend role: a Deployment of ``template``'s pods in front of the serving roles."""

    name: str
    kind: FrontendKind
    replicas: int
    template: Mapping[str, Any]
    position: int
    service: ClientService
    """Its Service (a ClusterIP one unless the role says otherwise)."""

    @property
    def path(self) -> str:
        return f"spec.roles[{self.position}]"

    @property
    def component_type(self) -> str:
        return "frontend"


def parse_frontend(raw: Mapping[str, Any], position: int, where: str) -> Frontend:
    path = f"spec.roles[{position}]"
    if "frontend" not in raw:
        raise InvalidSpec(where, f"{path}.frontend", "is required for componentType frontend (its kind)")
    if "template" not in raw or "spec" not in raw["template"]:
        raise InvalidSpec(where, f"{path}.template{'' if 'template' not in raw else '.spec'}",
                          "is required for componentType frontend")
    return Frontend(
        name=raw["name"], kind=FrontendKind(raw["frontend"]["kind"]), replicas=raw.get("replicas", FRONTEND_REPLICAS),
        template=_pod_template(raw["template"], f"{path}.template", where), position=position,
        service=parse_client_service(raw.get("service"), f"{path}.service", where) or ClientService(f"{path}.service"))


def _pod_template(template: Mapping[str, Any], path: str, where: str) -> Mapping[str, Any]:
    """A frontend's pod template, checked as the API server checks a pod template (the upstream schema of
    one: a LeaderWorkerSet's, as a Deployment has none here) and with its null fields pruned: the
    Deployment, the Role's subject and the Service are written from it."""
    from fusion_helm.base.kinds import LEADER_WORKER_SET
    from fusion_helm.model import upstream
    from fusion_helm.model.validation import check, prune_nulls

    schema = upstream.schema(LEADER_WORKER_SET.api_version, LEADER_WORKER_SET.kind, "spec", "leaderWorkerTemplate",
                             "workerTemplate")
    check(where, path, schema, template)
    pruned: Mapping[str, Any] = prune_nulls(schema, template)
    return pruned


@record
class Tls:
    """``spec.tls``: the certificate the serving pods serve and the sidecar dials with."""

    secret_name: str
    verify_peers: bool = False
    cert_manager: Mapping[str, Any] | None = None
    """``certManager`` as given: a Certificate of cert-manager's writes the Secret."""


def parse_tls(raw: Mapping[str, Any] | None, default_secret: str, where: str) -> Tls | None:
    """``spec.tls``; DEFAULT_SECRET: the Secret certManager writes unless secretName names one."""
    if raw is None:
        return None
    cert_manager = raw.get("certManager")
    if "secretName" not in raw and cert_manager is None:
        raise InvalidSpec(where, "spec.tls.secretName",
                          "is required: the Secret the serving pods serve HTTPS with (or certManager, which writes "
                          "one)")
    return Tls(raw.get("secretName", default_secret), raw.get("verifyPeers", False), cert_manager)
