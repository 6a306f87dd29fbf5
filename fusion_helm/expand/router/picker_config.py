"""The endpoint picker's EndpointPickerConfig: built from the router's strategy, or the user's verbatim.

A monolithic service gets one profile that scores every pod. A prefill/decode service gets a prefill
and a decode profile, each keeping its own pods (by the ``llm-d.ai/role`` label) and scored alike, and
llm-d-router's ``disagg-profile-handler``, which decides per request with a decider plugin whether a
separate prefill runs (a threshold in uncached prompt tokens).
In layout disaggregated llm-d-router's rollout screener comes first: it keeps each request's prefill
and decode on one DisaggregatedSet revision.
"""

from __future__ import annotations

from fusion_helm.base.labels import LABEL_REVISION, LABEL_SET_NAME, LABEL_SET_ROLE, LABEL_WORKER_INDEX
from fusion_helm.base.needs import PREFILL_DECODE
from fusion_helm.errors import InvalidSpec
from fusion_helm.expand import tls
from fusion_helm.expand.generations import ROLLOUT_SCREENER, Generation, Routing
from fusion_helm.expand.router import precise
from fusion_helm.kio.construct import load
from fusion_helm.kio.write import dump
from fusion_helm.model import InferenceService, Layout, Router, Scorer, WeightedScorer
from fusion_helm.model.router import STRATEGY_WORDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONFIG_KIND = "EndpointPickerConfig"
PICKER = "max-score-picker"
FLOW_CONTROL = "flowControl"
"""The feature gate that queues requests in the picker (its flow control), where the generation has one."""
METRICS_SOURCE = "metrics-data-source"
"""The plugin that scrapes the engines' metrics, where the generation's configuration names its metrics
source (llm-d-router; the Inference Extension since v1.5)."""


def picker_config(service: InferenceService, routing: Routing, queue_seconds: int | None = None) -> str:
    """QUEUE_SECONDS: flow control on, each request held at most that long (``defaultRequestTTL``)."""
    router, generation, disaggregated = routing.router, routing.generation, service.disaggregated
    if router.endpoint_picker_config is not None:
        _check_verbatim(service, router, generation, queue_seconds)
        return router.endpoint_picker_config
    screener = [rollout_screener(service)] if screens_revisions(service) else []
    scorers = _scorer_plugins(service, router, generation, routing.scorers)
    producers = [] if routing.precise is None else precise.producer_plugins(routing.precise)
    plugins: list[dict[str, Any]] = [*producers, *(plugin for plugin, _ in scorers)]
    refs = [{"pluginRef": plugin["type"], "weight": weight} for plugin, weight in scorers]
    if disaggregated:
        profiles = [{"name": name, "plugins": [{"pluginRef": f"{name}-filter"}, *refs, {"pluginRef": PICKER}]}
                    for name in ("prefill", "decode")]
        plugins = [{"type": "prefill-filter"}, {"type": "decode-filter"}, *plugins, {"type": PICKER},
                   *_pd_handler(service, router, scorers)]
    else:
        profiles = [{"name": "default", "plugins": [*refs, {"pluginRef": PICKER}]}]
        plugins = [*plugins, {"type": PICKER}, {"type": "single-profile-handler"}]
    config: dict[str, Any] = {"apiVersion": generation.config_api_version, "kind": CONFIG_KIND}
    if queue_seconds is not None:
        config["featureGates"] = [FLOW_CONTROL]
        config["flowControl"] = {"defaultRequestTTL": f"{queue_seconds}s"}
    config["plugins"] = [*screener, *plugins, *_metrics_source(service, generation)]
    if producers:
        config["dataLayer"] = precise.DATA_LAYER
    config["schedulingProfiles"] = profiles
    return dump(config)


def _metrics_source(service: InferenceService, generation: Generation) -> list[dict[str, Any]]:
    """Where spec.tls has the engines serve HTTPS, the picker scrapes their metrics so: its metrics source
    plugin, which its configuration loader then uses in place of the default (plain HTTP) one, with the CA
    where it verifies (generation_of refuses verifyPeers to a picker whose source takes none). (The
    Inference Extension's pickers before v1.5 take flags for it: picker.picker_args.)"""
    if service.tls is None or generation.flags.metrics_scheme is not None:
        return []
    parameters: dict[str, Any] = {"scheme": "https", "insecureSkipVerify": not service.tls.verify_peers}
    if service.tls.verify_peers:
        parameters["caCertPath"] = f"{tls.MOUNT_PATH}/{tls.CA}"
    return [{"type": METRICS_SOURCE, "parameters": parameters}]


def screens_revisions(service: InferenceService) -> bool:
    """Layout disaggregated: the picker keeps each request on one DisaggregatedSet revision."""
    return service.layout is Layout.DISAGGREGATED


def rollout_screener(service: InferenceService) -> dict[str, Any]:
    """Before any profile runs, the screener picks one revision among those with a ready leader in every
    prefill and decode role (weighted by their ready leaders), and shows the profiles only its pods: a
    prefill and a decode of different revisions never serve one request. It is not in a profile."""
    roles = [role.name for role in service.roles if role.component_type in PREFILL_DECODE]
    return {"type": ROLLOUT_SCREENER, "parameters": {
        "scope": {"labelSelector": f"{LABEL_SET_NAME}={service.name},{LABEL_WORKER_INDEX}=0"},
        "revisionGating": {"mode": "sum", "revisionLabelKey": LABEL_REVISION, "roleLabelKey": LABEL_SET_ROLE,
                           "requireRoles": {"values": roles}},
    }}


def scorers_for(router: Router, generation: Generation, adapters: bool) -> tuple[WeightedScorer, ...]:
    """The router's scorers; where it names none and the engines serve LoRA adapters, the lora-affinity
    weighting (a request for an adapter goes where it is loaded, or a slot is free, before anywhere it
    must be loaded first), where the generation has that scorer."""
    if adapters and not router.scoring_given and Scorer.LORA_AFFINITY in generation.scorer_plugins:
        return STRATEGY_WORDS[Scorer.LORA_AFFINITY]
    return router.scorers


def _scorer_plugins(service: InferenceService, router: Router, generation: Generation,
                    scorers: tuple[WeightedScorer, ...]) -> list[tuple[dict[str, Any], int]]:
    out = []
    for index, scorer in enumerate(scorers):
        plugin_type = generation.scorer_plugins.get(scorer.type)
        if plugin_type is None:
            path = f"{router.path}.strategy" + (f".scorers[{index}].type" if router.strategy_word is None else "")
            raise InvalidSpec(service.where, path,
                              f"the {generation.name} endpoint picker has no {scorer.type} scorer; choose another "
                              "endpointPicker.generation (docs/router.md) or give endpointPickerConfig")
        plugin: dict[str, Any] = {"type": plugin_type}
        parameters = {**(precise.SCORER_PARAMETERS if scorer.type is Scorer.PRECISE_PREFIX_CACHE else {}),
                      **(scorer.parameters or {})}
        if parameters:
            plugin["parameters"] = parameters
        out.append((plugin, scorer.weight))
    return out


def _pd_handler(service: InferenceService, router: Router, scorers: list[tuple[dict[str, Any], int]]
                ) -> list[dict[str, Any]]:
    """The plugins that decide per request whether a separate prefill runs."""
    if router.prefill_threshold and not any(plugin["type"] == "prefix-cache-scorer" for plugin, _ in scorers):
        raise InvalidSpec(service.where, f"{router.path}.strategy.prefillThreshold",
                          f"needs the {Scorer.PREFIX_CACHE} scorer: the threshold counts the prompt not in the "
                          "prefix cache")
    # A decider with no threshold would never disaggregate (nonCachedTokens 0 turns it off).
    decider = {"type": "prefix-based-pd-decider", "parameters": {"nonCachedTokens": router.prefill_threshold}} \
        if router.prefill_threshold else {"type": "always-disagg-pd-decider"}
    return [{"type": "disagg-profile-handler", "parameters": {"deciders": {"prefill": decider["type"]}}}, decider]


def _check_verbatim(service: InferenceService, router: Router, generation: Generation,
                    queue_seconds: int | None) -> None:
    path = f"{router.path}.endpointPickerConfig"
    try:
        config = load(router.endpoint_picker_config or "")
    except ValueError as error:
        raise InvalidSpec(service.where, path, f"is not YAML: {error}") from None
    if not isinstance(config, dict) or config.get("kind") != CONFIG_KIND:
        raise InvalidSpec(service.where, path, f"must be a {CONFIG_KIND} ({generation.config_api_version}) document")
    plugins = config.get("plugins")
    if service.tls is not None and generation.flags.metrics_scheme is None and not (isinstance(plugins, list) and any(
            isinstance(plugin, dict) and plugin.get("type") == METRICS_SOURCE
            and isinstance(plugin.get("parameters"), dict) and plugin["parameters"].get("scheme") == "https"
            for plugin in plugins)):
        raise InvalidSpec(service.where, path,
                          f"needs a {METRICS_SOURCE} plugin with scheme https where spec.tls has the engines serve "
                          "HTTPS only: without it the picker scrapes their metrics in plain HTTP and scores blind")
    if queue_seconds is not None and not (isinstance(config.get("featureGates"), list)
                                          and FLOW_CONTROL in config["featureGates"]):
        raise InvalidSpec(service.where, path,
                          f"needs featureGates: [{FLOW_CONTROL}] where an autoscaled role follows the picker's queue "
                          "or stands at zero: without it the picker queues nothing, and a request that finds no "
                          f"replica fails at once (docs/autoscaling.md; a flowControl.defaultRequestTTL of "
                          f"{queue_seconds}s covers this service's cold start)")
    if screens_revisions(service) and not (isinstance(plugins, list) and any(
            isinstance(plugin, dict) and plugin.get("type") == ROLLOUT_SCREENER for plugin in plugins)):
        raise InvalidSpec(service.where, path,
                          f"needs a {ROLLOUT_SCREENER} plugin in layout {service.layout}: without it the picker "
                          "pairs prefill and decode pods of different revisions while the DisaggregatedSet rolls "
                          "(docs/router.md)")
