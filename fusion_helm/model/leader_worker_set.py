"""Taking over a plain LeaderWorkerSet: converted one way into a service of one worker role, so it is
expanded (one LeaderWorkerSet per replica, a PodGroup when multi-node) like any InferenceService.

The pods keep their own commands: no Ray bootstrap is added unless the LeaderWorkerSet asks for it.
What the conversion cannot honour is an error naming the field, never dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fusion_helm.errors import InvalidSpec
from fusion_helm.model.inference_service import (
    DEFAULT_SERVING_COMMAND,
    ComponentType,
    InferenceService,
    RecoveryPolicy,
    Role,
    check_dns_label,
)
from fusion_helm.model.validation import validate_pod_template

LWS_API_VERSION = "leaderworkerset.x-k8s.io/v1"
LWS_KIND = "LeaderWorkerSet"
TAKE_OVER_ANNOTATION = "fusioninfer.io/take-over"
"""``"true"`` on a LeaderWorkerSet: the post-renderer takes it over (``--take-over-lws`` takes all)."""
RAY_ANNOTATION = "fusioninfer.io/ray-bootstrap"
"""``"true"``: start the leader and workers with the Ray bootstrap, as a multi-node role's are (the
worker template's first container then holds the server's command; there is no leaderTemplate)."""
ROLE_NAME = "group"
"""The role a taken-over LeaderWorkerSet becomes: its replicas are LWS groups. Its replicas are named
``<name>-group-<i>``, which nothing of the original LeaderWorkerSet (``<name>``, ``<name>-<i>``…) is."""

RESTART_POLICIES = {"RecreateGroupOnPodRestart": RecoveryPolicy.ROLE_RESTART, "None": RecoveryPolicy.NONE,
                    "Default": RecoveryPolicy.NONE}
"""LWS's "Default" is its deprecated name for "None"."""

UNSUPPORTED = {
    ("spec", "rolloutStrategy", "rollingUpdateConfiguration"):
        "rolls out across replicas, but each replica becomes its own LeaderWorkerSet and `helm upgrade` "
        "updates them together; remove it",
    ("spec", "leaderWorkerTemplate", "subGroupPolicy"):
        "splits a replica into subgroups, which the PodGroup does not place separately; remove it",
    ("spec", "leaderWorkerTemplate", "volumeClaimTemplates"):
        "is not carried to the per-replica LeaderWorkerSets; mount volumes through the pod templates",
    ("spec", "leaderWorkerTemplate", "persistentVolumeClaimRetentionPolicy"):
        "goes with volumeClaimTemplates, which are not carried over; remove it",
}


def is_leader_worker_set(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") == LWS_KIND and obj.get("apiVersion") == LWS_API_VERSION


def opts_in(obj: Mapping[str, Any]) -> bool:
    metadata = obj.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return isinstance(annotations, Mapping) and annotations.get(TAKE_OVER_ANNOTATION) == "true"


def parse_leader_worker_set(obj: Mapping[str, Any]) -> InferenceService:
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        metadata = {}
    name = metadata.get("name")
    where = f"{LWS_KIND} {name}"
    name = check_dns_label(where if isinstance(name, str) else LWS_KIND, "metadata.name", name)
    for field in ("labels", "annotations"):
        value = metadata.get(field) or {}
        if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
            raise InvalidSpec(where, f"metadata.{field}", "must be a map of strings")
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        raise InvalidSpec(where, "spec", "must be an object")
    counts = {}
    for path, least in ((("spec", "replicas"), 0), (("spec", "leaderWorkerTemplate", "size"), 1)):
        value = _get(obj, path)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < least):
            raise InvalidSpec(where, ".".join(path), f"must be a whole number >= {least}, got {value!r}")
        counts[path[-1]] = 1 if value is None else value
    for path, why in UNSUPPORTED.items():
        if _get(obj, path) is not None:
            raise InvalidSpec(where, ".".join(path), f"cannot be taken over: it {why}")
    if _get(obj, ("spec", "networkConfig", "subdomainPolicy")) == "Shared":
        raise InvalidSpec(where, "spec.networkConfig.subdomainPolicy",
                          "cannot be taken over: Shared puts every replica under one subdomain, and each replica "
                          "becomes its own LeaderWorkerSet with its own; use UniquePerReplica or remove it")
    template = spec.get("leaderWorkerTemplate")
    if not isinstance(template, Mapping):
        raise InvalidSpec(where, "spec.leaderWorkerTemplate", "must be an object")
    worker, leader = template.get("workerTemplate"), template.get("leaderTemplate")
    if worker is None:
        raise InvalidSpec(where, "spec.leaderWorkerTemplate.workerTemplate", "is required")
    for key, pod in (("workerTemplate", worker), ("leaderTemplate", leader)):
        if pod is not None:
            validate_pod_template(pod, where, f"spec.leaderWorkerTemplate.{key}")
    if spec.get("startupPolicy") == "LeaderReady" and counts["size"] > 1:
        raise InvalidSpec(where, "spec.startupPolicy",
                          "cannot be taken over as LeaderReady: LWS then creates the workers only once the leader "
                          "is ready, while the gang places a replica's pods together, so the leader would wait "
                          "for them forever; use LeaderCreated (the default)")
    ray = (metadata.get("annotations") or {}).get(RAY_ANNOTATION) == "true"
    if ray and leader is not None:
        raise InvalidSpec(where, "spec.leaderWorkerTemplate.leaderTemplate",
                          f"must be absent with {RAY_ANNOTATION}: \"true\": the Ray bootstrap makes the leader "
                          "from the worker template")
    restart = template.get("restartPolicy", "RecreateGroupOnPodRestart")
    if restart not in RESTART_POLICIES:
        raise InvalidSpec(where, "spec.leaderWorkerTemplate.restartPolicy",
                          f"cannot be taken over: {restart!r} (supported: {', '.join(RESTART_POLICIES)})")
    role = Role(
        name=ROLE_NAME,
        component_type=ComponentType.WORKER,
        replicas=counts["replicas"],
        node_count=counts["size"],
        serving_command=DEFAULT_SERVING_COMMAND,
        template=worker,
        position=-1,
        recovery_policy=RESTART_POLICIES[restart],
        leader_template=leader,
        ray_bootstrap=ray,
        startup_policy=spec.get("startupPolicy"),
    )
    annotations = {key: value for key, value in (metadata.get("annotations") or {}).items()
                   if key not in (TAKE_OVER_ANNOTATION, RAY_ANNOTATION)}
    return InferenceService(name=name, roles=(role,), namespace=metadata.get("namespace"),
                            labels=dict(metadata.get("labels") or {}), kind=LWS_KIND, annotations=annotations)


def _get(obj: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = obj
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node
