"""Taking over a plain LeaderWorkerSet: converted one way into a service of one worker role, so it is
expanded (a PodGroup when multi-node) like any InferenceService — in the replica layout into one
LeaderWorkerSet per replica, in the role layout into one LeaderWorkerSet kept whole under its own name.

The pods keep their own commands: no Ray bootstrap is added unless the LeaderWorkerSet asks for it.
What the conversion cannot honour is an error naming the field, never dropped.
"""

from __future__ import annotations

from collections.abc import Mapping

from fusion_helm.base.kinds import (
    DEFAULT_LAYOUT,
    LAYOUT_ANNOTATION,
    LEADER_WORKER_SET,
    RAY_BOOTSTRAP_ANNOTATION,
    TAKE_OVER_ANNOTATION,
    TAKE_OVER_LAYOUTS,
)
from fusion_helm.errors import InvalidSpec, clip, key_path, show
from fusion_helm.limits import MAX_REPLICAS
from fusion_helm.model import upstream
from fusion_helm.model.bootstrap import Bootstrap, MultiNode
from fusion_helm.model.component_types import ComponentType
from fusion_helm.model.inference_service import (
    DEFAULT_SERVING_COMMAND,
    InferenceService,
    Layout,
    RecoveryPolicy,
    Role,
)
from fusion_helm.model.metadata import check_dns_label, check_metadata
from fusion_helm.model.scaling import check_rollout
from fusion_helm.model.validation import check, validate_pod_template

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ROLE_NAME = "group"
"""The role a taken-over LeaderWorkerSet becomes: its replicas are LWS groups. In the replica layout they
are named ``<name>-group-<i>``, which nothing of the original LeaderWorkerSet (``<name>``, ``<name>-<i>``…)
is; in the role layout the role's one LeaderWorkerSet is the original's ``<name>``."""

ROLLOUT = ("spec", "rolloutStrategy", "rollingUpdateConfiguration")
VOLUME_CLAIM_FIELDS = ("volumeClaimTemplates", "persistentVolumeClaimRetentionPolicy")
"""leaderWorkerTemplate fields that go to the LWS's StatefulSets, not its pods."""

EXCLUSIVE_TOPOLOGY = "leaderworkerset.sigs.k8s.io/exclusive-topology"
"""Places each replica alone in a topology domain, by the leader's placement."""

RESTART_POLICIES = {"RecreateGroupOnPodRestart": RecoveryPolicy.ROLE_RESTART, "None": RecoveryPolicy.NONE,
                    "Default": RecoveryPolicy.NONE}
"""LWS's "Default" is its deprecated name for "None"."""

UNSUPPORTED = {
    ROLLOUT:
        "rolls out across replicas, but each replica becomes its own LeaderWorkerSet and `helm upgrade` "
        "updates them together; remove it",
    ("spec", "leaderWorkerTemplate", "subGroupPolicy"):
        "splits a replica into subgroups, which the PodGroup does not place separately; remove it",
    ("spec", "leaderWorkerTemplate", "volumeClaimTemplates"):
        "is not carried to the per-replica LeaderWorkerSets; mount volumes through the pod templates",
    ("spec", "leaderWorkerTemplate", "persistentVolumeClaimRetentionPolicy"):
        "goes with volumeClaimTemplates, which are not carried over; remove it",
}
"""Layout replica: what a LeaderWorkerSet split into one per replica cannot keep."""

ROLE_LAYOUT_UNSUPPORTED = {
    ("spec", "leaderWorkerTemplate", "subGroupPolicy"):
        "splits each group into subgroups to be placed apart, while the PodGroup places a group as one whole; "
        "remove it",
}
"""Layout role: the LeaderWorkerSet stays one, under its own name, so its rolloutStrategy, networkConfig
and volume claims (its StatefulSets keep their names, and so their claims) are carried over. Subgroups
are not: LWS makes them to place parts of a group apart, which the gang cannot express."""


def parse_leader_worker_set(obj: Mapping[str, Any], where: str | None = None,
                            default_layout: str = DEFAULT_LAYOUT) -> InferenceService:
    """The service a LeaderWorkerSet becomes, in the layout its annotation names, else DEFAULT_LAYOUT."""
    raw_metadata = obj.get("metadata")
    name = raw_metadata.get("name") if isinstance(raw_metadata, Mapping) else None
    where = where or (f"{LEADER_WORKER_SET.kind} {clip(name)}" if isinstance(name, str) and name
                      else LEADER_WORKER_SET.kind)
    metadata = check_metadata(where, raw_metadata, annotations=True)
    name = check_dns_label(where, "metadata.name", name)
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        raise InvalidSpec(where, "spec", "must be an object")
    layout = _layout(where, metadata.get("annotations") or {}, default_layout)
    whole = layout is Layout.ROLE
    refused, refusal = (ROLE_LAYOUT_UNSUPPORTED, "cannot be taken over in layout role") if whole \
        else (UNSUPPORTED, "cannot be taken over")
    for path, why in refused.items():
        if _get(obj, path) is not None:
            raise InvalidSpec(where, ".".join(path), f"{refusal}: it {why}")
    check(where, "", upstream.schema(LEADER_WORKER_SET.api_version, LEADER_WORKER_SET.kind), {**obj, "metadata": {}})
    counts = _counts(obj, metadata, whole, where)
    template = spec.get("leaderWorkerTemplate")
    if not isinstance(template, Mapping):
        raise InvalidSpec(where, "spec.leaderWorkerTemplate", "must be an object")
    rollout = _get(obj, ROLLOUT) if whole else None
    if rollout is not None:
        rollout = {key: value for key, value in rollout.items() if value is not None}  # the API server prunes nulls
        check_rollout(rollout, counts["replicas"], ".".join(ROLLOUT), where)
    worker, leader, ray = _templates(spec, template, metadata, counts["size"], where)
    restart = template.get("restartPolicy", "RecreateGroupOnPodRestart")
    if restart not in RESTART_POLICIES:
        raise InvalidSpec(where, "spec.leaderWorkerTemplate.restartPolicy",
                          f"cannot be taken over: {show(restart)} (supported: {', '.join(RESTART_POLICIES)})")
    role = Role(
        name=ROLE_NAME,
        component_type=ComponentType.WORKER,
        replicas=counts["replicas"],
        node_count=counts["size"],
        serving_command=DEFAULT_SERVING_COMMAND,
        template=worker if leader is None else leader,
        position=-1,
        recovery_policy=RESTART_POLICIES[restart],
        multinode=taken_over_bootstrap(ray, counts["size"], worker if leader is not None else None),
        startup_policy=spec.get("startupPolicy"),
        rollout=rollout,
        network_config=spec.get("networkConfig") if whole else None,
        volume_claims={key: template[key] for key in VOLUME_CLAIM_FIELDS if key in template} if whole else {},
    )
    annotations = {key: value for key, value in (metadata.get("annotations") or {}).items()
                   if key not in (TAKE_OVER_ANNOTATION, RAY_BOOTSTRAP_ANNOTATION, LAYOUT_ANNOTATION)}
    return InferenceService(name=name, roles=(role,), namespace=metadata.get("namespace"),
                            labels=dict(metadata.get("labels") or {}), kind=LEADER_WORKER_SET.kind,
                            annotations=annotations,
                            layout=layout)


def _counts(obj: Mapping[str, Any], metadata: Mapping[str, Any], whole: bool, where: str) -> dict[str, int]:
    """Its replicas and size, each checked for what a take-over needs of it (WHOLE: in layout role)."""
    counts: dict[str, int] = {}
    for field, least in ((("spec", "replicas"), 0), (("spec", "leaderWorkerTemplate", "size"), 1)):
        value = _get(obj, field)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < least):
            raise InvalidSpec(where, ".".join(field), f"must be a whole number >= {least}, got {show(value)}")
        counts[field[-1]] = 1 if value is None else value
    if not whole and counts["replicas"] > MAX_REPLICAS:
        raise InvalidSpec(where, "spec.replicas", f"must be <= {MAX_REPLICAS} to be taken over (each replica becomes "
                                                  f"a LeaderWorkerSet of its own), got {counts['replicas']}")
    if counts["size"] > 1 and EXCLUSIVE_TOPOLOGY in (metadata.get("annotations") or {}):
        raise InvalidSpec(where, key_path("metadata.annotations", EXCLUSIVE_TOPOLOGY),
                          "cannot be taken over with size > 1: LWS then creates the workers only once the leader is "
                          "scheduled (they follow its topology), while the gang places a replica's pods together, so "
                          "the leader would wait for them forever; remove it, or use a nodeAffinity of your own")
    if not whole and _get(obj, ("spec", "networkConfig", "subdomainPolicy")) == "Shared":
        raise InvalidSpec(where, "spec.networkConfig.subdomainPolicy",
                          "cannot be taken over: Shared puts every replica under one subdomain, and each replica "
                          "becomes its own LeaderWorkerSet with its own; use UniquePerReplica or remove it")
    return counts


def _templates(spec: Mapping[str, Any], template: Mapping[str, Any], metadata: Mapping[str, Any], size: int,
               where: str) -> tuple[Mapping[str, Any], Mapping[str, Any] | None, bool]:
    """Its worker and leader (None) templates, checked, and whether its annotation asks for the Ray bootstrap."""
    worker, leader = template.get("workerTemplate"), template.get("leaderTemplate")
    if worker is None:
        raise InvalidSpec(where, "spec.leaderWorkerTemplate.workerTemplate", "is required")
    worker = validate_pod_template(worker, where, "spec.leaderWorkerTemplate.workerTemplate")
    if leader is not None:
        leader = validate_pod_template(leader, where, "spec.leaderWorkerTemplate.leaderTemplate")
    if spec.get("startupPolicy") == "LeaderReady" and size > 1:
        raise InvalidSpec(where, "spec.startupPolicy",
                          "cannot be taken over as LeaderReady: LWS then creates the workers only once the leader "
                          "is ready, while the gang places a replica's pods together, so the leader would wait "
                          "for them forever; use LeaderCreated (the default)")
    ray = (metadata.get("annotations") or {}).get(RAY_BOOTSTRAP_ANNOTATION) == "true"
    if ray and leader is not None:
        raise InvalidSpec(where, "spec.leaderWorkerTemplate.leaderTemplate",
                          f"must be absent with {RAY_BOOTSTRAP_ANNOTATION}: \"true\": the Ray bootstrap makes the "
                          "leader from the worker template")
    return worker, leader, ray


def _layout(where: str, annotations: Mapping[str, str], default: str) -> Layout:
    value = annotations.get(LAYOUT_ANNOTATION)
    if value is None:
        return Layout(default)
    if value not in TAKE_OVER_LAYOUTS:
        raise InvalidSpec(where, key_path("metadata.annotations", LAYOUT_ANNOTATION),
                          f"must be {' or '.join(TAKE_OVER_LAYOUTS)}, got {show(value)}")
    return Layout(value)


def _get(obj: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = obj
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def taken_over_bootstrap(ray: bool, size: int, worker: Mapping[str, Any] | None) -> MultiNode | None:
    """The Ray bootstrap on request; else the templates as written: a leader's own and the workers'
    (WORKER), or one for every pod (None, and then nothing to say for a replica of one pod)."""
    if ray:
        return MultiNode(Bootstrap.RAY, Bootstrap.RAY.default_port)
    if worker is None and size < 2:
        return None
    return MultiNode(Bootstrap.CUSTOM, Bootstrap.CUSTOM.default_port, worker_template=worker)
