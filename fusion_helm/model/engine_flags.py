"""The engines and the options of their command lines the expansion reads or writes.

vLLM and SGLang parse their command lines with argparse: an option is ``--name value`` or ``--name=value``,
some have a short spelling too (vLLM's ``-tp``, ``-dpl``, ``-asc``; a one-letter one may carry its value,
``-n2``). ``OPTIONS`` lists every option the expansion reads or writes, with each engine's spellings as its
own parser has them (tests/real_engines/test_engines.py holds the table to the parsers); ``ServerCommand``
(``fusion_helm.model.engine``) reads and rewrites them in every spelling. And what each engine reports on
its /metrics (``ENGINE_METRICS``).
"""

from __future__ import annotations

from enum import StrEnum

from fusion_helm.records import EMPTY, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


MAX_PORT = 65535


class Engine(StrEnum):
    VLLM = "vllm"
    SGLANG = "sglang"

    @property
    def default_port(self) -> int:
        """Where its server listens without ``--port``."""
        return 8000 if self is Engine.VLLM else 30000


class EngineMetric(StrEnum):
    """What an engine reports on its /metrics, by meaning (``ENGINE_METRICS`` names it per engine)."""

    QUEUE = "queue"
    RUNNING = "running"
    KV_CACHE = "kv-cache"
    PROMPT_TOKENS = "prompt-tokens"
    LORA = "lora"


ENGINE_METRICS: Mapping[Engine, Mapping[EngineMetric, str]] = {
    # Since vLLM 0.10: kv_cache_usage_perc, not gpu_cache_usage_perc (llm-d's simulator emits the same).
    Engine.VLLM: {EngineMetric.QUEUE: "vllm:num_requests_waiting",
                  EngineMetric.RUNNING: "vllm:num_requests_running",
                  EngineMetric.KV_CACHE: "vllm:kv_cache_usage_perc",
                  EngineMetric.PROMPT_TOKENS: "vllm:prompt_tokens_total",
                  EngineMetric.LORA: "vllm:lora_requests_info"},
    Engine.SGLANG: {EngineMetric.QUEUE: "sglang:num_queue_reqs",
                    EngineMetric.RUNNING: "sglang:num_running_reqs",
                    EngineMetric.KV_CACHE: "sglang:token_usage",
                    EngineMetric.PROMPT_TOKENS: "sglang:prompt_tokens_total"},
}
"""The engines' metric names (vLLM 0.32, SGLang 0.5)."""


@record
class Option:
    """One option of the engines' command lines: the spellings each engine's parser takes for it (its
    option strings, and the abbreviations argparse resolves to it that manifests write, such as SGLang's
    ``--tp``), and whether it takes a value."""

    spellings: Mapping[Engine, tuple[str, ...]]
    takes_value: bool = True
    abbreviations: Mapping[Engine, tuple[str, ...]] = EMPTY  # type: ignore[assignment]  # (an empty mapping)

    def name(self, engine: Engine | None) -> str:
        """How errors and written flags spell it: the engine's first spelling."""
        spellings = self.spellings.get(engine) if engine is not None else None
        return (spellings or next(iter(self.spellings.values())))[0]


def _vllm(*spellings: str, takes_value: bool = True) -> Option:
    return Option({Engine.VLLM: spellings}, takes_value)


def _both(*spellings: str, sglang: tuple[str, ...] | None = None) -> Option:
    return Option({Engine.VLLM: spellings, Engine.SGLANG: sglang or spellings})


PORT = _both("--port")
TENSOR_PARALLEL_SIZE = Option({Engine.VLLM: ("--tensor-parallel-size", "-tp"),
                               Engine.SGLANG: ("--tp-size", "--tensor-parallel-size")},
                              abbreviations={Engine.SGLANG: ("--tp",)})
PIPELINE_PARALLEL_SIZE = Option({Engine.VLLM: ("--pipeline-parallel-size", "-pp"),
                                 Engine.SGLANG: ("--pp-size", "--pipeline-parallel-size")})
SGLANG_DATA_PARALLEL_SIZE = Option({Engine.SGLANG: ("--dp-size", "--data-parallel-size")})
KV_TRANSFER_CONFIG = _vllm("--kv-transfer-config")
KV_EVENTS_CONFIG = _vllm("--kv-events-config")
BLOCK_SIZE = _vllm("--block-size")
DISTRIBUTED_EXECUTOR_BACKEND = _vllm("--distributed-executor-backend")
NNODES = _both("--nnodes", "-n", sglang=("--nnodes",))
NODE_RANK = _both("--node-rank", "-r", sglang=("--node-rank",))
MASTER_ADDR = _vllm("--master-addr")
MASTER_PORT = _vllm("--master-port")
HEADLESS = _vllm("--headless", takes_value=False)
DATA_PARALLEL_SIZE = _vllm("--data-parallel-size", "-dp")
DATA_PARALLEL_SIZE_LOCAL = _vllm("--data-parallel-size-local", "-dpl")
DATA_PARALLEL_START_RANK = _vllm("--data-parallel-start-rank", "-dpr")
DATA_PARALLEL_ADDRESS = _vllm("--data-parallel-address", "-dpa")
DATA_PARALLEL_RPC_PORT = _vllm("--data-parallel-rpc-port", "-dpp")
DATA_PARALLEL_HYBRID_LB = _vllm("--data-parallel-hybrid-lb", "--no-data-parallel-hybrid-lb", "-dph",
                                takes_value=False)
API_SERVER_COUNT = _vllm("--api-server-count", "-asc")
SSL_CERTFILE = _both("--ssl-certfile")
SSL_KEYFILE = _both("--ssl-keyfile")
ENABLE_SSL_REFRESH = Option({Engine.VLLM: ("--enable-ssl-refresh", "--no-enable-ssl-refresh"),
                             Engine.SGLANG: ("--enable-ssl-refresh",)}, takes_value=False)
DISAGGREGATION_MODE = Option({Engine.SGLANG: ("--disaggregation-mode",)})
DISAGGREGATION_BOOTSTRAP_PORT = Option({Engine.SGLANG: ("--disaggregation-bootstrap-port",)})
DIST_INIT_ADDR = Option({Engine.SGLANG: ("--dist-init-addr", "--nccl-init-addr")})
MODEL = Option({Engine.VLLM: ("--model",), Engine.SGLANG: ("--model-path", "--model")})
SERVED_MODEL_NAME = _both("--served-model-name")
REVISION = _both("--revision")
LOAD_FORMAT = _both("--load-format")
ENABLE_LORA = Option({Engine.VLLM: ("--enable-lora", "--no-enable-lora"), Engine.SGLANG: ("--enable-lora",)},
                     takes_value=False)
LORA_MODULES = _vllm("--lora-modules")
LORA_PATHS = Option({Engine.SGLANG: ("--lora-paths",)})

API_SERVER_ONLY = (API_SERVER_COUNT,)
"""vLLM's options of its API server that its headless launch refuses: a headless worker (one that starts no
API server) is started without them. tests/real_engines/test_engines.py gives every option of vLLM's API server to a
leader and to a headless worker and finds, by vLLM's own launch path, exactly these refused on the worker
alone (the API server's other options are ignored there)."""

OPTIONS = {name: value for name, value in globals().items() if isinstance(value, Option)}
"""Every option the expansion reads or writes, by its name here."""
