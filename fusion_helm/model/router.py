"""The router role: an endpoint picker in front of the service's serving pods, and how traffic reaches it."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from fusion_helm.base.kinds import LEADER_WORKER_SET
from fusion_helm.base.labels import ANNOTATION_PICKER_CONFIG_HASH
from fusion_helm.base.needs import DEFAULT_POOL_API, POOL_V1, POOL_V1ALPHA2
from fusion_helm.errors import InvalidSpec, key_path, show
from fusion_helm.model import upstream
from fusion_helm.model.metadata import check_annotation_map, check_label_map
from fusion_helm.model.validation import check, check_unique
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_FLAG_CHARS = _ALNUM | frozenset("_.-")
POD_SPEC = (LEADER_WORKER_SET.api_version, LEADER_WORKER_SET.kind, "spec", "leaderWorkerTemplate", "workerTemplate",
            "spec")
PICKER_FIELDS_SCHEMAS = {"resources": (*POD_SPEC, "containers", "[]", "resources"),
                         "securityContext": (*POD_SPEC, "containers", "[]", "securityContext"),
                         "podSecurityContext": (*POD_SPEC, "securityContext")}
"""The picker's container resources and securityContext and its pod's securityContext, as the upstream
schemas have a pod's (a LeaderWorkerSet's pod template: the Deployment has no schema of its own here)."""


INFERENCE_PATHS = ("/v1/completions", "/v1/chat/completions", "/v1/embeddings", "/v1/responses")
"""The OpenAI serving paths every route matches (vLLM's and SGLang's): nothing else reaches the engines
through a Gateway but what a router's inferencePaths adds."""


class PoolAPI(StrEnum):
    V1 = POOL_V1
    V1ALPHA2 = POOL_V1ALPHA2

    @property
    def group(self) -> str:
        return self.value.split("/")[0]


class Scorer(StrEnum):
    PREFIX_CACHE = "prefix-cache"
    """Where the picker sent earlier requests: the prefix each engine likely holds (approximate)."""
    PRECISE_PREFIX_CACHE = "precise-prefix-cache"
    """What each engine reports it holds, block by block (its KV-cache events)."""
    KV_CACHE_UTILIZATION = "kv-cache-utilization"
    QUEUE_SIZE = "queue-size"
    LORA_AFFINITY = "lora-affinity"


class Criticality(StrEnum):
    CRITICAL = "Critical"
    STANDARD = "Standard"
    SHEDDABLE = "Sheddable"


@record
class WeightedScorer:
    type: Scorer
    weight: int = 1
    parameters: Mapping[str, Any] | None = None


DEFAULT_SCORERS = (WeightedScorer(Scorer.QUEUE_SIZE, 2), WeightedScorer(Scorer.KV_CACHE_UTILIZATION, 2),
                   WeightedScorer(Scorer.PREFIX_CACHE, 3))
"""The Gateway API Inference Extension's own default scoring."""

PD_DISAGGREGATION = "pd-disaggregation"


PREFIX_SCORERS = (Scorer.PREFIX_CACHE, Scorer.PRECISE_PREFIX_CACHE)
"""Two readings of one signal, of which a router scores by one."""


def _led_by(scorer: Scorer) -> tuple[WeightedScorer, ...]:
    """The default scoring with SCORER leading. The load scorers stay: one signal alone would send
    every request to the same pod (the longest prefix, the emptiest cache) until it is overloaded."""
    replaced = PREFIX_SCORERS if scorer in PREFIX_SCORERS else (scorer,)
    others = [default.type for default in DEFAULT_SCORERS if default.type not in replaced]
    return (WeightedScorer(scorer, 3), *(WeightedScorer(other, 2) for other in others))


STRATEGY_WORDS: Mapping[str, tuple[WeightedScorer, ...]] = {
    **{str(scorer): _led_by(scorer) for scorer in Scorer}, PD_DISAGGREGATION: DEFAULT_SCORERS}
"""``strategy`` as one word, the design's form: the scorers it stands for."""


@record
class TargetModel:
    name: str
    weight: int | None


@record
class ServedModel:
    """One entry of ``models``: an InferenceModel or InferenceObjective."""

    name: str
    model_name: str | None
    criticality: Criticality | None
    target_models: tuple[TargetModel, ...]
    path: str


@record
class ModelRewrite:
    """One entry of ``modelRewrites``: requests for MODEL served as one of TARGETS, by weight."""

    model: str
    targets: tuple[TargetModel, ...]
    path: str


@record
class SharedGateway:
    """A Gateway many services share, which the router's HTTPRoute joins."""

    name: str
    namespace: str | None
    section_name: str | None


@record
class Canary:
    """The router's service takes WEIGHT percent of the requests for its model names from POOL's."""

    pool: str
    weight: int


@record
class Router:
    name: str
    position: int
    pool_api: PoolAPI
    strategy_word: str | None
    """``strategy`` given as one word (its scorers are in ``scorers``)."""
    scorers: tuple[WeightedScorer, ...]
    prefill_threshold: int
    endpoint_picker_config: str | None
    """The user's EndpointPickerConfig text, used verbatim; None: built from the scorers."""
    picker_generation: str | None
    """The endpoint picker release line it names (a key of base.needs.PICKERS, the schema's enum)."""
    """None: the pool API chooses."""
    picker_image: str | None
    picker_flags: Mapping[str, str]
    picker_resources: Mapping[str, Any] | None
    picker_security_context: Mapping[str, Any] | None
    picker_pod_security_context: Mapping[str, Any] | None
    picker_network_policy: Mapping[str, Mapping[str, Mapping[str, str]]] | None
    """Who may reach the picker: "gateway" (and "scrapers") → podLabels / namespaceLabels; None: anyone."""
    picker_replicas: int
    picker_failure_mode: str
    """What the gateway does when no picker answers: FailClose or FailOpen (the InferencePool's field)."""
    picker_pod_annotations: Mapping[str, str]
    target_port: int | None
    gateway: Mapping[str, Any] | None
    httproute: Mapping[str, Any]
    models: tuple[ServedModel, ...]
    inference_paths: tuple[str, ...] = INFERENCE_PATHS
    """The paths the HTTPRoute matches: the OpenAI serving paths and the router's inferencePaths."""
    shared_gateway: SharedGateway | None = None
    model_names: tuple[str, ...] | None = None
    """The model names a shared Gateway routes here; None: the names the serving engines serve."""
    canary_of: Canary | None = None
    model_rewrites: tuple[ModelRewrite, ...] = ()
    scoring_given: bool = True
    """The router names its scoring (``strategy``); False: the defaults, which the served adapters may change."""

    DEFAULT_PICKER_REPLICAS: ClassVar[int] = 2
    """Enough that one picker may stop (a rolling update, a drain) while another routes."""
    DEFAULT_FAILURE_MODE: ClassVar[str] = "FailClose"

    @property
    def path(self) -> str:
        return f"spec.roles[{self.position}]"

    @property
    def reads_engine_caches(self) -> bool:
        """It scores by what the engines report they hold (precise-prefix-cache): their KV-cache events."""
        return any(scorer.type is Scorer.PRECISE_PREFIX_CACHE for scorer in self.scorers)

    @property
    def component_type(self) -> str:
        return "router"


def parse_router(raw: Mapping[str, Any], position: int, where: str, disaggregated: bool) -> Router:
    """A router role as validated by the schema; InvalidSpec for what the schema cannot say.
    PREFILL_DECODE roles: the service serves prefill and decode apart."""
    path = f"spec.roles[{position}]"
    strategy = raw.get("strategy") or {}
    if "endpointPickerConfig" in raw and strategy:
        raise InvalidSpec(where, f"{path}.strategy",
                          "give strategy or endpointPickerConfig, not both: the verbatim config would ignore it")
    word = strategy if isinstance(strategy, str) else None
    if word == PD_DISAGGREGATION and not disaggregated:
        raise InvalidSpec(where, f"{path}.strategy",
                          f"{PD_DISAGGREGATION} routes between prefiller and decoder roles, and the service has "
                          "none; choose another strategy")
    picker = raw.get("endpointPicker") or {}
    for flag in picker.get("flags") or {}:
        if not (flag[:1] in _ALNUM and _FLAG_CHARS.issuperset(flag)):
            raise InvalidSpec(where, key_path(f"{path}.endpointPicker.flags", flag),
                              f"is not a flag name (letters, digits, '-', '_' and '.', without the leading dashes), "
                              f"got {show(flag)}")
    for field, schema_path in PICKER_FIELDS_SCHEMAS.items():
        if picker.get(field) is not None:
            check(where, f"{path}.endpointPicker.{field}", upstream.schema(*schema_path), picker[field])
    return Router(
        name=raw["name"],
        position=position,
        pool_api=PoolAPI(raw.get("poolAPIVersion", DEFAULT_POOL_API)),
        strategy_word=word,
        scorers=STRATEGY_WORDS[word] if word else _scorers(strategy.get("scorers"), f"{path}.strategy.scorers", where),
        prefill_threshold=0 if word else strategy.get("prefillThreshold", 0),
        endpoint_picker_config=raw.get("endpointPickerConfig"),
        picker_generation=picker.get("generation"),
        picker_image=picker.get("image"),
        picker_flags=dict(picker.get("flags") or {}),
        picker_resources=picker.get("resources"),
        picker_security_context=picker.get("securityContext"),
        picker_pod_security_context=picker.get("podSecurityContext"),
        picker_network_policy=_network_policy(picker.get("networkPolicy"), f"{path}.endpointPicker.networkPolicy",
                                              where),
        picker_replicas=picker.get("replicas", Router.DEFAULT_PICKER_REPLICAS),
        picker_failure_mode=picker.get("failureMode", Router.DEFAULT_FAILURE_MODE),
        picker_pod_annotations=_pod_annotations(picker.get("podAnnotations"),
                                                f"{path}.endpointPicker.podAnnotations", where),
        target_port=raw.get("targetPort"),
        gateway=raw.get("gateway"),
        httproute=raw.get("httproute") or {},
        inference_paths=_inference_paths(raw.get("inferencePaths") or [], f"{path}.inferencePaths", where),
        models=_models(raw.get("models") or [], f"{path}.models", where),
        shared_gateway=_shared_gateway(raw, path, where),
        model_names=_model_names(raw, path, where),
        canary_of=Canary(raw["canaryOf"]["inferencePool"], raw["canaryOf"]["weight"]) if "canaryOf" in raw else None,
        model_rewrites=_model_rewrites(raw.get("modelRewrites") or [], f"{path}.modelRewrites", where),
        scoring_given=bool(strategy),
    )


def _model_rewrites(raw: list[Mapping[str, Any]], path: str, where: str) -> tuple[ModelRewrite, ...]:
    check_unique(where, path, [item["model"] for item in raw], "model", "model name")
    rewrites = []
    for index, item in enumerate(raw):
        item_path = f"{path}[{index}]"
        targets = tuple(TargetModel(target["model"], target.get("weight")) for target in item["targets"])
        _check_split(targets, f"{item_path}.targets", where, "model")
        rewrites.append(ModelRewrite(item["model"], targets, item_path))
    return tuple(rewrites)


def _shared_gateway(raw: Mapping[str, Any], path: str, where: str) -> SharedGateway | None:
    shared = raw.get("sharedGateway")
    if shared is None:
        return None
    if "gateway" in raw:
        raise InvalidSpec(where, f"{path}.gateway",
                          "give gateway (a Gateway of the service's own) or sharedGateway (one many services share), "
                          "not both")
    if (raw.get("httproute") or {}).get("parentRefs"):
        raise InvalidSpec(where, f"{path}.httproute.parentRefs",
                          "is sharedGateway's to write: the route attaches to the shared Gateway; remove it")
    return SharedGateway(shared["name"], shared.get("namespace"), shared.get("sectionName"))


def _model_names(raw: Mapping[str, Any], path: str, where: str) -> tuple[str, ...] | None:
    names = raw.get("modelNames")
    if names is None:
        return None
    if "sharedGateway" not in raw:
        raise InvalidSpec(where, f"{path}.modelNames",
                          "names what a shared Gateway routes here, and the router has no sharedGateway: add one, or "
                          "remove modelNames")
    for index, name in enumerate(names):
        if name in names[:index]:
            raise InvalidSpec(where, f"{path}.modelNames[{index}]",
                              f"duplicate model name {show(name)} (also {path}.modelNames[{names.index(name)}])")
    return tuple(names)


def _network_policy(raw: Mapping[str, Any] | None, path: str, where: str
                    ) -> Mapping[str, Mapping[str, Mapping[str, str]]] | None:
    """The peers' label maps, each checked as the API server checks a label selector's."""
    if raw is None:
        return None
    for peer, selectors in raw.items():
        for field, labels in selectors.items():
            check_label_map(where, f"{path}.{peer}.{field}", labels)
    return raw


def _inference_paths(raw: list[str], path: str, where: str) -> tuple[str, ...]:
    """The OpenAI serving paths and the router's own."""
    paths = list(INFERENCE_PATHS)
    for index, added in enumerate(raw):
        if added in paths:
            also = "always matched" if added in INFERENCE_PATHS else f"also {path}[{raw.index(added)}]"
            raise InvalidSpec(where, f"{path}[{index}]", f"duplicate path {show(added)} ({also})")
        paths.append(added)
    return tuple(paths)


def _pod_annotations(raw: Mapping[str, str] | None, path: str, where: str) -> Mapping[str, str]:
    check_annotation_map(where, path, raw)
    if raw and ANNOTATION_PICKER_CONFIG_HASH in raw:
        raise InvalidSpec(where, key_path(path, ANNOTATION_PICKER_CONFIG_HASH),
                          "is the picker's own: the hash of its configuration, which restarts it when that changes; "
                          "remove it")
    return dict(raw or {})


def _scorers(raw: list[Mapping[str, Any]] | None, path: str, where: str) -> tuple[WeightedScorer, ...]:
    if raw is None:
        return DEFAULT_SCORERS
    types = [item["type"] for item in raw]
    check_unique(where, path, types, "type", "scorer")
    if all(str(scorer) in types for scorer in PREFIX_SCORERS):
        raise InvalidSpec(where, f"{path}[{types.index(Scorer.PRECISE_PREFIX_CACHE)}].type",
                          f"{Scorer.PRECISE_PREFIX_CACHE} and {Scorer.PREFIX_CACHE} score one signal, what each engine "
                          f"holds of the prompt, read from the engines or guessed; keep one")
    return tuple(WeightedScorer(Scorer(item["type"]), item.get("weight", 1), item.get("parameters"))
                 for item in raw)


def _models(raw: list[Mapping[str, Any]], path: str, where: str) -> tuple[ServedModel, ...]:
    check_unique(where, path, [item["name"] for item in raw], "name", "model name")
    models: list[ServedModel] = []
    for index, item in enumerate(raw):
        item_path = f"{path}[{index}]"
        targets = tuple(TargetModel(t["name"], t.get("weight")) for t in item.get("targetModels") or [])
        _check_split(targets, f"{item_path}.targetModels", where, "name")
        criticality = item.get("criticality")
        models.append(ServedModel(name=item["name"], model_name=item.get("modelName"),
                                  criticality=Criticality(criticality) if criticality else None,
                                  target_models=targets, path=item_path))
    return tuple(models)


def _check_split(targets: tuple[TargetModel, ...], path: str, where: str, name_field: str) -> None:
    """Weights split traffic only when every target has one, or none has (then they share evenly); each
    target (its NAME_FIELD) once."""
    weighted = [target.weight is not None for target in targets]
    if any(weighted) and not all(weighted):
        missing = weighted.index(False)
        raise InvalidSpec(where, f"{path}[{missing}].weight",
                          "is required: weights split traffic only when every target model has one (or none has)")
    check_unique(where, path, [target.name for target in targets], name_field, "target model")
