"""The InferenceService API: schema, validation and the typed model the expansion reads."""

from fusion_helm.model.inference_service import (
    API_GROUP,
    API_VERSION,
    DISAGGREGATED,
    KIND,
    ComponentType,
    GangLevel,
    GangSchedule,
    InferenceService,
    Layout,
    RecoveryPolicy,
    Role,
    is_inference_service,
    parse_inference_service,
)
from fusion_helm.model.monitoring import POD_MONITOR_API_VERSION, PodMonitoring
from fusion_helm.model.router import (
    Criticality,
    PickerGeneration,
    PoolAPI,
    Router,
    Scorer,
    ServedModel,
    TargetModel,
    WeightedScorer,
)

__all__ = [
    "API_GROUP",
    "API_VERSION",
    "DISAGGREGATED",
    "KIND",
    "POD_MONITOR_API_VERSION",
    "ComponentType",
    "Criticality",
    "GangLevel",
    "GangSchedule",
    "InferenceService",
    "Layout",
    "PickerGeneration",
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
