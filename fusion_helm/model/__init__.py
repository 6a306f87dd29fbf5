"""The InferenceService API: schema, validation and the typed model the expansion reads."""

from fusion_helm.model.component_types import ComponentType
from fusion_helm.model.gang import GangLevel, GangSchedule
from fusion_helm.model.inference_service import (
    API_GROUP,
    API_VERSION,
    KIND,
    InferenceService,
    Layout,
    RecoveryPolicy,
    Role,
    is_inference_service,
    parse_inference_service,
)

# The router's and the monitors' models are loaded when first asked for: most services have neither,
# and a post-renderer starts on every helm call.
_LAZY = {"PodMonitoring": "monitoring", **dict.fromkeys(
    ("Criticality", "PoolAPI", "Router", "Scorer", "ServedModel", "TargetModel",
     "WeightedScorer"), "router")}

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fusion_helm.model.monitoring import PodMonitoring
    from fusion_helm.model.router import (
        Criticality,
        PoolAPI,
        Router,
        Scorer,
        ServedModel,
        TargetModel,
        WeightedScorer,
    )


def __getattr__(name: str) -> "Any":
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module 'fusion_helm.model' has no attribute {name!r}")
    module = __import__(f"fusion_helm.model.{home}", fromlist=[name])
    value = getattr(module, name)
    globals()[name] = value
    return value


__all__ = [
    "API_GROUP",
    "API_VERSION",
    "KIND",
    "ComponentType",
    "Criticality",
    "GangLevel",
    "GangSchedule",
    "InferenceService",
    "Layout",
    "PodMonitoring",
    "PoolAPI",
    "RecoveryPolicy",
    "Role",
    "Router",
    "Scorer",
    "ServedModel",
    "TargetModel",
    "WeightedScorer",
    "is_inference_service",
    "parse_inference_service",
]
