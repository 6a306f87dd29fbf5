"""Gang scheduling: which pods Volcano must place together, and the PodGroups that say so — written
(pod_groups) and read back (atomic_minimum, for `fusion-helm plan`).

Every decision about PodGroups lives here, so a change of layout is a change to this module only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fusion_helm.base import needs
from fusion_helm.base.kinds import POD_GROUP
from fusion_helm.base.labels import ANNOTATION_GROUP_NAME, LABEL_REVISION, LABEL_ROLE_NAME, LABEL_SERVICE
from fusion_helm.errors import InvalidSpec, format_path, show
from fusion_helm.expand import resources
from fusion_helm.expand.labelling import object_metadata, replica_index_label
from fusion_helm.expand.names import task_name
from fusion_helm.expand.pods import RoleTemplates
from fusion_helm.model import GangLevel, InferenceService, Layout, Role
from fusion_helm.model.topology import NetworkTopology
from fusion_helm.records import EMPTY, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ANNOTATION_TASK_SPEC = "volcano.sh/task-spec"
GANG_SCHEDULER = "volcano"


@record
class GangPlan:
    group_name: str | None
    """The service's PodGroup, or None when it is not gang-scheduled."""
    scheduler_name: str | None
    """schedulerName for every pod, or None to leave the template's (the cluster default)."""
    minimum: Mapping[str, int] = EMPTY
    """Role name → how many of its first replicas belong to the atomic minimum."""
    level: GangLevel = GangLevel.ROLE
    layout: Layout = Layout.REPLICA

    def shared_annotations(self) -> dict[str, str]:
        return {ANNOTATION_GROUP_NAME: self.group_name} if self.group_name else {}

    def replica_annotations(self, role: Role, index: int) -> dict[str, str]:
        """The replica's Volcano task; where one template serves every group (layouts role and
        disaggregated), the role's."""
        if not self.group_name:
            return {}
        return {ANNOTATION_TASK_SPEC: role.name if self.layout.grouped else task_name(role.name, index)}


def plan_gang(service: InferenceService) -> GangPlan:
    """Whether the service is gang-scheduled, and which replicas form its atomic minimum.

    Without ``spec.gangSchedule``, multi-node and prefill/decode services are, at level role, and
    single-node monolithic ones are not.
    """
    gang = service.gang_schedule
    level = GangLevel.ROLE if gang is None else gang.level
    minimum, why_none = needs.compose_gang(
        ((role.name, role.component_type, role.replicas, role.node_count) for role in service.roles),
        None if gang is None else gang.enable, level, EMPTY if gang is None else gang.min_role_replicas)
    if minimum is None:
        if why_none == needs.SINGLE_POD_GANG and gang is not None:
            raise InvalidSpec(service.where, "spec.gangSchedule",
                              "no gang is possible: the atomic minimum is a single pod and every replica is one "
                              "pod; remove gangSchedule, or raise replicas or minRoleReplicas")
        _refuse_without_gang(service, why_none)
        return GangPlan(group_name=None, scheduler_name=service.scheduler_name, layout=service.layout)
    if service.scheduler_name not in (None, GANG_SCHEDULER):
        raise InvalidSpec(service.where, "spec.schedulingStrategy.schedulerName",
                          f"must be {GANG_SCHEDULER} for a gang-scheduled service (only Volcano reads its "
                          f"PodGroup), got {show(service.scheduler_name)}; or set spec.gangSchedule.enable: false")
    return GangPlan(group_name=service.name, scheduler_name=GANG_SCHEDULER, minimum=minimum, level=level,
                    layout=service.layout)


def _refuse_without_gang(service: InferenceService, why: str) -> None:
    """What only a PodGroup carries, refused by field where the service has none (WHY)."""
    gang = service.gang_schedule
    fields: list[tuple[str, object]] = [
        ("spec.schedulingStrategy.queue", service.queue),
        ("spec.gangSchedule.networkTopology", gang.network_topology if gang else None),
        ("spec.gangSchedule.serviceNetworkTopology", gang.service_network_topology if gang else None),
        *((f"{role.path}.networkTopology", role.network_topology) for role in service.roles)]
    for path, value in fields:
        if value is not None:
            raise InvalidSpec(service.where, path, f"is a Volcano PodGroup's, and the service has none: {why}")


def replica_topology(service: InferenceService, role: Role) -> NetworkTopology | None:
    """Where each replica of ROLE must lie (needs.chosen_topology, the check's rule too)."""
    gang = service.gang_schedule
    return needs.chosen_topology(role.network_topology, gang.network_topology if gang is not None else None,
                                 lambda topology: topology.mode)


def pod_groups(
    service: InferenceService, plan: GangPlan, replica_requests: Mapping[str, resources.Resources]
) -> list[dict[str, Any]]:
    """One PodGroup. Each replica is a subgroup (its pods, by their replica-index label; where replicas
    are LWS groups, LWS's group-index label, and in layout disaggregated with the revision: two
    revisions' groups of one index are two subgroups), placed whole or not at all. Per role, one
    subGroupPolicy selects the replicas of the atomic minimum by index and requires all of them; at
    level role a second one holds the other replicas, required none, so each is placed as capacity
    allows. Where replicas are LWS groups that second one is there at level group too: it holds the
    groups a rollout's surge adds. Why this layout: docs/gang-scheduling.md.
    """
    if plan.group_name is None:
        return []
    policies: list[dict[str, Any]] = []
    requests: list[resources.Resources] = []
    for role in service.roles:
        minimum = plan.minimum[role.name]
        first = [str(index) for index in range(minimum)]
        if first:
            policies.append(_policy(service, role, "minimum", minimum, "In", first))
            requests.append(resources.scale(replica_requests[role.name], minimum))
        if needs.others_have_policy(plan.level, plan.layout):
            policies.append(_policy(service, role, "more", 0, "NotIn", first))
    spec: dict[str, Any] = {
        "minMember": sum(plan.minimum[role.name] * role.node_count for role in service.roles),
        "subGroupPolicy": policies,
    }
    total = resources.add(requests)
    if total:
        spec["minResources"] = resources.to_manifest(total)
    gang = service.gang_schedule
    if gang is not None and gang.service_network_topology is not None:
        spec["networkTopology"] = gang.service_network_topology.to_manifest()
    if service.queue is not None:
        spec["queue"] = service.queue
    if service.priority_class_name is not None:
        spec["priorityClassName"] = service.priority_class_name
    metadata = object_metadata(service, plan.group_name, {LABEL_SERVICE: service.name})
    return [{"apiVersion": POD_GROUP.api_version, "kind": POD_GROUP.kind, "metadata": metadata, "spec": spec}]


def _policy(service: InferenceService, role: Role, part: str, min_sub_groups: int, operator: str,
            indices: list[str]) -> dict[str, Any]:
    index_label = replica_index_label(service)
    selector: dict[str, Any] = {"matchLabels": {LABEL_SERVICE: service.name, LABEL_ROLE_NAME: role.name}}
    if indices:  # NotIn needs values; without any, "more" is every replica of the role
        selector["matchExpressions"] = [{"key": index_label, "operator": operator, "values": indices}]
    # The index first: Volcano orders a policy's subgroups by the first key's value read as a number.
    keys = [index_label, LABEL_REVISION] if service.layout is Layout.DISAGGREGATED else [index_label]
    policy = {
        "name": f"{role.name}/{part}",
        "subGroupSize": role.node_count,
        "minSubGroups": min_sub_groups,
        "labelSelector": selector,
        "matchLabelKeys": keys,
    }
    topology = replica_topology(service, role)
    if topology is not None:
        policy["networkTopology"] = topology.to_manifest()
    return policy


def replica_requests(service: InferenceService, role: Role, templates: RoleTemplates) -> resources.Resources:
    """What one replica of ROLE requests, leader and workers; InvalidSpec at a quantity that is not one."""
    try:
        return resources.add([
            resources.pod_requests(templates.leading.spec),
            resources.scale(resources.pod_requests(templates.worker.spec), templates.size - 1),
        ])
    except resources.QuantityError as error:
        raise InvalidSpec(service.where, format_path([f"{role.template_path}.spec", *error.path]), str(error)) from None


def atomic_minimum(policies: Sequence[Mapping[str, Any]], replicas: Sequence[tuple[str, Mapping[str, str]]]
                   ) -> set[str]:
    """The replicas (name, pod labels; by index) a PodGroup's subGroupPolicy requires, as Volcano reads
    it: a replica is a subgroup of the first policy that selects it; a policy requires its first
    ``minSubGroups``."""
    subgroups: dict[int, list[str]] = {}
    for name, labels in replicas:
        position = policy_of(policies, labels)
        if position is not None:
            subgroups.setdefault(position, []).append(name)
    return {name for position, names in subgroups.items() for name in names[:policies[position].get("minSubGroups", 0)]}


def policy_of(policies: Sequence[Mapping[str, Any]], labels: Mapping[str, str]) -> int | None:
    """The position of the subGroupPolicy whose subgroup a replica's pods (LABELS) are: the first that
    selects them, as Volcano reads it."""
    return next((i for i, rule in enumerate(policies) if _selects(rule.get("labelSelector"), labels)), None)


def _selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A label selector with matchLabels and In/NotIn/Exists/DoesNotExist expressions."""
    if selector is None:
        return False
    if any(labels.get(key) != value for key, value in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        present = key in labels
        if not {"In": present and labels.get(key) in values, "NotIn": labels.get(key) not in values,
                "Exists": present, "DoesNotExist": not present}[operator]:
            return False
    return True
