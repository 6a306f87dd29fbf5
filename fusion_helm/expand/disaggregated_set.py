"""Layout disaggregated: the service's one DisaggregatedSet, whose roles are its serving roles.

LWS's DisaggregatedSet controller makes one LeaderWorkerSet per role and revision
(``<set>-0-<revision>-<role>``) from each role's template, and rolls a change to any role's template
to a new revision in every role together. What it copies to those LeaderWorkerSets — each role's
metadata and template — is what the other layouts write into theirs: the same labels, stamped pod
templates, spec hash and restart policy.
"""

from __future__ import annotations

from collections.abc import Mapping

from fusion_helm.base.kinds import DISAGGREGATED_SET
from fusion_helm.base.labels import LABEL_SERVICE, LABEL_SPEC_HASH
from fusion_helm.expand.labelling import object_metadata, role_labels
from fusion_helm.expand.lws import RoleBlueprint, leader_worker_template
from fusion_helm.model import InferenceService, Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EXTERNAL_SCALING = {"mode": "External"}
"""A role whose count an autoscaler owns: the controller makes it a DisaggregatedSetRoleScaler."""


def disaggregated_set(service: InferenceService, blueprints: Mapping[str, RoleBlueprint]) -> dict[str, Any]:
    """Each role with its replicas (none while an autoscaler owns them: the controller reads its role
    scaler's, and an upgrade never resets them), its LeaderWorkerSet template and its rollout bounds,
    the ones left out at the DisaggregatedSet's own defaults."""
    roles = []
    for role in service.roles:
        blueprint = blueprints[role.name]
        spec: dict[str, Any] = {} if role.autoscaling else {"replicas": role.replicas}
        spec["leaderWorkerTemplate"] = leader_worker_template(role, blueprint)
        spec["rolloutStrategy"] = {"type": "RollingUpdate", "rollingUpdateConfiguration": {
            **Layout.DISAGGREGATED.rollout_defaults, **(role.rollout or {})}}
        if role.startup_policy:
            spec["startupPolicy"] = role.startup_policy
        labels = {**service.labels, **role_labels(service, role), LABEL_SPEC_HASH: blueprint.spec_hash}
        roles.append({"name": role.name, "metadata": {"labels": labels}, "spec": spec,
                      **({"scaling": dict(EXTERNAL_SCALING)} if role.autoscaling else {})})
    return {
        "apiVersion": DISAGGREGATED_SET.api_version,
        "kind": DISAGGREGATED_SET.kind,
        "metadata": object_metadata(service, service.name, {LABEL_SERVICE: service.name}),
        "spec": {"roles": roles},
    }
