"""A role's HorizontalPodAutoscaler: it scales the role through a scale subresource whose selector is
the role's leader pods — its LeaderWorkerSet's (layout role), or its DisaggregatedSetRoleScaler's
(layout disaggregated), whose count the DisaggregatedSet controller gives the role in every revision."""

from __future__ import annotations

from fusion_helm.expand.labelling import object_metadata, role_labels
from fusion_helm.expand.names import role_lws_name, role_scaler_name
from fusion_helm.hooks.kinds import HORIZONTAL_POD_AUTOSCALER, LEADER_WORKER_SET, ROLE_SCALER
from fusion_helm.model import InferenceService, Layout, Role

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any



def scale_target(service: InferenceService, role: Role) -> dict[str, str]:
    """What the role's autoscaler scales: apiVersion, kind and name."""
    if service.layout is Layout.DISAGGREGATED:
        return {"apiVersion": ROLE_SCALER.api_version, "kind": ROLE_SCALER.kind,
                "name": role_scaler_name(service.name, role.name)}
    return {"apiVersion": LEADER_WORKER_SET.api_version, "kind": LEADER_WORKER_SET.kind,
            "name": role_lws_name(service, role)}


def horizontal_pod_autoscalers(service: InferenceService, role: Role) -> list[dict[str, Any]]:
    """One for an autoscaled role, named as what it scales; none for another."""
    scaling = role.autoscaling
    if scaling is None:
        return []
    target = scale_target(service, role)
    spec: dict[str, Any] = {
        "scaleTargetRef": target,
        "minReplicas": scaling.min_replicas,
        "maxReplicas": scaling.max_replicas,
    }
    if scaling.metrics:
        spec["metrics"] = [dict(metric) for metric in scaling.metrics]
    return [{"apiVersion": HORIZONTAL_POD_AUTOSCALER.api_version, "kind": HORIZONTAL_POD_AUTOSCALER.kind,
             "metadata": object_metadata(service, target["name"], role_labels(service, role)),
             "spec": spec}]
