"""The served models, as the picker generation reads them: InferenceModels (model name, criticality,
weighted target models) for the v0.5 picker, InferenceObjectives (a priority) for the later ones, in
the API group each reads them from; and the model-name rewrites, an InferenceModelRewrite for the
generations that apply them."""

from __future__ import annotations

from fusion_helm.errors import InvalidSpec
from fusion_helm.expand.labelling import object_metadata, role_labels
from fusion_helm.expand.names import router_name
from fusion_helm.expand.router.generations import Generation, backend_ref
from fusion_helm.model import Criticality, InferenceService, PickerGeneration, Router, ServedModel

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PRIORITY = {Criticality.CRITICAL: 1, Criticality.STANDARD: 0, Criticality.SHEDDABLE: -1}
"""An InferenceObjective's priority for a criticality: only the order counts, and unset means 0."""


def model_objects(service: InferenceService, router: Router, generation: Generation) -> list[dict[str, Any]]:
    pool_ref = _pool_ref(service, router)
    labels = role_labels(service, router)
    return [*_rewrites(service, router, generation), *({
        "apiVersion": generation.reads.model.api_version,
        "kind": generation.reads.model.kind,
        "metadata": object_metadata(service, f"{service.name}-{model.name}", labels),
        "spec": (_model_spec(model) if generation.reads.model.kind == "InferenceModel" else
                 _objective_spec(service, generation, model))
        | {"poolRef": pool_ref},
    } for model in router.models)]


def _pool_ref(service: InferenceService, router: Router) -> dict[str, str]:
    return backend_ref(router.pool_api, router_name(service.name, router.name))


def _rewrites(service: InferenceService, router: Router, generation: Generation) -> list[dict[str, Any]]:
    """The router's modelRewrites as one InferenceModelRewrite, its rules in their order (the first that
    matches a request's model applies)."""
    if not router.model_rewrites:
        return []
    kind = generation.reads.rewrite
    if kind is None:
        raise InvalidSpec(service.where, f"{router.path}.modelRewrites",
                          f"the {generation.name} picker applies no InferenceModelRewrite; choose "
                          f"endpointPicker.generation {PickerGeneration.LLM_D_ROUTER} or {PickerGeneration.GIE_V15} "
                          "(docs/router.md)")
    rules = [{"matches": [{"model": {"type": "Exact", "value": rewrite.model}}],
              "targets": [{"modelRewrite": target.name} | ({"weight": target.weight} if target.weight else {})
                          for target in rewrite.targets]} for rewrite in router.model_rewrites]
    return [{"apiVersion": kind.api_version, "kind": kind.kind,
             "metadata": object_metadata(service, router_name(service.name, router.name), role_labels(service, router)),
             "spec": {"poolRef": _pool_ref(service, router), "rules": rules}}]


def _model_spec(model: ServedModel) -> dict[str, Any]:
    spec: dict[str, Any] = {"modelName": model.model_name or model.name}
    if model.criticality is not None:
        spec["criticality"] = str(model.criticality)
    if model.target_models:
        spec["targetModels"] = [{"name": target.name} | ({"weight": target.weight} if target.weight else {})
                                for target in model.target_models]
    return spec


def _objective_spec(service: InferenceService, generation: Generation, model: ServedModel) -> dict[str, Any]:
    for field, given in (("modelName", model.model_name), ("targetModels", model.target_models)):
        if given:
            raise InvalidSpec(service.where, f"{model.path}.{field}",
                              f"has no place in an InferenceObjective, what the {generation.name} picker reads "
                              f"(it carries a priority only); serve the name from the model server, or use the "
                              f"{PickerGeneration.GIE_V05} picker's InferenceModels (a v1alpha2 pool)")
    return {} if model.criticality is None else {"priority": PRIORITY[model.criticality]}
