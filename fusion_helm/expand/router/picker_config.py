"""The endpoint picker's EndpointPickerConfig: built from the router's strategy, or the user's verbatim.

A monolithic service gets one profile that scores every pod. A prefill/decode service gets a prefill
and a decode profile, each keeping its own pods (by the ``llm-d.ai/role`` label) and scored alike, and
the profile handler that decides per request whether a separate prefill runs.
"""

from __future__ import annotations

from fusion_helm.errors import InvalidSpec
from fusion_helm.expand.router.apis import PoolGeneration
from fusion_helm.kio.construct import load
from fusion_helm.kio.write import dump
from fusion_helm.model import InferenceService, PoolAPI, Router, Scorer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONFIG_API_VERSION = "inference.networking.x-k8s.io/v1alpha1"
CONFIG_KIND = "EndpointPickerConfig"
PICKER = "max-score-picker"
PREFIX_BLOCK_SIZE = "hashBlockSize"
DEFAULT_PREFIX_BLOCK_SIZE = 64
"""The prefix-cache scorer's default; the prefill/decode handler must hash prompts the same way."""


def picker_config(service: InferenceService, router: Router, generation: PoolGeneration,
                  disaggregated: bool) -> str:
    if router.endpoint_picker_config is not None:
        _check_verbatim(service, router)
        return router.endpoint_picker_config
    scorers = _scorer_plugins(service, router, generation)
    plugins: list[dict[str, Any]] = [plugin for plugin, _ in scorers]
    refs = [{"pluginRef": plugin["type"], "weight": weight} for plugin, weight in scorers]
    if disaggregated:
        profiles = [{"name": name, "plugins": [{"pluginRef": f"{name}-filter"}, *refs, {"pluginRef": PICKER}]}
                    for name in ("prefill", "decode")]
        plugins = [{"type": "prefill-header-handler"}, {"type": "prefill-filter"}, {"type": "decode-filter"},
                   *plugins, {"type": PICKER}, _pd_handler(service, router, scorers)]
    else:
        profiles = [{"name": "default", "plugins": [*refs, {"pluginRef": PICKER}]}]
        plugins = [*plugins, {"type": PICKER}, {"type": "single-profile-handler"}]
    return dump({"apiVersion": CONFIG_API_VERSION, "kind": CONFIG_KIND, "plugins": plugins,
                 "schedulingProfiles": profiles})


def _scorer_plugins(service: InferenceService, router: Router, generation: PoolGeneration
                    ) -> list[tuple[dict[str, Any], int]]:
    out = []
    for index, scorer in enumerate(router.scorers):
        plugin_type = generation.scorer_plugins.get(scorer.type)
        if plugin_type is None:
            path = f"{router.path}.strategy" + (f".scorers[{index}].type" if router.strategy_word is None else "")
            raise InvalidSpec(service.where, path,
                              f"the {generation.api.value} endpoint picker has no {scorer.type} scorer; use "
                              f"poolAPIVersion {PoolAPI.V1.value} or give endpointPickerConfig")
        plugin: dict[str, Any] = {"type": plugin_type}
        if scorer.parameters:
            plugin["parameters"] = dict(scorer.parameters)
        out.append((plugin, scorer.weight))
    return out


def _pd_handler(service: InferenceService, router: Router, scorers: list[tuple[dict[str, Any], int]]
                ) -> dict[str, Any]:
    prefix = next((plugin for plugin, _ in scorers if plugin["type"] == "prefix-cache-scorer"), None)
    parameters: dict[str, Any] = {"threshold": router.prefill_threshold}
    if prefix is not None:
        parameters[PREFIX_BLOCK_SIZE] = (prefix.get("parameters") or {}).get(PREFIX_BLOCK_SIZE,
                                                                              DEFAULT_PREFIX_BLOCK_SIZE)
    elif router.prefill_threshold:
        raise InvalidSpec(service.where, f"{router.path}.strategy.prefillThreshold",
                          f"needs the {Scorer.PREFIX_CACHE} scorer: the threshold counts the prompt not in the "
                          "prefix cache")
    return {"type": "pd-profile-handler", "parameters": parameters}


def _check_verbatim(service: InferenceService, router: Router) -> None:
    path = f"{router.path}.endpointPickerConfig"
    try:
        config = load(router.endpoint_picker_config or "")
    except ValueError as error:
        raise InvalidSpec(service.where, path, f"is not YAML: {error}") from None
    if not isinstance(config, dict) or config.get("kind") != CONFIG_KIND:
        raise InvalidSpec(service.where, path, f"must be a {CONFIG_KIND} ({CONFIG_API_VERSION}) document")
