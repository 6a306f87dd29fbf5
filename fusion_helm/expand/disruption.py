"""A role's PodDisruptionBudget, counted in whole replicas.

A drain evicts pods one by one. One evicted pod of a multi-node replica takes the whole replica down (LWS
recreates its group; with recoveryPolicy None the engine's other ranks lose their peer), so a budget of
one replica's pods would let a drain evict one pod from each of several replicas at once and break them
all. The budget is the number of replicas instead, in pods: each eviction takes one, and the replica it
breaks holds every other eviction back (its pods are not ready) until it is whole again.
"""

from __future__ import annotations

from fusion_helm.base.kinds import POD_DISRUPTION_BUDGET
from fusion_helm.base.labels import LABEL_ROLE_NAME, LABEL_SERVICE
from fusion_helm.expand.labelling import object_metadata, role_labels
from fusion_helm.expand.names import disruption_budget_name
from fusion_helm.model import InferenceService, Role

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def disruption_budget(service: InferenceService, role: Role) -> dict[str, Any]:
    """For a role with a budget (``role.disruption_budget``)."""
    assert role.disruption_budget is not None
    return {
        "apiVersion": POD_DISRUPTION_BUDGET.api_version, "kind": POD_DISRUPTION_BUDGET.kind,
        "metadata": object_metadata(service, disruption_budget_name(service.name, role.name),
                                    role_labels(service, role)),
        "spec": {
            "maxUnavailable": role.disruption_budget,
            "selector": {"matchLabels": {LABEL_SERVICE: service.name, LABEL_ROLE_NAME: role.name}},
            # A pod that is not ready may go: a replica that never becomes ready never blocks a drain.
            "unhealthyPodEvictionPolicy": "AlwaysAllow",
        },
    }
