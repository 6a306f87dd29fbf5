"""`make bench-serving`: a shared-prefix workload from a real load generator (guidellm, from PyPI), through
the gateway stand-in and a picker, to simulated serving pods (tests/controlplane/serving.py) — figures, not pass/fail.

One installation of a monolithic service (4 pods; each engine llm-d's vLLM simulator with its KV cache on,
so a cached prefix shortens a prefill as it does on vLLM) is measured under three pickers in turn, on the
same pods, each with prompts of its own (so no run finds another's prefixes cached):

- **fusioninfer precise**: the router as rendered with `strategy: precise-prefix-cache` (llm-d-router's
  picker; the engines publish their KV-cache events, every picker subscribes to every pod and tokenizes
  with a render server beside it — the simulator's, whose tokenizer the simulated engines use);
- **fusioninfer default**: the router as rendered for the service (no strategy given): the `llm-d-router`
  picker, queue-size 2, kv-cache-utilization 2, prefix-cache 3;
- **random**: the same picker choosing at random (a verbatim EndpointPickerConfig with `random-picker`);
- **gie-v1.0**, **gie-v1.5**: the router as rendered with that picker generation named (gie-v1.0 the
  default before llm-d-router);
- **llm-d inference scheduling**: llm-d-router's picker with the configuration its own chart renders by
  default (`config/charts/llm-d-router-standalone` of the release source), what llm-d's
  inference-scheduling guide deploys;
- **llm-d precise**: llm-d-router's picker with its release's sample precise configuration
  (`deploy/config/epp-precise-prefix-cache-config.yaml`: blocks of 64 tokens, prefix 2, KV cache 1,
  queue 1), its model and render server named as ours are.

Each picker serves four workloads in turn:

- **shared prefixes** (guidellm): 16 prefixes, each request one of them and a suffix of its own, 24 at once;
- **chat**: CHAT conversations, each turn's prompt the whole conversation so far (a system prompt all share,
  then two blocks a turn), a turn every few seconds — an open loop whose histories outgrow the pods' caches
  together;
- **chat, picker restarted**: the same, the picker stopped and started again halfway (a rollout, an
  eviction): what it knew of the engines' caches is gone, unless the engines tell it again;
- **Mooncake trace**: Mooncake's FAST'25 conversation trace (``../shared/traces``), one conversation in
  MOONCAKE_EVERY, time-compressed, each of its 512-token blocks one KV block here, equal ids the same text.

For each: the engines' prefix-cache hit rate (their own counters) and the ratios of ours to the others,
taken within the run; for the shared prefixes guidellm's TTFT p50 and p99, inter-token latency, output
tokens and requests per second; for the open-loop replays TTFT mean, p50 and p99 and requests lost.

``BENCH_ENGINE=vllm`` replays the same conversations to vLLM's CPU build instead (a tiny random-weight
model, its prompts words of its vocabulary; the same KV cache in tokens, in blocks of 32, the least vLLM's
CPU attention takes): vLLM evicts a request's blocks tail first and counts a prompt's cached blocks only up
to the first it lacks, where the simulator does neither, so its hit rates are the ones that rank the prefix
scorers. Its times are those of four engines sharing this machine's cores, not of a GPU's prefill.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import random
import re
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from fusion_helm import parse_inference_service
from fusion_helm.expand import expand
from tests import engines, tiny_model, traces
from tests.controlplane.builds import CACHE as CLUSTER_CACHE
from tests.controlplane.clients import gateway, metrics, total
from tests.controlplane.cluster import Cluster
from tests.controlplane.pickers import Picker, running, serving
from tests.controlplane.scenarios import RANDOM_CONFIG, engine_port, served, serving_values
from tests.controlplane.serving import ServingKubelet
from tests.helm import ROOT, VALUES, Helm
from tests.replay import first_token, percentile, replay

PODS = 4
CACHE_BLOCKS, BLOCK_TOKENS = 128, 16
CONTEXT_TOKENS = 1024
"""The simulated engines' context (its --max-model-len default): a longer request is refused."""
PREFILL_OVERHEAD_MS, PREFILL_MS_PER_TOKEN = 20, 2
ENGINE = ["--enable-kvcache", f"--kv-cache-size={CACHE_BLOCKS}", f"--block-size={BLOCK_TOKENS}",
          f"--prefill-overhead={PREFILL_OVERHEAD_MS}ms", f"--prefill-time-per-token={PREFILL_MS_PER_TOKEN}ms",
          "--inter-token-latency=10ms", "--max-num-seqs=8"]
"""Each simulated engine: a prefill costs 20 ms + 2 ms per uncached prompt token, a token 10 ms; 8 requests
run at once, the rest wait; its KV cache holds 128 blocks of 16 tokens (by its own count of tokens), about a
quarter of the workload's prefixes: a pod keeps the prefixes sent to it only if it is not sent them all."""
WORKLOAD = {"prefix_count": 16, "prefix_tokens": 1024, "prompt_tokens": 128, "output_tokens": 32}
"""16 shared prefixes of 1,024 tokens, each request one of them and 128 tokens of its own, 32 out."""
CONCURRENCY = int(os.environ.get("BENCH_CONCURRENCY", "24"))
REQUESTS = int(os.environ.get("BENCH_REQUESTS", "960"))
BLOCK_WORDS = BLOCK_TOKENS
"""A block of a replayed prompt: as many words, which the simulator counts one token each — one KV block."""
CHAT = {"conversations": 48, "turns": 6, "blocks per turn": 2, "think seconds": 6.0, "output tokens": 16}
"""48 conversations starting within 10 s, 6 turns each a think time (exponential, mean 6 s) after the last:
histories of up to 13 blocks, 577 distinct in all: 4.5 times a pod's KV cache, 1.1 times all four's."""
ENGINE_KIND = os.environ.get("BENCH_ENGINE", "simulator")
assert ENGINE_KIND in ("simulator", "vllm"), f"BENCH_ENGINE: simulator or vllm, not {ENGINE_KIND}"
REAL = ENGINE_KIND == "vllm"
"""The engines: llm-d's simulator, or (``vllm``) vLLM's CPU build."""
REAL_BLOCK_TOKENS = 32
"""vLLM's CPU attention takes blocks of a multiple of 32 tokens (the precise picker hashes in them too)."""
REAL_ENGINE = ["--num-gpu-blocks-override", str(CACHE_BLOCKS * BLOCK_TOKENS // REAL_BLOCK_TOKENS),
               "--block-size", str(REAL_BLOCK_TOKENS), "--max-num-seqs", "8"]
"""Each real engine: the simulated engines' KV cache in tokens, 8 requests at once."""
if REAL:
    CONTEXT_TOKENS = tiny_model.CONTEXT_TOKENS
PICKERS = [name for name in os.environ.get("BENCH_PICKERS", "").split(",") if name]
"""The pickers measured, by name (all: unset)."""
WORKLOADS = [name for name in os.environ.get("BENCH_WORKLOADS", "").split(",") if name]
"""The workloads measured, by name (all: unset)."""
WEIGHTS = [weights for weights in os.environ.get("BENCH_WEIGHTS", "").split(",") if weights]
"""More pickers to measure: ours precise with other weights, each PREFIX/QUEUE/KV (such as 5/2/1)."""
MOONCAKE_EVERY = int(os.environ.get("BENCH_MOONCAKE_EVERY", "32"))
MOONCAKE_MINUTES = float(os.environ.get("BENCH_MOONCAKE_MINUTES", "30"))
MOONCAKE_COMPRESSION = float(os.environ.get("BENCH_MOONCAKE_COMPRESSION", "30"))
MOONCAKE_OUTPUT = 8
"""The trace's output lengths divided by this (its mean is 343 tokens), at most 64: the picker's effect is at
the first token."""

def llm_d_config(helm: Helm, tmp_path: Path) -> str:
    """The EndpointPickerConfig llm-d-router's own chart renders by default (its default-plugins.yaml),
    for vLLM over HTTP: what llm-d's inference-scheduling guide deploys."""
    charts = tmp_path / "llm-d-router-charts"
    shutil.copytree(CLUSTER_CACHE / "src" / "vendor" / "llm-d-router-v0.10.0" / "config" / "charts", charts)
    chart = charts / "llm-d-router-standalone"
    helm.run("dependency", "build", chart)  # its library chart, from the directory beside it
    rendered = helm.run("template", "bench", chart, "--set", "router.modelServers.matchLabels.app=bench",
                        "--set", "router.modelServers.type=vllm", "--set", "router.modelServers.protocol=http").stdout
    for obj in yaml.safe_load_all(rendered):
        if obj and obj.get("kind") == "ConfigMap" and "default-plugins.yaml" in obj.get("data", {}):
            return str(obj["data"]["default-plugins.yaml"])
    raise AssertionError("no default-plugins.yaml in llm-d-router's chart")


def llm_d_precise_config(model: str, rendered: str) -> str:
    """llm-d-router's sample precise configuration, for MODEL, its token producer asking the render server
    where RENDERED (our precise configuration) has it."""
    sample = CLUSTER_CACHE / "src" / "vendor" / "llm-d-router-v0.10.0" / "deploy" / "config" / \
        "epp-precise-prefix-cache-config.yaml"
    config = yaml.safe_load(sample.read_text())
    [ours] = [p for p in yaml.safe_load(rendered)["plugins"] if p["type"] == "token-producer"]
    for plugin in config["plugins"]:
        if plugin["type"] == "token-producer":
            plugin["parameters"] = {**plugin["parameters"], "modelName": model, "vllm": ours["parameters"]["vllm"]}
    return str(yaml.safe_dump(config))


def weighed(config: str, weights: str) -> str:
    """CONFIG (an EndpointPickerConfig) with its prefix-cache, queue and KV-cache utilization scorers weighed
    as WEIGHTS says (PREFIX/QUEUE/KV; a weight 0 leaves the scorer out)."""
    loaded = yaml.safe_load(config)
    given = dict(zip(("prefix-cache-scorer", "queue-scorer", "kv-cache-utilization-scorer"),
                     map(int, weights.split("/")), strict=True))
    [profile] = loaded["schedulingProfiles"]
    profile["plugins"] = [{**plugin, "weight": given[plugin["pluginRef"]]} if plugin["pluginRef"] in given
                          else plugin for plugin in profile["plugins"] if given.get(plugin["pluginRef"], 1)]
    return str(yaml.safe_dump(loaded))


def configured(objects: tuple[dict[str, Any], dict[str, Any]], config: str
               ) -> tuple[dict[str, Any], dict[str, Any]]:
    """OBJECTS (a picker's Deployment and ConfigMap) with CONFIG as its EndpointPickerConfig."""
    deployment, configmap = objects
    return deployment, {**configmap, "data": {"config.yaml": config}}


def picker_objects(values: Path, namespace: str, **router: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The picker's Deployment and ConfigMap for VALUES' service with ROUTER's fields, as the post-renderer
    expands them."""
    spec = yaml.safe_load(values.read_text())
    roles = copy.deepcopy(spec["roles"])
    for role in roles:
        if role["componentType"] == "router":
            role.pop("strategy", None)
            role.update(router)
    objects = expand(parse_inference_service({"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
                                              "metadata": {"name": spec["name"], "namespace": namespace},
                                              "spec": {"roles": roles}}))
    [deployment] = [o for o in objects if o["kind"] == "Deployment"]
    [configmap] = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-epp")]
    return deployment, configmap


def guidellm(address: str, model: str, tokenizer: Path, seed: int, workdir: Path) -> dict[str, Any]:
    """guidellm's report of the workload sent to ADDRESS: a scenario file of its own format, no model hub
    (a byte-level tokenizer, tests/byte_tokenizer.py)."""
    report = workdir / "report.json"
    scenario = {"spec": {
        "backend": {"kind": "openai_http", "target": f"http://{address}", "model": model,
                    "request_format": "/v1/completions", "validate_backend": False},  # a completion is the check
        "profile": {"kind": "concurrent", "streams": [CONCURRENCY]},
        "data": [{"kind": "synthetic_text", **WORKLOAD}],
        "tokenizer": {"kind": "hf_auto", "model": str(tokenizer)},
        "constraints": [{"kind": "max_requests", "count": REQUESTS}],
        "seed": {"kind": "static", "value": seed},
        "outputs": [{"kind": "json", "path": str(report)}],
    }}
    (workdir / "scenario.json").write_text(json.dumps(scenario))
    command = [str(engines.GUIDELLM / "bin" / "guidellm"), "run", "--scenario", str(workdir / "scenario.json"),
               "--disable-console-interactive"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, cwd=workdir,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    loaded: dict[str, Any] = json.loads(report.read_text())
    return loaded


def chat(seed: int) -> list[traces.Request]:
    """CHAT's requests: block 0 the shared system prompt, a conversation's turn its whole history."""
    chosen = random.Random(seed)
    requests, fresh = [], 1
    for _ in range(int(CHAT["conversations"])):
        at, blocks = chosen.uniform(0, 10), [0]
        for _ in range(int(CHAT["turns"])):
            blocks += range(fresh, fresh + int(CHAT["blocks per turn"]))
            fresh += int(CHAT["blocks per turn"])
            requests.append(traces.Request(at=at, prompt_tokens=len(blocks) * BLOCK_WORDS,
                                           output_tokens=int(CHAT["output tokens"]), blocks=tuple(blocks)))
            at += chosen.expovariate(1 / CHAT["think seconds"])
    return sorted(requests, key=lambda request: request.at)


def mooncake() -> list[traces.Request]:
    """Mooncake's conversation trace, one conversation (its first block after the shared one) in
    MOONCAKE_EVERY, its first MOONCAKE_MINUTES, MOONCAKE_COMPRESSION times faster, outputs shortened; and
    only the requests that fit the simulated engines' context (CONTEXT_TOKENS)."""
    kept = [request for request in traces.mooncake()
            if len(request.blocks) > 1 and request.blocks[1] % MOONCAKE_EVERY == 0
            and len(request.blocks) * BLOCK_WORDS + 64 + REAL <= CONTEXT_TOKENS]  # a token spare for a real BOS
    return [traces.Request(at=request.at, prompt_tokens=request.prompt_tokens, blocks=request.blocks,
                           output_tokens=max(1, min(64, request.output_tokens // MOONCAKE_OUTPUT)))
            for request in traces.replayed(kept, MOONCAKE_COMPRESSION, 1, MOONCAKE_MINUTES)]


def prompt(request: traces.Request, salt: int) -> str:
    """REQUEST's prompt: each block BLOCK_WORDS words of its own, the same for the same id; SALT makes a
    picker's prompts its own, so no picker finds another's cached. A real engine's words are of its model's
    vocabulary (a token each), drawn for the block."""
    if not REAL:
        return " ".join(f"s{salt}b{block}w{word}" for block in request.blocks for word in range(BLOCK_WORDS))
    drawn = [random.Random(f"{salt}/{block}") for block in request.blocks]
    return " ".join(f"w{words.randrange(tiny_model.NUMBERED_WORDS)}" for words in drawn for _ in range(BLOCK_WORDS))


def chosen(given: list[str], every: list[str] | tuple[str, ...], variable: str) -> list[str]:
    """The names of EVERY that GIVEN (the environment's VARIABLE, split at commas) selects, in EVERY's order:
    all of them when it selects none; a name it does not know refused."""
    unknown = set(given) - set(every)
    assert not unknown, f"{variable} names {sorted(unknown)}; the choices are {list(every)}"
    return [name for name in every if not given or name in given]


def floor(requests: list[traces.Request]) -> tuple[float, float]:
    """The p50 and p99 (ms) no router can beat on REQUESTS: each request's prefill were every block an
    earlier request sent held where it goes (a cache without limit) and it never waited — the simulated
    engines' prefill time of the blocks no earlier request had."""
    seen: set[int] = set()
    floors = []
    for request in sorted(requests, key=lambda request: request.at):
        fresh = len(set(request.blocks) - seen)
        seen.update(request.blocks)
        floors.append(PREFILL_OVERHEAD_MS + PREFILL_MS_PER_TOKEN * fresh * BLOCK_WORDS)
    return percentile(floors, 0.5), percentile(floors, 0.99)


def replayed(address: str, model: str, requests: list[traces.Request], salt: int,
             midway: Callable[[], None] | None = None) -> dict[str, float]:
    """REQUESTS sent to ADDRESS at their moments (MIDWAY called halfway through): the mean, p50 and p99 TTFT
    (ms) of those answered, and requests lost. (An open loop's throughput is its offered load, whoever
    routes: what routing changes is how long each request waits for its prefill.)"""
    if midway is not None:
        threading.Timer(requests[-1].at / 2, midway).start()
    outcomes = replay(requests, {"": lambda number, request: first_token(
        address, model, prompt(request, salt), request.output_tokens)})[""]
    answered = [1000 * ttft for ttft in outcomes if ttft is not None]
    return {"TTFT mean ms": sum(answered) / len(answered) if answered else float("nan"),
            "TTFT p50 ms": percentile(answered, 0.5), "TTFT p99 ms": percentile(answered, 0.99),
            "lost": len(outcomes) - len(answered)}


def cache_counts(addresses: list[str]) -> tuple[float, float, float, float]:
    """The engines' counts so far, summed over ADDRESSES (host:port): prefix cache hits and queries (in
    tokens), prompt tokens and requests — vLLM's counters, which the simulator keeps too."""
    scraped = [metrics(host, int(port)) for host, port in (address.rsplit(":", 1) for address in addresses)]
    return tuple(sum(total(samples, name) for samples in scraped)  # type: ignore[return-value]
                 for name in ("vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total",
                              "vllm:prompt_tokens_total", "vllm:request_success_total"))


def figures(report: dict[str, Any]) -> dict[str, float]:
    [benchmark] = report["benchmarks"]
    metrics = benchmark["metrics"]

    def successful(name: str) -> dict[str, Any]:
        found: dict[str, Any] = metrics[name]["successful"]
        return found
    return {
        "TTFT p50 ms": successful("time_to_first_token_ms")["percentiles"]["p50"],
        "TTFT p99 ms": successful("time_to_first_token_ms")["percentiles"]["p99"],
        "ITL p50 ms": successful("inter_token_latency_ms")["percentiles"]["p50"],
        "output tok/s": successful("output_tokens_per_second")["mean"],
        "requests/s": successful("requests_per_second")["mean"],
    }


class Restartable:
    """A picker (pickers.running's arguments) that can be stopped and started again on the same ports."""

    def __init__(self, *arguments: Any) -> None:
        self.arguments = arguments
        self.stack = contextlib.ExitStack()

    def start(self) -> Picker:
        picker: Picker = self.stack.enter_context(running(*self.arguments))
        serving(picker)
        return picker

    def restart(self) -> None:
        self.stack.close()
        self.start()


def table(title: str, results: dict[str, dict[str, float]]) -> None:
    names = list(results)
    keys = list(results[names[0]])
    print(f"\n{title}")
    print(f"{'':28}" + "".join(f"{key:>14}" for key in keys))
    for name in names:
        print(f"{name:28}" + "".join(f"{results[name][key]:14.1f}" for key in keys))
    for other in names[1:]:
        ratios = {key: results[names[0]][key] / results[other][key] for key in keys if results[other][key]}
        print(f"{'ours / ' + other:28}" + "".join(f"{ratios.get(key, float('nan')):14.2f}" for key in keys))


def test_serving_workloads(cluster: Cluster, helm4: Helm, serving_kubelet: ServingKubelet, tmp_path: Path) -> None:
    engines.built(engines.GUIDELLM)
    tokenizer = tmp_path / "tokenizer"
    subprocess.run([str(engines.GUIDELLM / "bin" / "python"), str(ROOT / "tests" / "byte_tokenizer.py"),
                    str(tokenizer)], check=True, capture_output=True, timeout=300)
    # The engines publish their KV-cache events (precise-prefix-cache's); the other pickers ignore them.
    llm_d = {"endpointPicker": {"generation": "llm-d-router"}}
    values = serving_values(VALUES / "story1-monolithic-qwen3-8b.yaml", tmp_path, strategy="precise-prefix-cache",
                            **llm_d)
    spec = yaml.safe_load(values.read_text())
    spec["roles"][0]["replicas"] = PODS
    container = spec["roles"][0]["template"]["spec"]["containers"][0]
    container["image"] = f"vllm/vllm-openai:v{engines.VERSIONS['VLLM_VERSION']}"
    namespace = "bench-serving"
    if REAL:
        container["args"] = ["--model", str(engines.tiny_model(tmp_path / "model")), *REAL_ENGINE]
        container["env"] = [{"name": "VLLM_CPU_KVCACHE_SPACE", "value": "1"}]  # GiB; the blocks are overridden
        serving_kubelet.real_engines.add(namespace)
    else:
        serving_kubelet.engine_options[spec["roles"][0]["name"]] = ENGINE
    values.write_text(yaml.safe_dump(spec))
    pickers: dict[str, tuple[dict[str, Any], dict[str, Any]] | None] = {
        "fusioninfer precise": None,
        "fusioninfer default": picker_objects(values, namespace, endpointPicker={}),
        "random": picker_objects(values, namespace, endpointPickerConfig=RANDOM_CONFIG),
        "gie-v1.0": picker_objects(values, namespace, endpointPicker={"generation": "gie-v1.0"}),
        "gie-v1.5": picker_objects(values, namespace, endpointPicker={"generation": "gie-v1.5"}),
        "llm-d inference scheduling": picker_objects(values, namespace, endpointPickerConfig=llm_d_config(
            helm4, tmp_path), **llm_d)}
    # guidellm's text, tokenized by bytes, means nothing to the real engine's vocabulary: the replays only.
    workloads = chosen(WORKLOADS, ("shared prefixes", "chat", "chat restarted", "Mooncake trace")[REAL:],
                       "BENCH_WORKLOADS")
    results: dict[str, dict[str, dict[str, float]]] = {workload: {} for workload in workloads}
    trace = mooncake()
    with served(cluster, helm4, serving_kubelet, values, namespace, tmp_path) as service:
        ours = (service.manifest[f"Deployment/{spec['name']}-router-epp"],
                service.manifest[f"ConfigMap/{spec['name']}-router-epp"])
        theirs = llm_d_precise_config(service.model(), ours[1]["data"]["config.yaml"])
        pickers["llm-d precise"] = configured(ours, theirs)
        unspeculative = yaml.safe_load(ours[1]["data"]["config.yaml"])
        for plugin in unspeculative["plugins"]:
            plugin.get("parameters", {}).pop("speculativeIndexing", None)
        pickers["precise unspeculative"] = configured(ours, yaml.safe_dump(unspeculative))
        for weights in WEIGHTS:
            pickers[f"precise {weights}"] = configured(ours, weighed(ours[1]["data"]["config.yaml"], weights))
        pickers = {name: pickers[name] for name in chosen(PICKERS, list(pickers), "BENCH_PICKERS")}
        engines_of = [f"{pod.address}:{engine_port(pod)}" for pod in service.pods(spec["roles"][0]["name"])]
        model = service.model()
        for seed, (name, objects) in enumerate(pickers.items(), start=1):
            deployment, configmap = objects or ours
            workdir = tmp_path / re.sub(r"[^a-z0-9]+", "-", name)
            workdir.mkdir()
            # Beside the release's own picker, on ports of its own: the stand-in asks this one.
            picker = Restartable(deployment, configmap, namespace, cluster.kubeconfig, workdir, 100, REAL)
            with picker.stack, gateway(picker.start().grpc, workdir) as address:
                for workload in workloads:
                    before = cache_counts(engines_of)
                    if workload == "shared prefixes":
                        found = figures(guidellm(address, model, tokenizer, seed, workdir))
                    elif workload == "Mooncake trace":
                        found = replayed(address, model, trace, seed)
                    else:  # the restarted run's prompts are its own, as every picker's are
                        restarted = workload == "chat restarted"
                        found = replayed(address, model, chat(seed), seed + 100 * restarted,
                                         midway=picker.restart if restarted else None)
                    after = cache_counts(engines_of)
                    hits, queries, prompted, requests = (now - then for now, then in zip(after, before, strict=True))
                    found["cache hit %"] = 100 * hits / max(1.0, queries)
                    results[workload][name] = found
                    if workload == "shared prefixes":
                        prompt_tokens = prompted / max(1.0, requests)
    cache = PODS * CACHE_BLOCKS

    def against_cache(blocks: float) -> str:
        return (f"{blocks:.0f} blocks, {blocks / CACHE_BLOCKS:.2f}x one pod's KV cache "
                f"({blocks / cache:.2f}x all {PODS})")
    def floored(requests: list[traces.Request]) -> str:
        if REAL:  # the floor is the simulator's cost model
            return ""
        p50, p99 = floor(requests)
        return f"; TTFT no router beats (every earlier block cached, no wait): p50 {p50:.0f} ms, p99 {p99:.0f} ms"
    chat_floor = floored(chat(0))
    titles = {"chat": f"chat: {CHAT}; working set "
                      f"{against_cache(len({block for request in chat(0) for block in request.blocks}))}{chat_floor}",
              "chat restarted": f"chat, the picker restarted halfway{chat_floor}"}
    if "shared prefixes" in workloads:
        # The shared prefixes as the engines count them (their share of a request's prompt), against the cache.
        prefix = prompt_tokens * WORKLOAD["prefix_tokens"] / (WORKLOAD["prefix_tokens"] + WORKLOAD["prompt_tokens"])
        titles["shared prefixes"] = (f"shared prefixes: {PODS} simulated pods, {CONCURRENCY} concurrent, {REQUESTS} "
                                     f"requests, {WORKLOAD}; the prefixes' working set "
                                     f"{against_cache(WORKLOAD['prefix_count'] * prefix / BLOCK_TOKENS)}")
    titles["Mooncake trace"] = (
        f"Mooncake conversation trace: {len(trace)} requests (one conversation in {MOONCAKE_EVERY}, its first "
        f"{MOONCAKE_MINUTES:g} minutes, those that fit the engines' {CONTEXT_TOKENS}-token context) in "
        f"{trace[-1].at:.0f} s; {against_cache(len({block for request in trace for block in request.blocks}))}"
        f"{floored(trace)}")
    for workload in workloads:
        table(titles[workload], results[workload])
