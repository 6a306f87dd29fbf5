"""`make bench-elastic`: Azure's 2023 code-completion trace (``../shared/traces``), time-compressed, through
the gateway stand-in and the real llm-d-router pickers to simulated serving pods whose engine takes a while
to start — figures, not pass/fail.

The trace is an hour of a production service's requests: idle minutes, and minutes with four times the
mean. It is replayed COMPRESSION times faster, one request in EVERY (the same shape at a fraction of the
rate two cores can carry), each asking for the trace's output tokens (at most MAX_TOKENS). Its prompt
lengths are not replayed: the simulated engines' time to first token does not depend on them.

Three installations of story 1 (a monolithic service), each in a namespace of its own, get the same
requests at the same moments:

- **fusioninfer default autoscaling**: layout role, ``autoscaling: {maxReplicas, prometheus}`` and nothing
  else — the default signals, KEDA's ScaledObject and the picker's flow control as rendered, on a
  Prometheus configured from the rendered PodMonitors;
- **fixed, sized for the burst**: the replicas the trace's busiest minute needs, at PER_REPLICA requests
  each;
- **fixed, sized for the mean**: the replicas the mean load needs.

Each engine (llm-d's vLLM simulator) runs PER_REPLICA requests at once, 100 ms to the first token and 100 ms
a token after it, and starts COLD_START seconds after its pod does (its startup probe's initialDelaySeconds,
which the suite's kubelet honours). For each: replica-seconds (serving pods that exist, ready or not, summed
each second over the trace and a minute of it after), TTFT SLO attainment (the share of all requests whose
first streamed chunk came within SLO seconds; a lost request misses it), TTFT p50 and p99 of those answered,
requests lost (anything but a 200), and the ratios to the burst-sized service, taken within the run; and the
autoscaled service's replicas through the trace, minute by minute.
"""

from __future__ import annotations

import contextlib
import heapq
import math
import os
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

import pytest
import yaml

from fusion_helm.expand.autoscaling import POLLING_SECONDS
from tests import traces
from tests.builders import SCRAPED_FROM_MONITORING
from tests.controlplane import components
from tests.controlplane.clients import gateway
from tests.controlplane.cluster import Cluster, release
from tests.controlplane.processes import free_port
from tests.controlplane.scenarios import HEALTH, serving_values
from tests.controlplane.serving import SERVING, ServingKubelet
from tests.controlplane.test_cluster_elastic import pod_monitors
from tests.controlplane.test_cluster_picker_availability import PICKER
from tests.controlplane.watch import PickerEndpoints
from tests.helm import VALUES, Helm
from tests.replay import first_token, percentile, replay

COMPRESSION = float(os.environ.get("BENCH_COMPRESSION", "6"))
"""How many times faster than recorded the trace is replayed: its minute lasts 10 s."""
EVERY = int(os.environ.get("BENCH_EVERY", "3"))
"""One request of the trace in EVERY is sent."""
MINUTES = float(os.environ["BENCH_MINUTES"]) if "BENCH_MINUTES" in os.environ else None
"""The trace's first MINUTES only (all of it: unset)."""
COLD_START = int(os.environ.get("BENCH_COLD_START", "20"))
"""Seconds an engine takes to start (its startup probe's initial delay): two minutes of the trace's time."""
SLO = float(os.environ.get("BENCH_SLO", "1"))
"""Seconds to the first token a request is served within: ten times an idle engine's."""
PER_REPLICA = 8
"""Requests an engine runs at once (--max-num-seqs), the default picker-running target."""
FIRST_TOKEN, PER_TOKEN = 0.1, 0.1
ENGINE = [f"--max-num-seqs={PER_REPLICA}", f"--time-to-first-token={FIRST_TOKEN * 1000:.0f}ms",
          f"--inter-token-latency={PER_TOKEN * 1000:.0f}ms", "--max-model-len=1024"]
MAX_TOKENS = 256
"""Output tokens a request asks for at most (the trace's 99th percentile; its longest is 1,899)."""
MODEL = "Qwen/Qwen3-8B"


def output_tokens(request: traces.Request) -> int:
    return max(1, min(request.output_tokens, MAX_TOKENS))


def busy_seconds(request: traces.Request) -> float:
    """How long REQUEST holds one of an engine's slots."""
    return FIRST_TOKEN + output_tokens(request) * PER_TOKEN


def sizes(requests: list[traces.Request]) -> tuple[int, int]:
    """Replicas for the busiest minute of the trace, and for its mean: the slots its requests hold."""
    minute = 60 / COMPRESSION
    held: dict[int, float] = {}
    for request in requests:
        held[int(request.at // minute)] = held.get(int(request.at // minute), 0.0) + busy_seconds(request)
    duration = max(request.at for request in requests) + minute
    return (math.ceil(max(held.values()) / minute / PER_REPLICA),
            math.ceil(sum(held.values()) / duration / PER_REPLICA))


STEP = 0.1
"""The model's clock: seconds a moment lasts."""


def moments(requests: list[traces.Request]) -> int:
    """The model's moments over the metered span: the trace's, and a minute of it after its last request."""
    return int((requests[-1].at + 60 / COMPRESSION) / STEP) + 1


def queued(requests: list[traces.Request], replicas: list[int]) -> tuple[float, float]:
    """REQUESTS served first come first served by REPLICAS[i] replicas from i times STEP seconds on: the
    replica-seconds, and the share of requests whose first token came within SLO."""
    waiting: deque[traces.Request] = deque()
    running: list[float] = []
    sent = attained = 0
    for index, count in enumerate(replicas):
        now = index * STEP
        while sent < len(requests) and requests[sent].at <= now:
            waiting.append(requests[sent])
            sent += 1
        while running and running[0] <= now:
            heapq.heappop(running)
        while waiting and len(running) < count * PER_REPLICA:
            request = waiting.popleft()
            attained += now - request.at + FIRST_TOKEN <= SLO
            heapq.heappush(running, now + busy_seconds(request))
    return sum(replicas) * STEP, attained / len(requests)


def reactive_bound(requests: list[traces.Request], most: int, late: float, hold: float) -> tuple[float, float]:
    """What an autoscaler that knew the replicas the requests in flight need at every moment (as if every one
    were served at once), and had them LATE seconds after, each kept HOLD seconds, would have achieved:
    replica-seconds and SLO attainment (queued), with at most MOST replicas. No reactive autoscaler does
    better at the same replica-seconds; a later one does worse."""
    span = moments(requests)
    in_flight = [0] * span
    for request in requests:
        for index in range(int(request.at / STEP), min(span, int((request.at + busy_seconds(request)) / STEP) + 1)):
            in_flight[index] += 1
    needed = [max(1, math.ceil(count / PER_REPLICA)) for count in in_flight]
    late_steps, hold_steps = round(late / STEP), round(hold / STEP)
    replicas = [min(most, max(needed[max(0, index - late_steps - hold_steps):max(1, index - late_steps + 1)]))
                for index in range(span)]
    return queued(requests, replicas)


def print_bounds(requests: list[traces.Request], burst: int) -> None:
    """reactive_bound as late as the default autoscaling is (a cold start and a poll), and sooner, at a few
    holds, against the burst-sized service (modelled the same way)."""
    fixed, _ = queued(requests, [burst] * moments(requests))
    print(f"an autoscaler knowing the exact need (at most {burst + 2} replicas, each kept HOLD s), modelled: "
          f"replica-seconds vs burst-sized / SLO met")
    for late in (COLD_START + POLLING_SECONDS, POLLING_SECONDS, 2, 1):
        bounds = {hold: reactive_bound(requests, burst + 2, late, hold) for hold in (5, 10, 20, 30, 60)}
        print(f"  {late:>2} s late " + " ".join(f"  HOLD {hold:>2}: {seconds / fixed:.2f} / {share:.1%}"
                                               for hold, (seconds, share) in bounds.items()))


def values(tmp_path: Path, name: str, prometheus: str | None, replicas: int) -> Path:
    path = serving_values(VALUES / "story1-monolithic-qwen3-8b.yaml", tmp_path, endpointPicker={
        "generation": "llm-d-router", "podAnnotations": SERVING, "replicas": 1,
        "flags": {"metrics-endpoint-auth": "false"}})
    spec = yaml.safe_load(path.read_text())
    worker = spec["roles"][0]
    engine = worker["template"]["spec"]["containers"][0]
    engine["startupProbe"] = {**HEALTH, "initialDelaySeconds": COLD_START, "periodSeconds": 1, "failureThreshold": 60}
    engine["readinessProbe"] = {**HEALTH, "periodSeconds": 1}
    spec["layout"] = "role"
    if prometheus is None:
        worker["replicas"] = replicas
    else:
        del worker["replicas"]
        worker["autoscaling"] = {"maxReplicas": replicas, "prometheus": {"serverAddress": prometheus}}
        spec.update(monitoring={"podMonitor": {"enabled": True}}, **SCRAPED_FROM_MONITORING)
    into = tmp_path / f"{name}.yaml"
    into.write_text(yaml.safe_dump(spec))
    return into


class Meter(threading.Thread):
    """The serving pods that exist in a namespace (ready or not: each holds its GPUs), counted each second
    for SECONDS."""

    def __init__(self, cluster: Cluster, namespace: str, seconds: float) -> None:
        super().__init__(daemon=True)
        self.cluster, self.namespace, self.seconds = cluster, namespace, seconds
        self.replica_seconds = 0.0
        self.counts: list[tuple[float, int]] = []
        """(seconds since the meter started, pods)."""

    def run(self) -> None:
        start = last = time.monotonic()
        while last < start + self.seconds:
            time.sleep(1)
            pods = [pod for pod in self.cluster.pods(self.namespace)
                    if (pod.metadata.labels or {}).get("fusioninfer.io/component-type") == "worker"]
            now = time.monotonic()
            self.replica_seconds += len(pods) * (now - last)
            self.counts.append((now - start, len(pods)))
            last = now


def by_minute(requests: list[traces.Request], counts: list[tuple[float, int]]) -> tuple[list[int], list[int]]:
    """For each minute of the trace: the requests it sent, and the most replicas that existed in it."""
    minute = 60 / COMPRESSION
    minutes = int(max(request.at for request in requests) // minute) + 1
    sent, replicas = [0] * minutes, [0] * minutes
    for request in requests:
        sent[int(request.at // minute)] += 1
    for at, count in counts:
        if int(at // minute) < minutes:
            replicas[int(at // minute)] = max(replicas[int(at // minute)], count)
    return sent, replicas


@pytest.mark.cluster
def test_bench_elastic(keda: Cluster, helm4: Helm, serving_kubelet: ServingKubelet, tmp_path: Path) -> None:
    requests = traces.replayed(traces.azure(), COMPRESSION, EVERY, MINUTES)
    burst, mean = sizes(requests)
    port = free_port()
    variants = {"fusioninfer default autoscaling": (f"http://127.0.0.1:{port}", burst + 2),
                "fixed, sized for the burst": (None, burst),
                "fixed, sized for the mean": (None, mean)}
    serving_kubelet.engine_options["inference"] = ENGINE
    results: dict[str, dict[str, Any]] = {}
    with pod_monitors(keda), contextlib.ExitStack() as stack:
        gateways, meters = {}, {}
        for index, (name, (prometheus, replicas)) in enumerate(variants.items()):
            namespace = f"bench-elastic-{index}"
            installed = stack.enter_context(release(keda, helm4, "bench", namespace))
            installed.install(values(tmp_path, f"variant-{index}", prometheus, replicas))
            if prometheus is not None:
                monitors = [o for o in installed.manifest() if o["kind"] == "PodMonitor"]
                components.prometheus(keda.control_plane, namespace, components.pod_monitor_scrapes(
                    keda.control_plane, monitors), port=port)
            workdir = tmp_path / f"variant-{index}"
            workdir.mkdir()
            endpoints = stack.enter_context(PickerEndpoints(keda, namespace, PICKER, workdir / "pickers"))
            gateways[name] = stack.enter_context(gateway(f"@{endpoints.path}", workdir))
            # Every service is metered over the same span: the trace's, and a minute of it after its last.
            meters[name] = Meter(keda, namespace, requests[-1].at + 60 / COMPRESSION)
        for name, address in gateways.items():  # every service answers before the clock starts
            deadline = time.monotonic() + 300
            while first_token(address, MODEL, "warm up", 1) is None:
                assert time.monotonic() < deadline, f"{name} never answered"
                time.sleep(1)
        for meter in meters.values():
            meter.start()
        outcomes = replay(requests, {
            name: lambda number, request, address=address: first_token(
                address, MODEL, f"request {number}", output_tokens(request))
            for name, address in gateways.items()})
        for name, meter in meters.items():
            meter.join()
            answered = [ttft for ttft in outcomes[name] if ttft is not None]
            results[name] = {"replica-seconds": meter.replica_seconds, "p50": percentile(answered, 0.5),
                             "p99": percentile(answered, 0.99), "lost": len(outcomes[name]) - len(answered),
                             "requests": len(outcomes[name]),
                             "attained": sum(ttft <= SLO for ttft in answered) / len(outcomes[name])}
    serving_kubelet.engine_options.pop("inference", None)
    baseline = results["fixed, sized for the burst"]
    print(f"\nbench-elastic: Azure LLM inference trace 2023 (code), {len(requests)} requests (one in {EVERY}"
          f"{'' if MINUTES is None else f' of its first {MINUTES:g} minutes'}) replayed {COMPRESSION:g} times faster; "
          f"engines start in {COLD_START}s, {PER_REPLICA} requests each at once; SLO: TTFT ≤ {SLO:g}s")
    print(f"{'service':34} {'replicas':>8} {'replica-s':>10} {'vs burst':>8} {'SLO met':>8} {'TTFT p50':>9} "
          f"{'p99':>8} {'lost':>5}")
    for name, figures in results.items():
        print(f"{name:34} {variants[name][1]:>8} {figures['replica-seconds']:>10.0f} "
              f"{figures['replica-seconds'] / baseline['replica-seconds']:>8.2f} {figures['attained']:>7.1%} "
              f"{figures['p50']:>8.2f}s {figures['p99']:>7.2f}s {figures['lost']:>3}/{figures['requests']}")
    sent, replicas = by_minute(requests, meters["fusioninfer default autoscaling"].counts)
    print_bounds(requests, burst)
    print("the trace's minutes: requests sent / autoscaled replicas")
    print(" ".join(f"{count}/{replica}" for count, replica in zip(sent, replicas, strict=True)))
