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

from collections.abc import Mapping

from fusion_helm.base.kinds import POD, SERVICE_ACCOUNT, inference_pool
from fusion_helm.errors import InvalidSpec, show
from fusion_helm.expand import tls, tokens
from fusion_helm.expand.generations import Generation, Routing, Sidecar
from fusion_helm.expand.labelling import object_metadata, role_labels
from fusion_helm.expand.names import pd_sidecar_name, router_name
from fusion_helm.expand.pods import Change, Pod, Pods, RoleTemplates
from fusion_helm.expand.proxies import (
    ENABLE_TLS_FLAG,
    PREFILL_HEADER,
    SECURE_FLAG,
    TLS_STAGES,
    Proxy,
    entries,
    routing_proxy,
    taken_ports,
)
from fusion_helm.expand.router.rbac import reader_role, reads_kind
from fusion_helm.limits import count
from fusion_helm.model import ComponentType, InferenceService, Role, Router
from fusion_helm.model.engine import NOT_JSON, ServerCommand
from fusion_helm.model.engine_flags import DISAGGREGATION_MODE, KV_TRANSFER_CONFIG, PORT
from fusion_helm.model.exposure import Tls

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONTAINER_NAME = "pd-sidecar"
ENGINE_PORT = 8200
"""Where the engine moves to behind the sidecar (llm-d's own choice), or the next free port."""
SIDECAR_USER = 65532
"""The user the llm-d images run as (distroless "nonroot")."""
RESOURCES = {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}}
"""A proxy's share: it holds requests in flight, prompts included, and nothing else."""
HEALTH_PATH = "/health"
"""The sidecar's own health endpoint: 200 once it listens."""
TRUST_VARIABLE = "SSL_CERT_DIR"

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


def kv_connector(service: InferenceService, generation: Generation) -> str | None:
    """The sidecar mode for the KV connector a prefill/decode service's engines speak (one for every role that
    moves KV); None where none does."""
    sidecar = generation.pd_sidecar
    assert sidecar is not None, "generation_of refuses a prefill/decode service whose generation has no sidecar"
    connectors = {role.name: _connector(service, role, sidecar) for role in service.roles}
    _check_connectors_agree(service, connectors)
    return next((mode for mode in connectors.values() if mode is not None), None)


def decoder_sidecar(service: InferenceService, routing: Routing, role: Role, templates: RoleTemplates
                    ) -> Change | None:
    """The sidecar in front of the engine of each serving pod of a decoder ROLE, which the pool reaches on
    the router's port; where the role's serving pods run a routing proxy of the user's, that one, checked and
    adopted. None: the role is no decoder."""
    sidecar = routing.generation.pd_sidecar
    if role.component_type is not ComponentType.DECODER or sidecar is None or routing.kv_connector is None:
        return None
    router, port, connector = routing.router, routing.port, routing.kv_connector
    proxies = [routing_proxy(pod.template) for pod in templates.pods(Pods.SERVING)]
    if any(proxy is not None for proxy in proxies):
        for proxy in proxies:
            _check_adopted(service, routing, role, proxy)
        # The user's own wiring, adopted as written, but for an account and a token of its own to read the pool
        # with.
        return lambda pod: pod.with_template(with_own_account(service, router, _adopted_token(pod.template))
                                             if _reads_pool(pod.template) else dict(pod.template))

    def with_sidecar(pod: Pod) -> Pod:
        with_it = _with_sidecar(service, router, sidecar, role, port, connector, pod)
        return with_it.with_template(with_own_account(service, router, with_it.template))

    return with_sidecar


def sidecar_rbac(service: InferenceService, router: Router, templates: Mapping[str, RoleTemplates]
                 ) -> list[dict[str, Any]]:
    """Read access to the pool and its pods for the ServiceAccounts of the pods that run a sidecar with SSRF
    protection (ours, or a user's adopted), which reads them: a Role and its RoleBinding, and the decode pods'
    own ServiceAccount where their template names none (never the namespace's ``default``, which every other
    pod of it runs as); none where no pod runs one."""
    name = pd_sidecar_name(service.name, router.name)
    accounts = sorted({_service_account(template) for role in service.roles
                       if role.component_type is ComponentType.DECODER
                       for template in _serving_templates(templates[role.name]) if _reads_pool(template)})
    if not accounts:
        return []
    labels = role_labels(service, router)

    def metadata() -> dict[str, Any]:
        return object_metadata(service, name, labels)

    rules = [reads_kind(inference_pool(router.pool_api)), reads_kind(POD)]
    own = [{"apiVersion": SERVICE_ACCOUNT.api_version, "kind": SERVICE_ACCOUNT.kind, "metadata": metadata()}] \
        if name in accounts else []
    return [*own, *reader_role(name, metadata, rules, accounts, service.namespace)]


def _adopted_token(template: Mapping[str, Any]) -> dict[str, Any]:
    """TEMPLATE whose routing proxy, and no other container, mounts the ServiceAccount's token."""
    proxy = routing_proxy(template)
    assert proxy is not None
    field, _, index = proxy.field.partition("[")
    spec = dict(template["spec"])
    containers = list(spec[field])
    spec, containers[int(index.rstrip("]"))] = tokens.with_own_token(spec, proxy.container)
    return {**template, "spec": {**spec, field: containers}}


def with_own_account(service: InferenceService, router: Router, template: Mapping[str, Any]) -> dict[str, Any]:
    """A decode pod's template that reads the pool (its sidecar's SSRF protection) with a ServiceAccount of its
    own where it names none."""
    spec = template["spec"]
    if spec.get("serviceAccountName") or spec.get("serviceAccount"):
        return dict(template)
    return {**template, "spec": {**spec, "serviceAccountName": pd_sidecar_name(service.name, router.name)}}


def _serving_templates(templates: RoleTemplates) -> list[Mapping[str, Any]]:
    return [pod.template for pod in templates.pods(Pods.SERVING)]


def _check_adopted(service: InferenceService, routing: Routing, role: Role, proxy: Proxy | None) -> None:
    """A routing proxy of the user's stands in front of the engine as the pool and the engine need it, and
    speaks what the picker sends, the engines' KV protocol, and HTTP or HTTPS as spec.tls has them."""
    router, port = routing.router, routing.port
    spec_path = f"{role.template_path}.spec"
    if proxy is None:
        raise InvalidSpec(service.where, f"{spec_path}.containers",
                          "runs no routing proxy on this serving pod, while the role's other serving pods run one of "
                          "their own: give every serving pod the same, or none (the router then adds its own)")
    field = f"{spec_path}.{proxy.field}.args"
    name = proxy.container.get("name")
    if proxy.listen_port != str(port):
        raise InvalidSpec(service.where, field,
                          f"the routing proxy {show(name)} listens on {show(proxy.listen_port)} (--port), but the "
                          f"InferencePool routes to {port}; make them one (its --port, or the router's targetPort)")
    engine = role.server(service.where)
    listening = _engine_listens(service, role, engine)
    if proxy.engine_port != listening:
        raise InvalidSpec(service.where, field,
                          f"the routing proxy {show(name)} forwards to port {show(proxy.engine_port)} "
                          f"(--{proxy.kind.engine_port_flags[0]}), but the engine listens on {show(listening)}; "
                          "make them one")
    if proxy.ssrf_protection:
        pool = proxy.pool
        ours = router_name(service.name, router.name)
        if pool is None or pool.rpartition("/")[2] != ours:
            raise InvalidSpec(service.where, field,
                              f"the routing proxy {show(name)} protects against SSRF with the InferencePool "
                              f"{show(pool)}, but the service's pool is {ours}: name it (--{proxy.kind.pool_flags[0]})")
    _check_adopted_speaks(service, routing, f"{spec_path}.{proxy.field}", proxy)


def _check_adopted_speaks(service: InferenceService, routing: Routing, field: str, proxy: Proxy) -> None:
    """What the proxy's release and flags speak, against what the picker, the engines and spec.tls need
    (fusion_helm/expand/proxies.py); what its image names no release of is taken as written."""
    name, kind = show(proxy.container.get("name")), proxy.kind
    if proxy.reads_host_port_header is False:
        raise InvalidSpec(service.where, f"{field}.image",
                          f"the routing proxy {name} ({show(proxy.container.get('image'))}) reads the prefill pod "
                          f"from x-prefiller-url alone, but the {routing.generation.name} picker names it in "
                          f"{PREFILL_HEADER} (read from {kind.repository} {_release(kind.host_port_header_since)}): "
                          "every request would decode whole and the prefill pods idle; use that release or a later "
                          "one, or remove the proxy (the router then adds its own)")
    connector = proxy.connector
    if connector is not None and routing.kv_connector is not None and connector != routing.kv_connector:
        raise InvalidSpec(service.where, f"{field}.args",
                          f"the routing proxy {name} drives the prefill and decode by {show(connector)} "
                          f"(--{kind.connector_flag}), but the engines' KV transfer speaks "
                          f"{routing.kv_connector}: give --{kind.connector_flag}={routing.kv_connector}")
    served, dialled = proxy.serves_tls, proxy.dials_tls
    tls_flags = (" ".join(f"--{flag}" for flag in kind.engine_tls_flags) if kind.engine_tls_flags
                 else f"--{ENABLE_TLS_FLAG}={','.join(TLS_STAGES)}")
    if service.tls is not None:
        if served is False:
            raise InvalidSpec(service.where, f"{field}.args",
                              f"the routing proxy {name} serves plain HTTP, but spec.tls has the gateway reach the "
                              f"pool's pods in HTTPS: {_tls_fix(proxy, SECURE_FLAG + '=true')}")
        if dialled is not None and not all(dialled):
            raise InvalidSpec(service.where, f"{field}.args",
                              f"the routing proxy {name} dials {_plain_stages(dialled)} in plain HTTP, but under "
                              f"spec.tls the engines serve HTTPS: give {tls_flags}")
        return
    if served:
        raise InvalidSpec(service.where, f"{field}.args",
                          f"the routing proxy {name} serves HTTPS (--{SECURE_FLAG} is on unless set false), but "
                          f"without spec.tls the gateway reaches the pool's pods in plain HTTP: give "
                          f"--{SECURE_FLAG}=false, or set spec.tls")
    if dialled is not None and any(dialled):
        raise InvalidSpec(service.where, f"{field}.args",
                          f"the routing proxy {name} dials its engines in TLS, but without spec.tls they serve plain "
                          f"HTTP: drop {tls_flags}, or set spec.tls")


def _release(version: tuple[int, ...]) -> str:
    return "v" + ".".join(map(str, version))


def _tls_fix(proxy: Proxy, flag: str) -> str:
    """How to have PROXY serve HTTPS: its flag, or a release that can."""
    if proxy.version is not None and proxy.version < proxy.kind.tls_since:
        return f"use {proxy.kind.repository} {_release(proxy.kind.tls_since)} or later, which serves it"
    return f"give --{flag}"


def _plain_stages(dialled: tuple[bool, bool]) -> str:
    stages = [stage for stage, tls in zip(TLS_STAGES, dialled, strict=True) if not tls]
    return " and ".join(f"the {stage} engine" for stage in stages)


def _engine_listens(service: InferenceService, role: Role, engine: ServerCommand) -> str:
    """The port the role's engine listens on, as its command line says."""
    value, occurrence = engine.value(PORT)
    if occurrence is not None:
        return value or ""
    if engine.engine is None:
        raise InvalidSpec(service.where, f"{role.template_path}.spec.containers[0].args",
                          "runs neither vllm nor sglang, so the port its routing proxy forwards to cannot be checked "
                          "against it; give the engine --port")
    return str(engine.engine.default_port)


def _with_sidecar(service: InferenceService, router: Router, sidecar: Sidecar, role: Role, port: int,
                  connector: str, pod: Pod) -> Pod:
    spec = pod.spec
    path = f"{role.template_path}.spec"
    if any(volume.get("name") == tokens.TOKEN_VOLUME for volume in entries(spec.get("volumes"))):
        raise InvalidSpec(service.where, f"{path}.volumes",
                          f"has a volume named {tokens.TOKEN_VOLUME}, the name of the prefill/decode sidecar's "
                          "ServiceAccount token: rename it")
    _check_port_free(service, role, spec, port)
    engine = spec["containers"][0]
    internal = _free_port(spec, avoid=port)
    moved, moved_server = _moved_engine(service, role, pod, port, internal)
    pool = f"$(POD_NAMESPACE)/{router_name(service.name, router.name)}"
    container: dict[str, Any] = {
        "name": CONTAINER_NAME,
        "image": sidecar.image,
        "imagePullPolicy": "IfNotPresent",
        "args": [f"--port={port}", f"--model-server-port={internal}", f"--kv-connector={connector}",
                 *_tls_args(service), "--enable-ssrf-protection=true", f"--inference-pool={pool}",
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
    if service.tls is not None:
        container["readinessProbe"] = tls.https_probe(container["readinessProbe"])
        container["volumeMounts"] = [tls.mount()]
        if len(_unverified(service.tls)) < len(TLS_STAGES):  # Go's TLS clients trust the certificates there
            container["env"] = [*container["env"], {"name": TRUST_VARIABLE, "value": tls.MOUNT_PATH}]
    # Its SSRF protection reads the pool and its pods with the ServiceAccount's token: its own, not the engine's.
    spec, container = tokens.with_own_token(spec, container)
    return pod.with_spec({**spec, "initContainers": [*(spec.get("initContainers") or []), container],
                          "containers": [moved, *spec["containers"][1:]]}, moved_server)


def _tls_args(service: InferenceService) -> list[str]:
    """Without spec.tls the gateway reaches the pool's pods in plain HTTP, as it does a monolithic service's;
    with it the sidecar serves HTTPS with the pod's certificate and dials both engines in TLS, verifying what
    it can (``_unverified``)."""
    if service.tls is None:
        return [f"--{SECURE_FLAG}=false"]
    unverified = _unverified(service.tls)
    return [f"--{SECURE_FLAG}=true", f"--cert-path={tls.MOUNT_PATH}", f"--{ENABLE_TLS_FLAG}={','.join(TLS_STAGES)}",
            *([f"--tls-insecure-skip-verify={','.join(unverified)}"] if unverified else [])]


def _unverified(given: Tls) -> tuple[str, ...]:
    """The stages whose engine's certificate the sidecar does not verify: with verifyPeers none; else, where
    cert-manager issues the certificate (its CA in the Secret's ca.crt, and localhost among its names), the
    prefill engine alone, which the sidecar dials by its pod's address, which no certificate issued ahead
    names; else both."""
    if given.verify_peers:
        return ()
    return ("prefiller",) if given.cert_manager is not None else TLS_STAGES


def _check_port_free(service: InferenceService, role: Role, spec: Mapping[str, Any], port: int) -> None:
    """No container but the engine (which moves) may take the port the sidecar must listen on."""
    engine = spec["containers"][0]
    others = {**spec, "containers": spec["containers"][1:]}
    taken = taken_ports(others).get(port)
    if taken is not None:
        raise InvalidSpec(service.where, f"{role.template_path}.spec.{_shifted(taken)}",
                          f"takes port {port}, where the InferencePool routes and the prefill/decode sidecar must "
                          f"listen in front of the engine ({show(engine.get('name'))}); move that container to "
                          "another port, or remove it")


def _shifted(field: str) -> str:
    """A field of the spec without its first container (the engine), as the template numbers it."""
    head, _, rest = field.partition("]")
    if not head.startswith("containers["):
        return field
    return f"containers[{int(head.removeprefix('containers[')) + 1}]{rest}"


def _moved_engine(service: InferenceService, role: Role, pod: Pod, port: int, internal: int
                  ) -> tuple[dict[str, Any], ServerCommand]:
    """The engine container listening on INTERNAL instead of PORT: its --port (in its command line, or
    given to its script, or to the bootstrap's command that runs it), its declared port and the probes
    that named PORT; and its new command line."""
    engine, server = pod.serving_container, pod.server
    assert server is not None, "a serving pod runs a server"
    if server.engine is None:
        raise InvalidSpec(service.where, f"{role.template_path}.spec.containers[0].command",
                          "runs neither vllm nor sglang (in exec form, or as a script's last exec), so the "
                          "prefill/decode sidecar cannot move its port (--port) to stand in front of it; run one of "
                          "them, or run a routing proxy of your own in the pod")
    # The ports the engine leaves: the pool's (the sidecar's now) and the one its --port said, where another.
    left = {port, *_listening(server)}
    moved_server = server.with_value(PORT, str(internal), "the prefill/decode sidecar moves the engine's --port")
    moved = pod.running(moved_server)
    ports = [dict(given) for given in engine.get("ports") or []]
    ours = [given for given in ports if given.get("containerPort") in left]
    names = {str(given["name"]) for given in ours if given.get("name")}
    for given in ours:
        given.pop("name", None)
        given["containerPort"] = internal
    unique = [given for at, given in enumerate(ports) if given not in ports[:at]]  # two that moved become one
    moved["ports"] = unique if ours else [*ports, {"containerPort": internal, "protocol": "TCP"}]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        if isinstance(engine.get(probe), Mapping):
            moved[probe] = _retargeted(engine[probe], left, names, internal)
    return moved, moved_server


def _listening(server: ServerCommand) -> set[int]:
    """The port the engine's command line has it listen on, where it says one as a number (an expansion
    in a script's words is read as written: nothing to match a probe's port against)."""
    value, occurrence = server.value(PORT)
    if occurrence is None:
        return {server.engine.default_port} if server.engine is not None else set()
    number = count(value or "")
    return {number} if number is not None else set()


def _retargeted(probe: Mapping[str, Any], left: set[int], names: set[str], internal: int) -> dict[str, Any]:
    """A probe of the engine asks the engine, at its new port, wherever it asked at a port the engine left."""
    result = dict(probe)
    for kind in ("httpGet", "tcpSocket", "grpc"):
        handler = probe.get(kind)
        target = handler.get("port") if isinstance(handler, Mapping) else None
        # A malformed port (a list, a map) is the schema check's to refuse, not a match.
        if isinstance(handler, Mapping) and ((isinstance(target, int) and not isinstance(target, bool)
                                              and target in left) or (isinstance(target, str) and target in names)):
            result[kind] = {**handler, "port": internal}
    return result


def _free_port(spec: Mapping[str, Any], avoid: int) -> int:
    """The engine's new port: ENGINE_PORT, or the next that no container of the pod takes (declared, or
    named by a flag of its command line)."""
    taken = {avoid, *taken_ports(spec)}
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
    server = role.server(service.where)
    if server.given(DISAGGREGATION_MODE):
        return SGLANG_MODE
    config, occurrence = server.json_value(KV_TRANSFER_CONFIG)
    flag = KV_TRANSFER_CONFIG.name(server.engine)
    if occurrence is None:
        if role.component_type not in (ComponentType.PREFILLER, ComponentType.DECODER):
            return None
        if server.unread:
            raise InvalidSpec(service.where, server.script_field,
                              f"a {role.component_type} under a router needs its engine's KV transfer for the "
                              f"prefill/decode sidecar to wire, and the script that starts it cannot be read for "
                              f"one: {server.unread}; end it by exec'ing the engine (exec vllm serve …)")
        raise InvalidSpec(service.where, f"{role.template_path}.spec.containers[0].args",
                          f"a {role.component_type} under a router needs its engine's KV transfer for the "
                          f"prefill/decode sidecar to wire: vLLM's {flag} (kv_connector one of "
                          f"{_choices()}) or SGLang's {DISAGGREGATION_MODE.name(server.engine)}")
    if config is NOT_JSON or not isinstance(config, dict):
        raise InvalidSpec(service.where, server.field(occurrence),
                          f"{occurrence.written} must be a JSON object, got {show(occurrence.value)}")
    name = config.get("kv_connector")
    if name == MULTI_CONNECTOR:
        inner = [part.get("kv_connector") for part in
                 (config.get("kv_connector_extra_config") or {}).get("connectors") or [] if isinstance(part, dict)]
        if "NixlConnector" in inner:
            return VLLM_CONNECTORS["NixlConnector"]
    if isinstance(name, str) and name in VLLM_CONNECTORS:
        return VLLM_CONNECTORS[name]
    raise InvalidSpec(service.where, server.field(occurrence),
                      f"kv_connector {show(name)} has no mode in the {sidecar.image} prefill/decode sidecar; use "
                      f"one of {_choices()} (or SGLang's {DISAGGREGATION_MODE.name(server.engine)}), or run a "
                      "sidecar of your own")


def _check_connectors_agree(service: InferenceService, connectors: Mapping[str, str | None]) -> None:
    modes = {connectors[role.name]: role for role in service.roles if connectors[role.name] is not None}
    if len(modes) > 1:
        (first, one), (second, other) = sorted(modes.items(), key=lambda item: item[1].position)[:2]
        raise InvalidSpec(service.where, f"{other.template_path}.spec.containers[0].args",
                          f"moves KV by the sidecar's {second} protocol but role {one.name} by {first}: a prefill and "
                          "its decode must use one KV connector")


def _choices() -> str:
    return ", ".join([*VLLM_CONNECTORS, f"{MULTI_CONNECTOR} with NixlConnector"])


def _reads_pool(template: Mapping[str, Any]) -> bool:
    """The pod runs a sidecar whose SSRF protection reads the pool: ours, or an adopted one with it on."""
    proxy = routing_proxy(template)
    return proxy is not None and proxy.ssrf_protection


def _service_account(template: Mapping[str, Any]) -> str:
    spec = template["spec"]
    return str(spec.get("serviceAccountName") or spec.get("serviceAccount"))
