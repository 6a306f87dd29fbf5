"""A role's LeaderWorkerSets, built from its stamped pod templates: one per replica (layout replica)
or one whose groups are the replicas (layout role)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from fusion_helm.base.kinds import LEADER_WORKER_SET
from fusion_helm.base.labels import LABEL_REPLICA_INDEX, LABEL_SERVES, LABEL_SPEC_HASH
from fusion_helm.errors import InvalidSpec, show
from fusion_helm.expand.digest import canonical_json, short_hash
from fusion_helm.expand.gang import GangPlan
from fusion_helm.expand.labelling import labels_serving_pods, object_metadata, pod_labels, role_labels
from fusion_helm.expand.names import lws_name, role_lws_name
from fusion_helm.expand.pods import RoleTemplates
from fusion_helm.limits import MAX_OBJECT_BYTES, MAX_OUTPUT_BYTES
from fusion_helm.model import InferenceService, Layout, RecoveryPolicy, Role
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LWS_OVERHEAD_BYTES = 1024
"""What a LeaderWorkerSet adds to its pod templates: names, labels, the spec's other fields."""
# A role's recoveryPolicy as LWS says it.
RESTART_POLICY = {RecoveryPolicy.ROLE_RESTART: "RecreateGroupOnPodRestart", RecoveryPolicy.NONE: "None"}


@record
class RoleBlueprint:
    """What every replica of a role shares: the pod templates, stamped with the role's labels,
    scheduler and PodGroup, and the hash of all that."""

    templates: RoleTemplates
    """What it was stamped from."""
    size: int
    worker: Mapping[str, Any]
    leader: Mapping[str, Any] | None
    spec_hash: str
    json_bytes: int
    """The size of its pod templates as JSON: about what each of the role's LeaderWorkerSets weighs."""


def role_blueprint(
    service: InferenceService, role: Role, templates: RoleTemplates, plan: GangPlan
) -> RoleBlueprint:
    path = role.template_path
    shared_annotations = plan.shared_annotations()
    if service.layout.grouped:  # one template serves every group
        shared_annotations.update(plan.replica_annotations(role, 0))

    serves = {LABEL_SERVES: "true"} if labels_serving_pods(service) else {}

    def stamp(template: Mapping[str, Any], serving: bool) -> dict[str, Any]:
        metadata = template.get("metadata") or {}
        spec = dict(template["spec"])
        if plan.scheduler_name:
            _refuse_override(service, f"{path}.spec.schedulerName", spec.get("schedulerName"),
                             plan.scheduler_name, "set spec.schedulingStrategy.schedulerName instead")
            spec["schedulerName"] = plan.scheduler_name
        if service.priority_class_name:  # Kubernetes gives each pod its priority; nothing copies the PodGroup's
            _refuse_override(service, f"{path}.spec.priorityClassName", spec.get("priorityClassName"),
                             service.priority_class_name, "set spec.schedulingStrategy.priorityClassName alone")
            spec["priorityClassName"] = service.priority_class_name
        labels = _merge_owned(service, f"{path}.metadata.labels", metadata.get("labels"),
                              {**pod_labels(service, role), **(serves if serving else {})},
                              per_replica=[LABEL_REPLICA_INDEX])
        annotations = _merge_owned(service, f"{path}.metadata.annotations", metadata.get("annotations"),
                                   shared_annotations, per_replica=plan.replica_annotations(role, 0))
        stamped_metadata = {**metadata, "labels": labels}
        stamped_metadata.pop("annotations", None)
        if annotations:
            stamped_metadata["annotations"] = annotations
        return {
            "metadata": stamped_metadata,
            **{key: value for key, value in template.items() if key not in ("metadata", "spec")},
            "spec": spec,
        }

    worker = stamp(templates.worker.template, serving=templates.worker_serves)
    leader = stamp(templates.leader.template, serving=True) if templates.leader is not None else None
    canonical = canonical_json([templates.size, leader, worker])
    spec_hash = short_hash(canonical)
    return RoleBlueprint(templates=templates, size=templates.size, worker=worker, leader=leader,
                         spec_hash=spec_hash, json_bytes=len(canonical))


def leader_worker_sets(
    service: InferenceService, role: Role, blueprint: RoleBlueprint, plan: GangPlan
) -> Iterator[dict[str, Any]]:
    """The role's LeaderWorkerSets: in the replica layout one per replica in index order (what they
    share is built once), in the role layout one; in layout disaggregated none (its DisaggregatedSet's
    controller makes them)."""
    if service.layout is Layout.ROLE:
        yield _role_leader_worker_set(service, role, blueprint)
        return
    if service.layout is Layout.DISAGGREGATED:
        return
    labels = role_labels(service, role)
    restart_policy = RESTART_POLICY[role.recovery_policy]
    startup_policy = {"startupPolicy": role.startup_policy} if role.startup_policy else {}

    def for_replica(template: Mapping[str, Any], index_label: dict[str, str],
                    replica_annotations: dict[str, str]) -> dict[str, Any]:
        metadata = template["metadata"]
        replica_metadata = {**metadata, "labels": {**metadata["labels"], **index_label}}
        if replica_annotations:
            replica_metadata["annotations"] = {**metadata.get("annotations", {}), **replica_annotations}
        return {**template, "metadata": replica_metadata}

    api_version, kind = LEADER_WORKER_SET.api_version, LEADER_WORKER_SET.kind  # once per role, not per replica
    for index in range(role.replicas):
        index_label = {LABEL_REPLICA_INDEX: str(index)}
        replica_annotations = plan.replica_annotations(role, index)
        leader_worker_template: dict[str, Any] = {"size": blueprint.size, "restartPolicy": restart_policy}
        if blueprint.leader is not None:
            leader_worker_template["leaderTemplate"] = for_replica(blueprint.leader, index_label,
                                                                   replica_annotations)
        leader_worker_template["workerTemplate"] = for_replica(blueprint.worker, index_label, replica_annotations)
        yield {
            "apiVersion": api_version,
            "kind": kind,
            "metadata": object_metadata(service, lws_name(service.name, role.name, index), {
                **labels, **index_label, LABEL_SPEC_HASH: blueprint.spec_hash}),
            "spec": {"replicas": 1, "leaderWorkerTemplate": leader_worker_template, **startup_policy},
        }


def leader_worker_template(role: Role, blueprint: RoleBlueprint) -> dict[str, Any]:
    """The leaderWorkerTemplate every group of the role is made from (layouts role and disaggregated)."""
    template: dict[str, Any] = {"size": blueprint.size, "restartPolicy": RESTART_POLICY[role.recovery_policy],
                                **role.volume_claims}
    if blueprint.leader is not None:
        template["leaderTemplate"] = blueprint.leader
    template["workerTemplate"] = blueprint.worker
    return template


def _role_leader_worker_set(service: InferenceService, role: Role, blueprint: RoleBlueprint) -> dict[str, Any]:
    """Its groups are the role's replicas. Without ``replicas`` while an autoscaler owns the count:
    an upgrade then leaves the scaled count alone (Helm 3's three-way merge sees no change to it, and
    Helm 4's server-side apply does not own it)."""
    spec: dict[str, Any] = {} if role.autoscaling else {"replicas": role.replicas}
    spec["leaderWorkerTemplate"] = leader_worker_template(role, blueprint)
    if role.rollout:
        spec["rolloutStrategy"] = {"type": "RollingUpdate", "rollingUpdateConfiguration": dict(role.rollout)}
    if role.startup_policy:
        spec["startupPolicy"] = role.startup_policy
    if role.network_config:
        spec["networkConfig"] = dict(role.network_config)
    return {
        "apiVersion": LEADER_WORKER_SET.api_version,
        "kind": LEADER_WORKER_SET.kind,
        "metadata": object_metadata(service, role_lws_name(service, role), {
            **role_labels(service, role), LABEL_SPEC_HASH: blueprint.spec_hash}),
        "spec": spec,
    }


def _merge_owned(
    service: InferenceService, path: str, user: Mapping[str, str] | None, ours: Mapping[str, str],
    per_replica: Iterable[str],
) -> dict[str, str]:
    """The user's keys plus ours; a user value that ours would overwrite is an error, not a loss."""
    user = user or {}
    for key, value in ours.items():
        _refuse_override(service, f"{path}.{key}", user.get(key), value, "remove it from the template")
    for key in per_replica:
        if key in user:
            raise InvalidSpec(service.where, f"{path}.{key}",
                              "is set for each replica by the expansion; remove it from the template")
    return {**user, **ours}


def _refuse_override(service: InferenceService, path: str, theirs: Any, ours: Any, hint: str) -> None:
    if theirs not in (None, ours):
        raise InvalidSpec(service.where, path, f"is set by the expansion to {show(ours)}, not {show(theirs)}; {hint}")


def check_sizes(service: InferenceService, blueprints: dict[str, RoleBlueprint]) -> None:
    """Refuse, before writing anything, a LeaderWorkerSet or DisaggregatedSet (every role's templates)
    the API server could not store, and an expansion too large to write."""
    total = 0
    role: Role
    for role in service.roles:
        each = blueprints[role.name].json_bytes + LWS_OVERHEAD_BYTES
        if each > MAX_OBJECT_BYTES:
            raise InvalidSpec(service.where, role.template_path,
                              f"makes LeaderWorkerSets of about {each:,} bytes, over the {MAX_OBJECT_BYTES:,} bytes "
                              "the API server stores in one object")
        total += each * (1 if service.layout.grouped else role.replicas)
        if service.layout is Layout.DISAGGREGATED and total > MAX_OBJECT_BYTES:
            raise InvalidSpec(service.where, role.template_path,
                              f"brings the DisaggregatedSet, which holds every role's templates, to about "
                              f"{total:,} bytes, over the {MAX_OBJECT_BYTES:,} bytes the API server stores in "
                              "one object; shrink the pod templates")
        if total > MAX_OUTPUT_BYTES:
            raise InvalidSpec(service.where, f"{role.path}.replicas",
                              f"the expansion would write about {total // 2**20:,} MiB, over the limit of "
                              f"{MAX_OUTPUT_BYTES // 2**20} MiB; lower replicas or shrink the pod templates")
