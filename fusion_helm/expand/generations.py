"""The endpoint picker generations a router can run, and which one it runs.

A generation is one picker release line: its image, flag names, EndpointPickerConfig API and plugin
names, the pool APIs it reads and the model objects it watches. The router's ``endpointPicker.generation``
names one; without it the pool API chooses, as gateways of each era expect (``DEFAULTS``).
"""

from __future__ import annotations

from collections.abc import Mapping

from fusion_helm.base import needs
from fusion_helm.base.kinds import INFERENCE_POOL
from fusion_helm.errors import InvalidSpec
from fusion_helm.model import InferenceService, Layout, PoolAPI, Router, Scorer, WeightedScorer
from fusion_helm.model.engine_flags import ENGINE_METRICS, Engine, EngineMetric
from fusion_helm.model.scaling import Signal
from fusion_helm.records import EMPTY, record

MODEL_GROUP = needs.PICKERS[needs.GIE_V1].model.group
"""The Inference Extension's InferenceModel and InferenceObjective."""
LLM_D_GROUP = needs.PICKERS[needs.LLM_D_ROUTER].model.group
"""llm-d-router's own InferenceObjective, which it reads in preference to the Inference Extension's."""
ROLLOUT_SCREENER = "disaggregatedset-rollout-screener"
"""llm-d-router's plugin that keeps a request's prefill and decode on one DisaggregatedSet revision."""
EXPERIMENTAL_FLAG = "allow-experimental-plugins"
"""llm-d-router loads an Alpha plugin (the rollout screener, in v0.10.0) only with this flag."""
GIE_CONFIG_API_VERSION = "inference.networking.x-k8s.io/v1alpha1"


@record
class PickerFlags:
    """The picker's flag names for what the router sets; None where the release has no such flag."""

    pool_name: str
    pool_namespace: str
    pool_group: str | None
    grpc_port: str
    grpc_health_port: str
    config_file: str
    metrics_scheme: str | None = None
    """The scheme it scrapes the engines' metrics in; None: its configuration's metrics source says."""
    metrics_insecure: str | None = None
    """Whether it skips verifying the engines' certificates when that scheme is https."""

    def names(self) -> tuple[str | None, ...]:
        return (self.pool_name, self.pool_namespace, self.pool_group, self.grpc_port, self.grpc_health_port,
                self.config_file, self.metrics_scheme, self.metrics_insecure)


SOURCED_FLAGS = PickerFlags(pool_name="pool-name", pool_namespace="pool-namespace", pool_group="pool-group",
                            grpc_port="grpc-port", grpc_health_port="grpc-health-port", config_file="config-file")
"""llm-d-router's and the Inference Extension's since v1.5: their metrics source is a plugin of their
configuration (picker_config), no longer flags."""
VLLM_METRICS = {str(meaning): ENGINE_METRICS[Engine.VLLM][meaning]
                for meaning in (EngineMetric.QUEUE, EngineMetric.KV_CACHE, EngineMetric.LORA)}
"""The metrics the pickers score by, as vLLM and llm-d's simulator emit them."""
ENGINE_CONFIG_METRICS = (*VLLM_METRICS.values(), ENGINE_METRICS[Engine.VLLM][EngineMetric.RUNNING],
                         "vllm:cache_config_info")
"""What a picker that names the engines' metrics in its configuration (``engineConfigs``) reads of a pod
by default: its built-in vllm entry, today's names (the core-metrics-extractor's factories.go, in llm-d-router
v0.10.0 as in the Inference Extension v1.5.0)."""
REFUSED_METRIC_FLAGS = dict.fromkeys(
    ("total-queued-requests-metric", "total-running-requests-metric", "kv-cache-usage-percentage-metric",
     "lora-info-metric", "cache-info-metric"),
    "the picker exits at start when given it: name the metrics in endpointPickerConfig, in its "
    "core-metrics-extractor's engineConfigs")
"""The metric flags a picker of engineConfigs refuses (its server/options.go Validate)."""
V1_SCORERS = {Scorer.PREFIX_CACHE: "prefix-cache-scorer", Scorer.KV_CACHE_UTILIZATION: "kv-cache-utilization-scorer",
              Scorer.QUEUE_SIZE: "queue-scorer", Scorer.LORA_AFFINITY: "lora-affinity-scorer"}


@record
class Sidecar:
    """The prefill/decode sidecar of a generation: the proxy in front of a decode engine that runs the
    prefill the picker chose (``x-prefiller-host-port``) before it decodes."""

    image: str

KEBAB_METRIC_FLAGS = {"total-queued-requests-metric": VLLM_METRICS["queue"],
                      "kv-cache-usage-percentage-metric": VLLM_METRICS["kv-cache"],
                      "lora-info-metric": VLLM_METRICS["lora"]}


@record
class Generation:
    name: str
    """Its name, a key of needs.PICKERS."""
    image: str
    flags: PickerFlags
    default_flags: Mapping[str, str]
    """Flags the router sets unless the user's flags say otherwise."""
    config_api_version: str
    scorer_plugins: Mapping[Scorer, str]
    """EndpointPickerConfig plugin type of each scorer the release has."""
    pd_sidecar: Sidecar | None
    """Its prefill/decode sidecar; None: the line cannot serve a prefill/decode service."""
    engine_metrics: tuple[str, ...]
    """The engine metrics the picker scores by, under the names engines emit them today."""
    metric_flags: Mapping[str, str]
    """The flags the router sets so that the picker reads ``engine_metrics``, where the release's own
    defaults are older names: flag → metric."""
    watches: Mapping[str, tuple[str, ...]]
    """The model objects the picker reads, by API group (its Role grants them; pods and the pool besides)."""
    drains_on_stop: bool
    """Told to stop, it keeps routing for a while (its own drain window) before it exits; otherwise it stops
    at once, and its pod waits first (picker.STOP_DELAY)."""
    verifies_engines: bool = False
    """It can verify the engines' certificates as it scrapes their metrics (its metrics source takes a CA):
    what spec.tls.verifyPeers needs of it."""
    refused_flags: Mapping[str, str] = EMPTY
    """Flags the release has deprecated, each with why and what takes its place: the user's is refused here,
    not left to stop the picker at start or to lose to the configuration the router writes."""
    rollout_screener: bool = False
    """It has the DisaggregatedSet rollout screener (an Alpha plugin, loaded with EXPERIMENTAL_FLAG)."""
    picker_metrics: Mapping[Signal, str] | None = None
    """Where it has flow control (its flowControl feature gate: it queues requests while the pool is
    saturated, and while it has no endpoint at all - the waiting room of a role scaled to zero), what it
    reports that an autoscaler follows: its metric of each signal read at the picker (the requests its flow
    control holds, and those it has in flight). None: it has no flow control."""

    @property
    def flow_control(self) -> bool:
        return self.picker_metrics is not None

    @property
    def reads(self) -> needs.PickerReads:
        """The pool APIs it takes and the model objects it reads (where the router writes them)."""
        return needs.PICKERS[self.name]

    @property
    def pool_apis(self) -> tuple[PoolAPI, ...]:
        return tuple(PoolAPI(api) for api in self.reads.pool_apis)


GENERATIONS: Mapping[str, Generation] = {
    needs.GIE_V05: Generation(
        name=needs.GIE_V05,
        image="registry.k8s.io/gateway-api-inference-extension/epp:v0.5.1",
        flags=PickerFlags(pool_name="poolName", pool_namespace="poolNamespace", pool_group=None,
                          grpc_port="grpcPort", grpc_health_port="grpcHealthPort", config_file="configFile",
                          metrics_scheme="modelServerMetricsScheme",
                          metrics_insecure="modelServerMetricsHttpsInsecureSkipVerify"),
        default_flags={},
        config_api_version=GIE_CONFIG_API_VERSION,
        scorer_plugins={Scorer.PREFIX_CACHE: "prefix-cache-scorer", Scorer.KV_CACHE_UTILIZATION: "kv-cache-scorer",
                        Scorer.QUEUE_SIZE: "queue-scorer"},
        pd_sidecar=None,
        engine_metrics=tuple(VLLM_METRICS.values()),
        metric_flags={"totalQueuedRequestsMetric": VLLM_METRICS["queue"],
                      "kvCacheUsagePercentageMetric": VLLM_METRICS["kv-cache"],
                      "loraInfoMetric": VLLM_METRICS["lora"]},
        watches={MODEL_GROUP: ("inferencemodels",)},
        drains_on_stop=False,
    ),
    needs.GIE_V1: Generation(
        name=needs.GIE_V1,
        image="registry.k8s.io/gateway-api-inference-extension/epp:v1.0.1",
        flags=PickerFlags(pool_name="pool-name", pool_namespace="pool-namespace", pool_group="pool-group",
                          grpc_port="grpc-port", grpc_health_port="grpc-health-port", config_file="config-file",
                          metrics_scheme="model-server-metrics-scheme",
                          metrics_insecure="model-server-metrics-https-insecure-skip-verify"),
        default_flags={},
        config_api_version=GIE_CONFIG_API_VERSION,
        scorer_plugins=V1_SCORERS,
        # Its prefill/decode picker (llm-d-inference-scheduler v0.3) pairs with llm-d-routing-sidecar
        # v0.3, a retired repository: llm-d-router carries both on.
        pd_sidecar=None,
        engine_metrics=tuple(VLLM_METRICS.values()),
        metric_flags=KEBAB_METRIC_FLAGS,
        watches={MODEL_GROUP: ("inferenceobjectives",)},
        drains_on_stop=False,
    ),
    # Decided from the v1.5.0 module's source (file names below are under its pkg/epp unless rooted).
    needs.GIE_V15: Generation(
        name=needs.GIE_V15,
        image="registry.k8s.io/gateway-api-inference-extension/epp:v1.5.0",
        # server/options.go: v1.0's names; --pool-group takes only the v1 pool's group (needs.PICKERS).
        # Its metric scheme flags are deprecated for the metrics-data-source plugin's parameters, which
        # the router writes (picker_config).
        flags=SOURCED_FLAGS,
        # Tracing is on by default there, exporting to a collector at localhost:4317 unless told otherwise
        # (pkg/common/observability/tracing/telemetry.go); its own chart turns it off unless asked
        # (config/charts/epplib/templates/_deployment.yaml).
        default_flags={"tracing": "false"},
        # apix/config/v1alpha1, the group and version of v1.0's.
        config_api_version=GIE_CONFIG_API_VERSION,
        # cmd/epp/runner/runner.go registers the four scorers by v1.0's names.
        scorer_plugins=V1_SCORERS,
        # No prefill/decode profile handler or filter is registered, and no sidecar released.
        pd_sidecar=None,
        # Today's names by default: the core-metrics-extractor's engineConfigs (as llm-d-router).
        engine_metrics=ENGINE_CONFIG_METRICS,
        metric_flags={},
        # server/controller_manager.go and controller/: InferenceObjectives and InferenceModelRewrites.
        watches={MODEL_GROUP: ("inferenceobjectives", "inferencemodelrewrites")},
        # At SIGTERM its gRPC servers stop gracefully (internal/runnable/grpc.go): no new stream is taken,
        # no drain window.
        drains_on_stop=False,
        # Its metrics-data-source takes a scheme, a path and insecureSkipVerify, no CA
        # (framework/plugins/datalayer/source/metrics/datasource.go): it cannot verify.
        verifies_engines=False,
        refused_flags={**REFUSED_METRIC_FLAGS, **dict.fromkeys(
            ("model-server-metrics-scheme", "model-server-metrics-https-insecure-skip-verify"),
            "spec.tls has it scrape the engines in HTTPS, through its metrics-data-source plugin")},
        # flowcontrol/config.go's feature gate; with no endpoint its default saturation detector reports the
        # pool saturated (framework/plugins/flowcontrol/saturationdetector/utilization/detector.go) and the
        # dispatch holds every request (flowcontrol/controller/internal/processor.go). Its metrics:
        # metrics/metrics.go.
        picker_metrics={Signal.PICKER_QUEUE: "inference_extension_flow_control_queue_size",
                        Signal.PICKER_RUNNING: "inference_objective_running_requests"},
    ),
    needs.LLM_D_ROUTER: Generation(
        name=needs.LLM_D_ROUTER,
        image="ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0",
        flags=SOURCED_FLAGS,
        # As its own chart: no trace exporter unless asked for.
        default_flags={"tracing": "false"},
        config_api_version="llm-d.ai/v1alpha1",
        # The precise scorer: the same prefix-cache-scorer, fed by the precise-prefix-cache-producer
        # (router.precise).
        scorer_plugins={**V1_SCORERS, Scorer.PRECISE_PREFIX_CACHE: "prefix-cache-scorer"},
        pd_sidecar=Sidecar(image="ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.10.0"),
        # Its defaults are today's names; it refuses the metric flags (deprecated for engineConfigs).
        engine_metrics=ENGINE_CONFIG_METRICS,
        metric_flags={},
        watches={MODEL_GROUP: ("inferenceobjectives", "inferencemodelrewrites"),
                 LLM_D_GROUP: ("inferenceobjectives", "inferencemodelrewrites")},
        # --drain-timeout, 30 s by default: ext-proc served on while the gateway stops sending.
        drains_on_stop=True,
        # Its metrics-data-source takes caCertPath.
        verifies_engines=True,
        refused_flags=REFUSED_METRIC_FLAGS,
        rollout_screener=True,
        # Its own names (it reports the Inference Extension's too, deprecated there).
        picker_metrics={Signal.PICKER_QUEUE: "llm_d_epp_flow_control_queue_size",
                        Signal.PICKER_RUNNING: "llm_d_epp_request_running"},
    ),
}

assert GENERATIONS.keys() == needs.PICKERS.keys(), "every generation the schema takes has its release here"

DEFAULTS: Mapping[PoolAPI, str] = {PoolAPI(api): name for api, name in needs.DEFAULT_PICKERS.items()}
"""The generation a monolithic service's router runs unless it names one, by pool API (needs.DEFAULT_PICKERS)."""
PD_GENERATION = needs.PREFILL_DECODE_PICKER
LAYOUT_GENERATIONS: Mapping[Layout, str] = {Layout(layout): name for layout, name in needs.LAYOUT_PICKERS.items()}


def generation_of(service: InferenceService, router: Router) -> Generation:
    """The generation ROUTER runs; InvalidSpec if the one it names cannot serve its pool, service or layout."""
    needed = LAYOUT_GENERATIONS.get(service.layout)
    path = f"{router.path}.endpointPicker.generation"
    if needed is not None and router.picker_generation not in (None, needed):
        raise InvalidSpec(service.where, path,
                          f"layout {service.layout} needs the {needed} picker, whose {ROLLOUT_SCREENER} keeps "
                          f"each request's prefill and decode on one DisaggregatedSet revision; the "
                          f"{router.picker_generation} picker has none")
    if service.disaggregated and router.picker_generation is not None \
            and GENERATIONS[router.picker_generation].pd_sidecar is None:
        raise InvalidSpec(service.where, path,
                          f"the {router.picker_generation} picker has no prefill/decode sidecar to run the prefill it "
                          f"would choose; choose {PD_GENERATION}, whose picker and sidecar are released together "
                          "(docs/router.md)")
    name = needs.picker_of(router.picker_generation, service.layout, service.disaggregated, router.pool_api)
    assert name is not None, "every pool API of the model has a default generation"
    generation = GENERATIONS[name]
    if service.tls is not None and service.tls.verify_peers and not generation.verifies_engines:
        verifying = " or ".join(str(other.name) for other in GENERATIONS.values() if other.verifies_engines)
        raise InvalidSpec(service.where, "spec.tls.verifyPeers",
                          f"the {generation.name} picker cannot verify the engines' certificates as it scrapes "
                          f"their metrics (it takes no CA); choose endpointPicker.generation {verifying}, or "
                          "leave verifyPeers out")
    if router.pool_api not in generation.pool_apis:
        reads = " and ".join(api.value for api in generation.pool_apis)
        if router.picker_generation is None:  # the layout's or prefill/decode's (a pool's default reads it)
            why = f"layout {service.layout}" if needed is not None else "a prefill/decode service"
            raise InvalidSpec(service.where, f"{router.path}.poolAPIVersion",
                              f"{why} needs the {generation.name} picker, which reads {reads} InferencePools, not "
                              f"{router.pool_api.value}")
        raise InvalidSpec(service.where, path,
                          f"the {generation.name} picker reads {reads} InferencePools, not {router.pool_api.value}; "
                          "choose another generation or poolAPIVersion")
    return generation


@record
class PreciseIndex:
    """What a picker that scores by the engines' KV-cache events hashes prompts for."""

    model: str
    """The model name the engines' requests target (its render server tokenizes for it)."""
    block_tokens: int
    """The engines' KV block, in tokens."""


@record
class Routing:
    """What the expansion reads of a service's router, decided once per service."""

    router: Router
    generation: Generation
    """The picker generation it runs (``generation_of``)."""
    port: int
    """Where its InferencePool sends requests on the serving pods."""
    scorers: tuple[WeightedScorer, ...]
    """How its picker scores pods: the router's, else the default for its engines (picker_config.scorers_for)."""
    kv_connector: str | None = None
    """A prefill/decode service's: the prefill/decode sidecar's mode for the KV connector its engines speak;
    None where no role moves KV."""
    precise: PreciseIndex | None = None
    """Where the picker scores by the engines' KV-cache events, what it hashes prompts for; None: it does not."""


def backend_ref(pool_api: PoolAPI, pool: str) -> dict[str, str]:
    """An HTTPRoute backendRef to the pool (no port: the pool has its own)."""
    return {"group": pool_api.group, "kind": INFERENCE_POOL, "name": pool}
