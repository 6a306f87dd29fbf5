"""The served models, as the pool's API version has them: InferenceModels (model name, criticality,
weighted target models) for a v1alpha2 pool, InferenceObjectives (a priority) for a v1 pool."""

from __future__ import annotations

from fusion_helm.errors import InvalidSpec
from fusion_helm.expand import naming
from fusion_helm.expand.router.apis import MODEL_API_VERSION, PoolGeneration
from fusion_helm.model import Criticality, InferenceService, PoolAPI, Router, ServedModel

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PRIORITY = {Criticality.CRITICAL: 1, Criticality.STANDARD: 0, Criticality.SHEDDABLE: -1}
"""An InferenceObjective's priority for a criticality: only the order counts, and unset means 0."""


def model_objects(service: InferenceService, router: Router, generation: PoolGeneration) -> list[dict[str, Any]]:
    pool_ref = {"group": generation.group, "kind": "InferencePool",
                "name": naming.router_name(service.name, router.name)}
    labels = naming.role_labels(service, router)
    return [{
        "apiVersion": MODEL_API_VERSION,
        "kind": generation.model_kind,
        "metadata": naming.object_metadata(service, f"{service.name}-{model.name}", labels),
        "spec": (_objective_spec(service, model) if generation.api is PoolAPI.V1 else _model_spec(model))
        | {"poolRef": pool_ref},
    } for model in router.models]


def _model_spec(model: ServedModel) -> dict[str, Any]:
    spec: dict[str, Any] = {"modelName": model.model_name or model.name}
    if model.criticality is not None:
        spec["criticality"] = str(model.criticality)
    if model.target_models:
        spec["targetModels"] = [{"name": target.name} | ({"weight": target.weight} if target.weight else {})
                                for target in model.target_models]
    return spec


def _objective_spec(service: InferenceService, model: ServedModel) -> dict[str, Any]:
    for field, given in (("modelName", model.model_name), ("targetModels", model.target_models)):
        if given:
            raise InvalidSpec(service.where, f"{model.path}.{field}",
                              f"has no place in an InferenceObjective, what a {PoolAPI.V1.value} pool serves "
                              f"(it carries a priority only); use poolAPIVersion {PoolAPI.V1ALPHA2.value} for "
                              "InferenceModels, or serve the name from the model server")
    return {} if model.criticality is None else {"priority": PRIORITY[model.criticality]}
