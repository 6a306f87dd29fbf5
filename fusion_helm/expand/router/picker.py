"""The endpoint picker: its Deployment, Service, configuration, and the namespaced RBAC to watch its
pool, the pool's model objects and the pods."""

from __future__ import annotations

import copy

from fusion_helm.base.kinds import (
    CONFIG_MAP,
    DEPLOYMENT,
    POD,
    POD_DISRUPTION_BUDGET,
    SERVICE,
    SERVICE_ACCOUNT,
    inference_pool,
)
from fusion_helm.base.labels import ANNOTATION_PICKER_CONFIG_HASH
from fusion_helm.errors import InvalidSpec, format_path, key_path, show
from fusion_helm.expand import resources, tls
from fusion_helm.expand.digest import short_hash
from fusion_helm.expand.generations import EXPERIMENTAL_FLAG, GENERATIONS, Generation
from fusion_helm.expand.labelling import object_metadata, role_labels
from fusion_helm.expand.names import picker_name, router_name
from fusion_helm.expand.router import precise
from fusion_helm.expand.router.picker_config import screens_revisions
from fusion_helm.expand.router.ports import GRPC_HEALTH_PORT, METRICS_PORT, METRICS_PORT_NAME, PICKER_GRPC_PORT
from fusion_helm.expand.router.rbac import reader_role, reads, reads_kind
from fusion_helm.model import InferenceService, Router

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from fusion_helm.expand.pods import Pod

CONFIG_DIR = "/config"
CONFIG_KEY = "config.yaml"
HEALTH_SERVICE = "inference-extension"
PICKER_USER = 65532
"""The user the picker images run as (distroless "nonroot")."""
DEFAULT_RESOURCES = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "4Gi"}}
"""What the scheduler reserves for the picker unless the router says otherwise, and a bound on its
memory: llm-d's sizing for 50 to 100 requests a second of 1k output tokens (its memory grows with the
requests in flight), so a leak or a flood ends in a restart, not in the node's other pods evicted."""
SCRATCH_DIR = "/tmp"
"""The one place the picker writes (Go's temporary files), an emptyDir: its root file system is read-only."""
SCRATCH_LIMIT = "64Mi"
SPREAD_KEYS = ("kubernetes.io/hostname", "topology.kubernetes.io/zone")
STOP_DELAY = 10
"""Seconds a stopping picker of a generation that stops at once keeps serving (its preStop sleep): the
gateway learns it is going from the endpoints, within seconds, and sends it nothing new after."""


def picker_image(router: Router, generation: Generation) -> str:
    return router.picker_image or generation.image


def picker_args(service: InferenceService, router: Router, generation: Generation) -> list[str]:
    """The flags the router sets, then the user's others (over the generation's defaults); a user flag
    may repeat ours, not contradict it."""
    flags = generation.flags
    ours = {flags.pool_name: router_name(service.name, router.name),
            flags.pool_namespace: "$(NAMESPACE)"}
    if flags.pool_group is not None:
        ours[flags.pool_group] = router.pool_api.group
    ours |= {flags.grpc_port: str(PICKER_GRPC_PORT), flags.grpc_health_port: str(GRPC_HEALTH_PORT),
             flags.config_file: f"{CONFIG_DIR}/{CONFIG_KEY}"}
    if screens_revisions(service):  # the rollout screener is an Alpha plugin
        ours[EXPERIMENTAL_FLAG] = "true"
    if service.tls is not None and flags.metrics_scheme is not None and flags.metrics_insecure is not None:
        # Only where it does not verify (generation_of refuses verifyPeers to a picker that cannot).
        ours |= {flags.metrics_scheme: "https", flags.metrics_insecure: "true"}
    others = {name for other in GENERATIONS.values() for name in other.flags.names() if name} - \
        set(flags.names())
    extra = {**generation.metric_flags, **generation.default_flags}
    for name, value in sorted(router.picker_flags.items()):
        path = key_path(f"{router.path}.endpointPicker.flags", name)
        if name in generation.refused_flags:
            raise InvalidSpec(service.where, path,
                              f"is deprecated in the {generation.name} picker: {generation.refused_flags[name]}")
        if name in others:
            raise InvalidSpec(service.where, path,
                              f"is a flag of another endpoint picker generation, not of the {generation.name} "
                              "picker the router runs; remove it (the router sets the pool's flags)")
        if name in ours and value != ours[name]:
            raise InvalidSpec(service.where, path,
                              f"is set by the router to {show(ours[name])} (its {router.pool_api.value} pool), not "
                              f"{show(value)}; remove it")
        if name not in ours:
            extra[name] = value
    return [f"--{name}={value}" for name, value in [*ours.items(), *extra.items()]]


def picker_objects(service: InferenceService, router: Router, generation: Generation, image: str,
                   config: str, render: tuple[Pod, str] | None = None) -> list[dict[str, Any]]:
    """RENDER: the serving pod whose model the picker's render server tokenizes for (precise routing), and
    the name it serves that model under."""
    name = picker_name(service.name, router.name)
    labels = role_labels(service, router)

    def metadata() -> dict[str, Any]:
        return object_metadata(service, name, labels)

    rules = [reads_kind(inference_pool(router.pool_api)),
             *(reads(group, resources) for group, resources in generation.watches.items()),
             reads_kind(POD)]
    return [
        {"apiVersion": SERVICE_ACCOUNT.api_version, "kind": SERVICE_ACCOUNT.kind, "metadata": metadata()},
        *reader_role(name, metadata, rules, [name], service.namespace),
        {"apiVersion": CONFIG_MAP.api_version, "kind": CONFIG_MAP.kind, "metadata": metadata(),
         "data": {CONFIG_KEY: config}},
        {"apiVersion": SERVICE.api_version, "kind": SERVICE.kind, "metadata": metadata(), "spec": {
            "selector": labels,
            "ports": [{"name": "grpc-ext-proc", "port": PICKER_GRPC_PORT, "protocol": "TCP", "appProtocol": "http2"},
                      {"name": "http-metrics", "port": METRICS_PORT, "protocol": "TCP"}],
        }},
        {"apiVersion": DEPLOYMENT.api_version, "kind": DEPLOYMENT.kind, "metadata": metadata(), "spec": {
            "replicas": router.picker_replicas,
            # Every picker routes (none waits for a leader to go), so a new one serves before an old one
            # stops: an update never leaves the gateway without a picker, even with one replica.
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels, "annotations": {
                    **router.picker_pod_annotations, ANNOTATION_PICKER_CONFIG_HASH: short_hash(config)}},
                "spec": {
                    "serviceAccountName": name,
                    "securityContext": _given_or(router.picker_pod_security_context, _restricted_pod()),
                    # Requests in flight finish before the picker stops.
                    "terminationGracePeriodSeconds": 130,
                    "topologySpreadConstraints": [_spread(key, labels) for key in SPREAD_KEYS],
                    **({} if render is None else {"initContainers": [precise.render_container(*render)]}),
                    "containers": [_container(service, router, generation, image)],
                    "volumes": [{"name": "config", "configMap": {"name": name}},
                                {"name": "tmp", "emptyDir": {"sizeLimit": SCRATCH_LIMIT}},
                                *([tls.volume(service.tls)] if service.tls and service.tls.verify_peers else []),
                                *([] if render is None else precise.render_volumes(render[0]))],
                },
            },
        }},
        *([_disruption_budget(metadata(), labels)] if router.picker_replicas > 1 else []),
    ]


def _spread(key: str, labels: Mapping[str, str]) -> dict[str, Any]:
    """The pickers apart, one node's (or zone's) loss taking one of them: a preference, so that a small
    or full cluster still runs them all. Only nodes a picker may run on count (a GPU node's taint it does
    not tolerate keeps that node out), and only the pickers of one revision (a rolling update's old ones
    are going)."""
    return {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": dict(labels)}, "matchLabelKeys": ["pod-template-hash"],
            "nodeTaintsPolicy": "Honor"}


def _disruption_budget(metadata: dict[str, Any], labels: Mapping[str, str]) -> dict[str, Any]:
    """A drain takes one picker at a time; one that is not Ready anyway may always go, so a broken
    picker never blocks a drain."""
    spec = {"maxUnavailable": 1, "selector": {"matchLabels": dict(labels)}, "unhealthyPodEvictionPolicy": "AlwaysAllow"}
    return {"apiVersion": POD_DISRUPTION_BUDGET.api_version, "kind": POD_DISRUPTION_BUDGET.kind,
            "metadata": metadata, "spec": spec}


def _container(service: InferenceService, router: Router, generation: Generation, image: str
               ) -> dict[str, Any]:
    probe = {"grpc": {"port": GRPC_HEALTH_PORT, "service": HEALTH_SERVICE}, "initialDelaySeconds": 5,
             "periodSeconds": 10}
    container: dict[str, Any] = {
        "name": "epp",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "args": picker_args(service, router, generation),
        "env": [{"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}],
        "ports": [{"name": "grpc", "containerPort": PICKER_GRPC_PORT},
                  {"name": "grpc-health", "containerPort": GRPC_HEALTH_PORT},
                  {"name": METRICS_PORT_NAME, "containerPort": METRICS_PORT}],
        # Its health service reports SERVING once the pool is synced, which may be before the ext-proc
        # port listens (the pickers make their TLS certificate first, seconds of CPU): Ready only once
        # both are so, as no probe is read before the startup probe has passed.
        "startupProbe": {"tcpSocket": {"port": PICKER_GRPC_PORT}, "periodSeconds": 2, "failureThreshold": 60},
        "livenessProbe": probe,
        "readinessProbe": probe,
        **({} if generation.drains_on_stop else {"lifecycle": {"preStop": {"sleep": {"seconds": STOP_DELAY}}}}),
        "volumeMounts": [{"name": "config", "mountPath": CONFIG_DIR, "readOnly": True},
                         {"name": "tmp", "mountPath": SCRATCH_DIR}, *([tls.mount()] if _verifies(service) else [])],
    }
    if router.picker_resources:
        try:
            resources.container_requests({"resources": router.picker_resources})
        except resources.QuantityError as error:
            raise InvalidSpec(service.where, format_path([f"{router.path}.endpointPicker", *error.path]),
                              str(error)) from None
    container["resources"] = _given_or(router.picker_resources, DEFAULT_RESOURCES)
    container["securityContext"] = _given_or(router.picker_security_context, _restricted_container())
    return container


def _verifies(service: InferenceService) -> bool:
    """The picker verifies the engines' certificates with spec.tls's CA (its metrics source reads it)."""
    return service.tls is not None and service.tls.verify_peers


def _restricted_pod() -> dict[str, Any]:
    """The pod-level settings of the Pod Security Standard "restricted", as the picker images run."""
    return {"runAsNonRoot": True, "runAsUser": PICKER_USER, "runAsGroup": PICKER_USER,
            "seccompProfile": {"type": "RuntimeDefault"}}


def _restricted_container() -> dict[str, Any]:
    """The container-level settings of the Pod Security Standard "restricted", and a root file system
    nothing can change."""
    return {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True}


def _given_or(given: Mapping[str, Any] | None, default: Mapping[str, Any]) -> dict[str, Any]:
    """The router's own value, even an empty one (which sets nothing), else the default."""
    return copy.deepcopy(dict(default if given is None else given))
