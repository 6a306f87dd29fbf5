"""The InferenceService API: schema, validation and the typed model the expansion reads."""

from fusion_helm.model.inference_service import (
    API_VERSION,
    KIND,
    ComponentType,
    GangLevel,
    GangSchedule,
    InferenceService,
    RecoveryPolicy,
    Role,
    is_inference_service,
    parse_inference_service,
)

__all__ = [
    "API_VERSION",
    "KIND",
    "ComponentType",
    "GangLevel",
    "GangSchedule",
    "InferenceService",
    "RecoveryPolicy",
    "Role",
    "is_inference_service",
    "parse_inference_service",
]
