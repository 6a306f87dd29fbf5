"""Gang scheduling: which pods Volcano must place together, and the PodGroups that say so.

Every decision about PodGroups lives here, so a change of layout is a change to this module only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fusion_helm.errors import InvalidSpec
from fusion_helm.expand import naming, resources
from fusion_helm.expand.pods import RoleTemplates
from fusion_helm.model import ComponentType, InferenceService, Role

POD_GROUP_API_VERSION = "scheduling.volcano.sh/v1beta1"
ANNOTATION_GROUP_NAME = "scheduling.k8s.io/group-name"
ANNOTATION_TASK_SPEC = "volcano.sh/task-spec"
GANG_SCHEDULER = "volcano"
DISAGGREGATED = (ComponentType.PREFILLER, ComponentType.DECODER)


@dataclass(frozen=True)
class GangPlan:
    group_name: str | None
    """The shared PodGroup, or None when the service needs no gang scheduling."""
    scheduler_name: str | None
    """schedulerName for every pod, or None to leave the template's (the cluster default)."""

    def shared_annotations(self) -> dict[str, str]:
        return {ANNOTATION_GROUP_NAME: self.group_name} if self.group_name else {}

    def replica_annotations(self, role: Role, index: int) -> dict[str, str]:
        return {ANNOTATION_TASK_SPEC: naming.task_name(role.name, index)} if self.group_name else {}


def plan_gang(service: InferenceService) -> GangPlan:
    """A single-node monolithic service needs no gang; multi-node or P/D services share one PodGroup."""
    needs_gang = any(role.multinode or role.component_type in DISAGGREGATED for role in service.roles)
    if not needs_gang:
        return GangPlan(group_name=None, scheduler_name=service.scheduler_name)
    return GangPlan(group_name=service.name, scheduler_name=service.scheduler_name or GANG_SCHEDULER)


def pod_groups(
    service: InferenceService, plan: GangPlan, templates: Mapping[str, RoleTemplates]
) -> list[dict[str, Any]]:
    """The PodGroup: every pod of every replica, each replica its own task (``{role}-{index}``)."""
    if plan.group_name is None:
        return []
    min_task_member: dict[str, int] = {}
    requests: list[resources.Resources] = []
    for role in service.roles:
        per_replica = _replica_requests(service, role, templates[role.name])
        for index in range(role.replicas):
            min_task_member[naming.task_name(role.name, index)] = role.node_count
            requests.append(per_replica)
    spec: dict[str, Any] = {"minMember": sum(min_task_member.values()),
                            "minTaskMember": min_task_member}
    total = resources.add(requests)
    if total:
        spec["minResources"] = resources.to_manifest(total)
    metadata: dict[str, Any] = {"name": plan.group_name}
    if service.namespace:
        metadata["namespace"] = service.namespace
    metadata["labels"] = {**service.labels, naming.LABEL_SERVICE: service.name}
    return [{"apiVersion": POD_GROUP_API_VERSION, "kind": "PodGroup", "metadata": metadata, "spec": spec}]


def _replica_requests(service: InferenceService, role: Role, templates: RoleTemplates) -> resources.Resources:
    leader = templates.leader or templates.worker
    try:
        return resources.add([
            resources.pod_requests(leader["spec"]),
            resources.scale(resources.pod_requests(templates.worker["spec"]), templates.size - 1),
        ])
    except ValueError as error:
        raise InvalidSpec(service.where, f"{role.path}.template.spec", str(error)) from None
