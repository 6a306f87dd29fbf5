"""Frontend roles: a router of the engines' own in front of the serving roles, run as a Deployment with a
Service, whose pods find the serving pods the way that router does.

``sglang-router`` is SGLang's router (``python3 -m sglang_router.launch_router``, sgl-model-gateway): given
``--service-discovery``, it lists and watches the pods of its namespace through the Kubernetes API (its
pod's ServiceAccount, which a Role of ours lets read pods) and routes to those Running and Ready whose
labels match its selector, at ``http://<pod address>:<--service-discovery-port>``. The expansion gives it
the service's serving pods' labels — the prefill and the decode pods apart (``--prefill-selector``,
``--decode-selector``) for a prefill/decode service, which it pairs by SGLang's bootstrap protocol, reading a
prefill pod's bootstrap port from its ``sglang.ai/bootstrap-port`` annotation — and the one port they serve
on. Its flags are argparse's, as SGLang's are.
"""

from __future__ import annotations

from fusion_helm.base.kinds import DEPLOYMENT, POD, SERVICE_ACCOUNT
from fusion_helm.base.labels import LABEL_COMPONENT_TYPE, LABEL_SERVICE
from fusion_helm.errors import InvalidSpec
from fusion_helm.expand.labelling import object_metadata, role_labels, serving_selector
from fusion_helm.expand.names import frontend_name, frontend_service_name
from fusion_helm.expand.router.rbac import reader_role, reads_kind
from fusion_helm.expand.services import service_object, service_port
from fusion_helm.expand.serving_port import FRONTED, common_port
from fusion_helm.model import ComponentType, InferenceService, Role
from fusion_helm.model.engine import ServerCommand, server_command
from fusion_helm.model.engine_flags import DISAGGREGATION_BOOTSTRAP_PORT, DISAGGREGATION_MODE, PORT, Engine, Option
from fusion_helm.model.exposure import Frontend

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from fusion_helm.expand.pods import Change

SGLANG_ROUTER_COMMAND = ("python3", "-m", "sglang_router.launch_router")
"""What runs where the template gives no command (SGLang's images have no entrypoint: their examples run
the router's module)."""
SGLANG_ROUTER_PORT = 30000
"""The router's own port without --port."""
SGLANG_BOOTSTRAP_PORT = 8998
"""An SGLang prefill server's bootstrap port without --disaggregation-bootstrap-port."""
BOOTSTRAP_PORT_ANNOTATION = "sglang.ai/bootstrap-port"
"""Where SGLang's router reads a discovered prefill pod's bootstrap port."""


def _router_option(*spellings: str, takes_value: bool = True) -> Option:
    return Option({Engine.SGLANG: spellings}, takes_value)


SERVICE_DISCOVERY = _router_option("--service-discovery", takes_value=False)
SELECTOR = _router_option("--selector")
PREFILL_SELECTOR = _router_option("--prefill-selector")
DECODE_SELECTOR = _router_option("--decode-selector")
DISCOVERY_PORT = _router_option("--service-discovery-port")
DISCOVERY_NAMESPACE = _router_option("--service-discovery-namespace")
PD_DISAGGREGATION = _router_option("--pd-disaggregation", takes_value=False)
WORKER_URLS = _router_option("--worker-urls")
PREFILL = _router_option("--prefill")
DECODE = _router_option("--decode")
WRITTEN = (SERVICE_DISCOVERY, SELECTOR, PREFILL_SELECTOR, DECODE_SELECTOR, DISCOVERY_PORT, DISCOVERY_NAMESPACE,
           PD_DISAGGREGATION, WORKER_URLS, PREFILL, DECODE)
"""The router's flags the expansion writes (or that would name workers of their own beside the discovered)."""
NAMESPACE_VARIABLE = "POD_NAMESPACE"


def prefill_annotation(service: InferenceService, role: Role) -> Change | None:
    """What the frontends read off ROLE's pods: a prefill pod's SGLang bootstrap port (None: nothing to read
    off a monolithic service's, or a decoder's)."""
    if not service.disaggregated or role.component_type is not ComponentType.PREFILLER:
        return None
    port = role.server(service.where).port(DISAGGREGATION_BOOTSTRAP_PORT, SGLANG_BOOTSTRAP_PORT,
                                           "for the frontend to reach the prefill's bootstrap server")
    return lambda pod: pod.with_template(_annotated(pod.template, port))


def frontend_objects(service: InferenceService, frontend: Frontend) -> list[dict[str, Any]]:
    """FRONTEND's ServiceAccount (unless its template names one), Role and RoleBinding to read pods,
    Deployment and Service."""
    name = frontend_name(service.name, frontend.name)
    labels = role_labels(service, frontend)

    def metadata() -> dict[str, Any]:
        return object_metadata(service, name, labels)

    spec = frontend.template["spec"]
    path = f"{frontend.path}.template.spec"
    if spec.get("automountServiceAccountToken") is False:
        raise InvalidSpec(service.where, f"{path}.automountServiceAccountToken",
                          "is false, but the frontend finds the serving pods through the Kubernetes API with its "
                          "pod's ServiceAccount token; remove it")
    account = spec.get("serviceAccountName") or spec.get("serviceAccount")
    container = spec["containers"][0]
    router = _router_command(service, frontend)
    port = frontend_port(service, frontend)
    discovering = router.appended(_discovery_flags(service, frontend, router), "the frontend finds its workers")
    template_metadata = frontend.template.get("metadata") or {}
    pod_spec = {**spec, "serviceAccountName": account or name,
                "containers": [_with_namespace(discovering.write(container)), *spec["containers"][1:]]}
    pod_spec.pop("serviceAccount", None)
    objects = [] if account else [
        {"apiVersion": SERVICE_ACCOUNT.api_version, "kind": SERVICE_ACCOUNT.kind, "metadata": metadata()}]
    objects += reader_role(name, metadata, [reads_kind(POD)], [str(account or name)], service.namespace)
    objects.append({"apiVersion": DEPLOYMENT.api_version, "kind": DEPLOYMENT.kind, "metadata": metadata(), "spec": {
        "replicas": frontend.replicas,
        # A new pod answers before an old one stops: an update never leaves the clients without a frontend.
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        "selector": {"matchLabels": labels},
        "template": {"metadata": {**template_metadata, "labels": {**(template_metadata.get("labels") or {}),
                                                                   **labels}},
                     "spec": pod_spec},
    }})
    objects.append(service_object(service, frontend_service_name(service, frontend), labels, labels, frontend.service,
                                  [service_port(service, port, None)]))
    return objects


def _router_command(service: InferenceService, frontend: Frontend) -> ServerCommand:
    container = frontend.template["spec"]["containers"][0]
    # An image's entrypoint is not SGLang's router's unless the template says so: its command is written.
    return server_command({**container, "command": container.get("command") or list(SGLANG_ROUTER_COMMAND)},
                          (), service.where, f"{frontend.path}.template.spec.containers[0]").as_engine(Engine.SGLANG)


def frontend_port(service: InferenceService, frontend: Frontend) -> int:
    """Where the frontend's pods take requests."""
    return _router_command(service, frontend).port(PORT, SGLANG_ROUTER_PORT, "for the frontend's Service")


def _discovery_flags(service: InferenceService, frontend: Frontend, router: ServerCommand) -> list[str]:
    for option in WRITTEN:
        for occurrence in router.occurrences(option):
            raise InvalidSpec(service.where, router.field(occurrence),
                              f"{occurrence.written} is the expansion's: the {frontend.kind} frontend finds the "
                              "service's serving pods by their labels; remove it (docs/frontends.md)")
    if service.tls is not None:
        raise InvalidSpec(service.where, f"{frontend.path}.componentType",
                          f"a {frontend.kind} frontend calls the engines in plain HTTP, and spec.tls has them serve "
                          "HTTPS only; use a router role for TLS, or leave spec.tls out")
    port = common_port(service, FRONTED, f"{frontend.path}.frontend",
                       f"the {frontend.kind} frontend calls the pods it finds on")
    base = {LABEL_SERVICE: service.name, **serving_selector(service)}
    flags = ["--service-discovery", "--service-discovery-port", str(port),
             "--service-discovery-namespace", f"$({NAMESPACE_VARIABLE})"]
    if not service.disaggregated:
        return [*flags, "--selector", *_pairs(base)]
    for role in service.roles:
        if not role.server(service.where).given(DISAGGREGATION_MODE):
            raise InvalidSpec(service.where, f"{role.template_path}.spec.containers[0].args",
                              f"a {role.component_type} behind a {frontend.kind} frontend runs SGLang's "
                              f"prefill/decode disaggregation ({DISAGGREGATION_MODE.name(Engine.SGLANG)}), which the "
                              "router pairs prefill and decode by; for vLLM's, use a router role (llm-d's sidecar "
                              "speaks vLLM's KV connectors)")
    return [*flags, "--pd-disaggregation",
            "--prefill-selector", *_pairs({**base, LABEL_COMPONENT_TYPE: str(ComponentType.PREFILLER)}),
            "--decode-selector", *_pairs({**base, LABEL_COMPONENT_TYPE: str(ComponentType.DECODER)})]


def _pairs(labels: Mapping[str, str]) -> list[str]:
    return [f"{key}={value}" for key, value in labels.items()]


def _with_namespace(container: Mapping[str, Any]) -> dict[str, Any]:
    """The container with its pod's namespace in POD_NAMESPACE, which its discovery flag names."""
    env = [variable for variable in container.get("env") or [] if variable["name"] != NAMESPACE_VARIABLE]
    return {**container, "env": [*env, {"name": NAMESPACE_VARIABLE,
                                        "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]}


def _annotated(template: Mapping[str, Any], port: int) -> dict[str, Any]:
    metadata = template.get("metadata") or {}
    annotations = {**(metadata.get("annotations") or {}), BOOTSTRAP_PORT_ANNOTATION: str(port)}
    return {**template, "metadata": {**metadata, "annotations": annotations}}
