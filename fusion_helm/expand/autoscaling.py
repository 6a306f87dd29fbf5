"""A role's HorizontalPodAutoscaler (layout role): it scales the role's LeaderWorkerSet through LWS's
scale subresource, whose selector is the leader pods'."""

from __future__ import annotations

from fusion_helm.expand import naming
from fusion_helm.expand.lws import LWS_API_VERSION
from fusion_helm.model import InferenceService, Role

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HPA_API_VERSION = "autoscaling/v2"


def horizontal_pod_autoscalers(service: InferenceService, role: Role) -> list[dict[str, Any]]:
    """One for an autoscaled role, named as its LeaderWorkerSet; none for another."""
    scaling = role.autoscaling
    if scaling is None:
        return []
    name = naming.role_lws_name(service, role)
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": LWS_API_VERSION, "kind": "LeaderWorkerSet", "name": name},
        "minReplicas": scaling.min_replicas,
        "maxReplicas": scaling.max_replicas,
    }
    if scaling.metrics:
        spec["metrics"] = [dict(metric) for metric in scaling.metrics]
    return [{"apiVersion": HPA_API_VERSION, "kind": "HorizontalPodAutoscaler",
             "metadata": naming.object_metadata(service, name, naming.role_labels(service, role)), "spec": spec}]
