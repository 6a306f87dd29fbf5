"""The prefill/decode sidecar on a routed decoder's serving pods.

The picker answers a prefill/decode request with the decode endpoint and, in ``x-prefiller-host-port``,
the prefill endpoint. Only a proxy in front of the decode engine acts on that header: it sends the
prompt to the prefill engine, then the request, with the KV-transfer parameters the prefill returned, to
its own engine. Without it the decode engine prefills every prompt itself and the prefill pods idle.

So each serving pod of a decoder (the pods the pool selects) gets the generation's sidecar as a native
sidecar (a restartable init container, as llm-d deploys it): it listens where the pool routes, the
engine moves to an internal port, the sidecar's KV connector follows the engine's own KV-transfer
setting, and its SSRF protection lets it dial only pods of the service's InferencePool (read with the
pod's ServiceAccount, which a Role of ours allows). A pod that already runs a sidecar of that image
is the user's wiring and is left alone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

from fusion_helm.errors import InvalidSpec, show
from fusion_helm.expand.labelling import object_metadata, role_labels
from fusion_helm.expand.names import pd_sidecar_name, router_name
from fusion_helm.expand.pods import RoleTemplates
from fusion_helm.expand.router.generations import Generation, Sidecar
from fusion_helm.expand.router.rbac import reader_role, reads_kind
from fusion_helm.hooks.kinds import POD, inference_pool
from fusion_helm.model import ComponentType, InferenceService, Role, Router
from fusion_helm.model.bootstrap import Bootstrap

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONTAINER_NAME = "pd-sidecar"
ENGINE_PORT = 8200
"""Where the engine moves to behind the sidecar (llm-d's own choice), or the next free port."""
PORT_FLAG = "--port"
KV_TRANSFER_FLAG = "--kv-transfer-config"
SGLANG_DISAGGREGATION_FLAG = "--disaggregation-mode"
SIDECAR_USER = 65532
"""The user the llm-d images run as (distroless "nonroot")."""
RESOURCES = {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}}
"""A proxy's share: it holds requests in flight, prompts included, and nothing else."""
HEALTH_PATH = "/health"
"""The sidecar's own health endpoint: 200 once it listens."""

VLLM_CONNECTORS: Mapping[str, str] = {
    "NixlConnector": "nixlv2",
    "MooncakeConnector": "mooncake",
    "OffloadingConnector": "offloading",
    "ExampleConnector": "shared-storage",
}
"""vLLM's KV connector (``kv_connector`` of --kv-transfer-config) → the sidecar's ``--kv-connector``
mode that speaks its protocol. A MultiConnector is driven as NIXL when NIXL is one of its connectors."""
MULTI_CONNECTOR = "MultiConnector"
SGLANG_MODE = "sglang"
"""The sidecar's mode for SGLang's own prefill/decode disaggregation (--disaggregation-mode)."""


def with_pd_sidecars(service: InferenceService, router: Router, generation: Generation, port: int,
                     templates: Mapping[str, RoleTemplates]) -> dict[str, RoleTemplates]:
    """TEMPLATES with the sidecar on each decoder's serving pods, which the pool reaches on PORT."""
    sidecar = generation.pd_sidecar
    assert sidecar is not None, "generation_of refuses a prefill/decode service whose generation has no sidecar"
    connectors = {role.name: _connector(service, role, sidecar) for role in service.roles}
    _check_connectors_agree(service, connectors)
    result = dict(templates)
    for role in service.roles:
        connector = connectors[role.name]
        if role.component_type is ComponentType.DECODER and connector is not None:
            result[role.name] = _decoder_templates(service, router, sidecar, role, port, connector,
                                                   templates[role.name])
    return result


def sidecar_rbac(service: InferenceService, router: Router, templates: Mapping[str, RoleTemplates]
                 ) -> list[dict[str, Any]]:
    """Read access to the pool and its pods for the ServiceAccounts of the pods that run our sidecar
    (its SSRF protection): a Role and its RoleBinding, none where no pod runs one."""
    accounts = sorted({_service_account(template) for role in service.roles
                       if role.component_type is ComponentType.DECODER
                       for template in _serving(role, templates[role.name]) if _ours(template)})
    if not accounts:
        return []
    name = pd_sidecar_name(service.name, router.name)
    labels = role_labels(service, router)
    rules = [reads_kind(inference_pool(router.pool_api)), reads_kind(POD)]
    return reader_role(name, lambda: object_metadata(service, name, labels), rules, accounts, service.namespace)


def _decoder_templates(service: InferenceService, router: Router, sidecar: Sidecar, role: Role, port: int,
                       connector: str, templates: RoleTemplates) -> RoleTemplates:
    if any(_runs_sidecar(template, sidecar) for template in (templates.worker, templates.leader) if template):
        return templates  # the user's own wiring

    def add(template: Mapping[str, Any]) -> dict[str, Any]:
        return _with_sidecar(service, router, sidecar, role, port, connector, template)

    if not role.spans_nodes:
        return RoleTemplates(size=templates.size, worker=add(templates.worker))
    leader = add(templates.leader if templates.leader is not None else templates.worker)
    worker = add(templates.worker) if role.every_node_serves else templates.worker
    return RoleTemplates(size=templates.size, leader=leader, worker=worker)


def _serving(role: Role, templates: RoleTemplates) -> list[Mapping[str, Any]]:
    """The templates of the pods the pool selects."""
    if not role.spans_nodes:
        return [templates.worker]
    leader = templates.leader if templates.leader is not None else templates.worker
    return [leader, templates.worker] if role.every_node_serves else [leader]


def _with_sidecar(service: InferenceService, router: Router, sidecar: Sidecar, role: Role, port: int,
                  connector: str, template: Mapping[str, Any]) -> dict[str, Any]:
    spec = template["spec"]
    path = f"{role.template_path}.spec"
    if spec.get("automountServiceAccountToken") is False:
        raise InvalidSpec(service.where, f"{path}.automountServiceAccountToken",
                          "is false, but the prefill/decode sidecar's SSRF protection reads the InferencePool and "
                          "its pods with the pod's ServiceAccount token; remove it, or run a sidecar of "
                          f"{sidecar.image.rpartition(':')[0]} of your own")
    engine = spec["containers"][0]
    internal = _free_port(spec, avoid=port)
    moved = _moved_engine(service, role, engine, port, internal)
    pool = f"$(POD_NAMESPACE)/{router_name(service.name, router.name)}"
    container = {
        "name": CONTAINER_NAME,
        "image": sidecar.image,
        "imagePullPolicy": "IfNotPresent",
        "args": [f"--port={port}", f"--model-server-port={internal}", f"--kv-connector={connector}",
                 # The gateway reaches the pool's pods in plain HTTP, as it does a monolithic service's.
                 "--secure-proxy=false", "--enable-ssrf-protection=true", f"--inference-pool={pool}",
                 f"--pool-group={router.pool_api.group}"],
        "env": [{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}],
        "ports": [{"name": _port_name(engine, port), "containerPort": port, "protocol": "TCP"}],
        "restartPolicy": "Always",
        # The sidecar listens only once its SSRF allowlist holds the pool: until then the pod must not be
        # Ready (a native sidecar's readiness counts toward its pod's), or the gateway meets a closed port.
        "readinessProbe": {"httpGet": {"path": HEALTH_PATH, "port": port}, "periodSeconds": 5},
        "resources": RESOURCES,
        "securityContext": {"runAsNonRoot": True, "runAsUser": SIDECAR_USER, "runAsGroup": SIDECAR_USER,
                            "allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}},
    }
    return {**template, "spec": {**spec, "initContainers": [*(spec.get("initContainers") or []), container],
                                 "containers": [moved, *spec["containers"][1:]]}}


def _moved_engine(service: InferenceService, role: Role, engine: Mapping[str, Any], port: int,
                  internal: int) -> dict[str, Any]:
    """The engine container listening on INTERNAL instead of PORT: its --port, its declared port and the
    probes that named PORT."""
    path = f"{role.template_path}.spec.containers[0]"
    generated = role.multinode is not None and role.multinode.bootstrap is not Bootstrap.CUSTOM
    command = [] if generated else list(engine.get("command") or [])
    args = [str(arg) for arg in engine.get("args") or []]
    if not generated and not _known_engine(command, args):
        raise InvalidSpec(service.where, f"{path}.command",
                          "runs neither vllm nor sglang in exec form, so the prefill/decode sidecar cannot move "
                          f"its port ({PORT_FLAG}) to stand in front of it; run one of them, or run a sidecar of "
                          "the router's generation of your own")
    moved = {**engine}
    if not _replace_port(command, internal) and not _replace_port(args, internal):
        args.append(f"{PORT_FLAG}={internal}")
    if command:
        moved["command"] = command
    moved["args"] = args
    ports = [dict(given) for given in engine.get("ports") or []]
    ours = [given for given in ports if given.get("containerPort") == port]
    for given in ours:
        given.pop("name", None)
        given["containerPort"] = internal
    moved["ports"] = ports if ours else [*ports, {"containerPort": internal, "protocol": "TCP"}]
    names = {_port_name(engine, port)} if any(given.get("containerPort") == port and given.get("name")
                                              for given in engine.get("ports") or []) else set()
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        if isinstance(engine.get(probe), Mapping):
            moved[probe] = _retargeted(engine[probe], port, names, internal)
    return moved


def _retargeted(probe: Mapping[str, Any], port: int, names: set[str], internal: int) -> dict[str, Any]:
    """A probe of the engine asks the engine, at its new port, not the sidecar that took its old one."""
    result = dict(probe)
    for kind in ("httpGet", "tcpSocket", "grpc"):
        handler = probe.get(kind)
        target = handler.get("port") if isinstance(handler, Mapping) else None
        # A malformed port (a list, a map) is the schema check's to refuse, not a match.
        if isinstance(handler, Mapping) and (target == port or (isinstance(target, str) and target in names)):
            result[kind] = {**handler, "port": internal}
    return result


def _replace_port(words: list[str], port: int) -> bool:
    for index, word in enumerate(words):
        if word.startswith(f"{PORT_FLAG}="):
            words[index] = f"{PORT_FLAG}={port}"
            return True
        if word == PORT_FLAG and index + 1 < len(words):
            words[index + 1] = str(port)
            return True
    return False


def _known_engine(command: Sequence[str], args: Sequence[str]) -> bool:
    """vLLM (an image's entrypoint when no command is given, ``vllm``, its API server module) or SGLang."""
    if not command:
        return True
    words = [*command, *args]
    return (os.path.basename(command[0]) == "vllm" or "vllm.entrypoints.openai.api_server" in words
            or "sglang.launch_server" in words or os.path.basename(command[0]) == "sglang")


def _free_port(spec: Mapping[str, Any], avoid: int) -> int:
    taken = {avoid} | {port.get("containerPort") for container in
                       [*spec.get("containers", []), *(spec.get("initContainers") or [])]
                       for port in container.get("ports") or []}
    internal = ENGINE_PORT
    while internal in taken:
        internal += 1
    return internal


def _port_name(engine: Mapping[str, Any], port: int) -> str:
    """The serving port's name, which the sidecar takes over (a PodMonitor may name it); else ``http``."""
    for given in engine.get("ports") or []:
        if given.get("containerPort") == port and given.get("name"):
            return str(given["name"])
    return "http"


def _connector(service: InferenceService, role: Role, sidecar: Sidecar) -> str | None:
    """The sidecar mode the role's engine's KV-transfer setting needs; None for a role that moves no KV
    (refused on a prefiller or decoder: it could not hand over or take a prefill's KV)."""
    engine = role.template["spec"]["containers"][0]
    words = [str(word) for word in [*(engine.get("command") or []), *(engine.get("args") or [])]]
    path = f"{role.template_path}.spec.containers[0]"
    if _value(words, SGLANG_DISAGGREGATION_FLAG) is not None:
        return SGLANG_MODE
    given = _value(words, KV_TRANSFER_FLAG)
    name = _value(words, f"{KV_TRANSFER_FLAG}.kv_connector")
    config: Any = {}
    if given is not None:
        try:
            config = json.loads(given)
        except ValueError:
            config = None
        if not isinstance(config, dict):
            raise InvalidSpec(service.where, f"{path}.args",
                              f"{KV_TRANSFER_FLAG} must be a JSON object, got {show(given)}")
        name = config.get("kv_connector")
    if name is None:
        if role.component_type not in (ComponentType.PREFILLER, ComponentType.DECODER):
            return None
        raise InvalidSpec(service.where, f"{path}.args",
                          f"a {role.component_type} under a router needs its engine's KV transfer for the "
                          f"prefill/decode sidecar to wire: vLLM's {KV_TRANSFER_FLAG} (kv_connector one of "
                          f"{_choices()}) or SGLang's {SGLANG_DISAGGREGATION_FLAG}")
    if name == MULTI_CONNECTOR:
        inner = [part.get("kv_connector") for part in
                 (config.get("kv_connector_extra_config") or {}).get("connectors") or [] if isinstance(part, dict)]
        if "NixlConnector" in inner:
            return VLLM_CONNECTORS["NixlConnector"]
    if name in VLLM_CONNECTORS:
        return VLLM_CONNECTORS[name]
    raise InvalidSpec(service.where, f"{path}.args",
                      f"kv_connector {show(name)} has no mode in the {sidecar.image} prefill/decode sidecar; use "
                      f"one of {_choices()} (or SGLang's {SGLANG_DISAGGREGATION_FLAG}), or run a sidecar of your own")


def _check_connectors_agree(service: InferenceService, connectors: Mapping[str, str | None]) -> None:
    modes = {connectors[role.name]: role for role in service.roles if connectors[role.name] is not None}
    if len(modes) > 1:
        (first, one), (second, other) = sorted(modes.items(), key=lambda item: item[1].position)[:2]
        raise InvalidSpec(service.where, f"{other.template_path}.spec.containers[0].args",
                          f"moves KV by the sidecar's {second} protocol but role {one.name} by {first}: a prefill and "
                          "its decode must use one KV connector")


def _choices() -> str:
    return ", ".join([*VLLM_CONNECTORS, f"{MULTI_CONNECTOR} with NixlConnector"])


def _value(words: Sequence[str], flag: str) -> str | None:
    for index, word in enumerate(words):
        if word.startswith(f"{flag}="):
            return word.partition("=")[2]
        if word == flag and index + 1 < len(words):
            return words[index + 1]
    return None


def _runs_sidecar(template: Mapping[str, Any], sidecar: Sidecar) -> bool:
    repository = sidecar.image.rpartition(":")[0].rpartition("/")[2]
    spec = template["spec"]
    return any(str(container.get("image", "")).rpartition("/")[2].partition(":")[0].partition("@")[0] == repository
               for container in [*spec.get("containers", []), *(spec.get("initContainers") or [])])


def _ours(template: Mapping[str, Any]) -> bool:
    return any(container.get("name") == CONTAINER_NAME for container in template["spec"].get("initContainers") or [])


def _service_account(template: Mapping[str, Any]) -> str:
    spec = template["spec"]
    return str(spec.get("serviceAccountName") or spec.get("serviceAccount") or "default")
