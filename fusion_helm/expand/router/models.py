"""The served models, as the picker generation reads them: InferenceModels (model name, criticality,
weighted target models) for the v0.5 picker, InferenceObjectives (a priority) for the later ones, in
the API group each reads them from; and the model-name rewrites, an InferenceModelRewrite for the
generations that apply them.

An adapter's requests are as critical as its model's. The v0.5 picker finds a request's InferenceModel by
the model it names, and takes one it finds none for as Sheddable: each adapter served beside a model
that has an entry gets an InferenceModel of its own, with the entry's criticality. The later pickers
choose an InferenceObjective by a request header, never by the model, so an objective per adapter would
never be chosen: none is made."""

from __future__ import annotations

from fusion_helm.base import needs
from fusion_helm.errors import InvalidSpec
from fusion_helm.expand.digest import short_hash
from fusion_helm.expand.generations import Generation, backend_ref
from fusion_helm.expand.labelling import object_metadata, role_labels
from fusion_helm.expand.names import adapter_model_name, router_name, served_model_name
from fusion_helm.model import Criticality, InferenceService, Router, ServedModel

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

PRIORITY = {Criticality.CRITICAL: 1, Criticality.STANDARD: 0, Criticality.SHEDDABLE: -1}
"""An InferenceObjective's priority for a criticality: only the order counts, and unset means 0."""


def model_objects(service: InferenceService, router: Router, generation: Generation,
                  adapters: Mapping[str, tuple[str, ...]]) -> list[dict[str, Any]]:
    """ROUTER's models and rewrites, as GENERATION reads them; ADAPTERS: each served model name's adapters."""
    pool_ref = _pool_ref(service, router)
    labels = role_labels(service, router)
    by_model = generation.reads.model.kind == "InferenceModel"
    specs = [(served_model_name(service.name, model.name), _model_spec(model) if by_model else
              _objective_spec(service, generation, model)) for model in router.models]
    if by_model:
        specs += _adapter_models(service, router, adapters)
    return [*_rewrites(service, router, generation), *({
        "apiVersion": generation.reads.model.api_version,
        "kind": generation.reads.model.kind,
        "metadata": object_metadata(service, name, labels),
        "spec": spec | {"poolRef": pool_ref},
    } for name, spec in specs)]


def _adapter_models(service: InferenceService, router: Router, adapters: Mapping[str, tuple[str, ...]]
                    ) -> list[tuple[str, dict[str, Any]]]:
    """An InferenceModel for each adapter of a model that has an entry, with its criticality (none for an
    adapter that has an entry of its own); named for the entry and a digest of the adapter's name, which
    may hold what an object's name may not."""
    named = {model.model_name or model.name for model in router.models}
    found = []
    for model in router.models:
        for adapter in adapters.get(model.model_name or model.name, ()):
            if adapter not in named:
                named.add(adapter)
                spec = {"modelName": adapter} | ({} if model.criticality is None else
                                                 {"criticality": str(model.criticality)})
                found.append((adapter_model_name(service.name, model.name, short_hash(adapter)), spec))
    return found


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
                          f"endpointPicker.generation {needs.LLM_D_ROUTER} or {needs.GIE_V15} "
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
                              f"{needs.GIE_V05} picker's InferenceModels (a v1alpha2 pool)")
    return {} if model.criticality is None else {"priority": PRIORITY[model.criticality]}
