"""`make bench-elastic`: a bursty workload (quiet, burst, quiet) through the gateway stand-in and the real
llm-d-router pickers to simulated serving pods whose engine takes a while to start — figures, not pass/fail.

Three installations of story 1 (a monolithic service), measured at once under the same open-loop workload,
each in a namespace of its own:

- **fusioninfer default autoscaling**: layout role, `autoscaling: {maxReplicas, prometheus}` and nothing
  else — the default signals (the pickers' queue, 1 per replica, and requests in flight, 8), KEDA's
  ScaledObject and the picker's flow control as rendered, on a Prometheus configured from the rendered
  PodMonitors;
- **fixed, sized for the burst**: the replicas the burst needs at 8 requests per replica;
- **fixed, sized for the mean**: the replicas the mean load needs.

Each engine (llm-d's vLLM simulator) runs 8 requests at once, answers each in about a second, and starts
COLD_START seconds after its pod does (its startup probe's initialDelaySeconds, which the suite's kubelet
honours). For each: replica-seconds (serving pods that exist, ready or not, summed each second), TTFT p50
and p99 (the first streamed chunk), requests lost (anything but a 200), and the ratios to the burst-sized
service, taken within the run.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import math
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

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

COLD_START = int(os.environ.get("BENCH_COLD_START", "20"))
"""Seconds an engine takes to start (its startup probe's initial delay)."""
PHASES = [(int(os.environ.get("BENCH_QUIET", "120")), float(os.environ.get("BENCH_QUIET_RATE", "1"))),
          (int(os.environ.get("BENCH_BURST", "120")), float(os.environ.get("BENCH_BURST_RATE", "24"))),
          (int(os.environ.get("BENCH_QUIET_AFTER", "360")), float(os.environ.get("BENCH_QUIET_RATE", "1")))]
"""(seconds, requests per second): quiet, burst, quiet."""
PER_REPLICA = 8
"""Requests an engine runs at once (--max-num-seqs), the default picker-running target."""
ENGINE = [f"--max-num-seqs={PER_REPLICA}", "--inter-token-latency=100ms", "--time-to-first-token=100ms"]
TOKENS = 9
"""Output tokens per request: about a second each."""
MODEL = "Qwen/Qwen3-8B"


def sized(rate: float) -> int:
    """Replicas for RATE requests per second of about a second each."""
    return max(1, math.ceil(rate / PER_REPLICA))


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
        spec["monitoring"] = {"podMonitor": {"enabled": True}}
    into = tmp_path / f"{name}.yaml"
    into.write_text(yaml.safe_dump(spec))
    return into


def first_token(gateway_address: str, prompt: str) -> float | None:
    """Seconds to the first streamed chunk of a completion through the gateway; None if it failed."""
    host, _, port = gateway_address.rpartition(":")
    started = time.monotonic()
    try:
        connection = http.client.HTTPConnection(host, int(port), timeout=600)
        connection.request("POST", "/v1/completions", json.dumps({
            "model": MODEL, "prompt": prompt, "max_tokens": TOKENS, "stream": True}),
            {"Content-Type": "application/json"})
        answer = connection.getresponse()
        if answer.status != 200:
            return None
        first = None
        for line in answer:
            if first is None and line.startswith(b"data:"):
                first = time.monotonic() - started
        connection.close()
        return first
    except OSError:
        return None


class Meter(threading.Thread):
    """The serving pods that exist in a namespace (ready or not: each holds its GPUs), summed each second."""

    def __init__(self, cluster: Cluster, namespace: str) -> None:
        super().__init__(daemon=True)
        self.cluster, self.namespace = cluster, namespace
        self.replica_seconds = 0.0
        self.done = threading.Event()

    def run(self) -> None:
        last = time.monotonic()
        while not self.done.wait(1):
            pods = [pod for pod in self.cluster.pods(self.namespace)
                    if (pod.metadata.labels or {}).get("fusioninfer.io/component-type") == "worker"]
            now = time.monotonic()
            self.replica_seconds += len(pods) * (now - last)
            last = now


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


@pytest.mark.cluster
def test_bench_elastic(keda: Cluster, helm4: Helm, serving_kubelet: ServingKubelet, tmp_path: Path) -> None:
    mean = sum(seconds * rate for seconds, rate in PHASES) / sum(seconds for seconds, _ in PHASES)
    burst = max(rate for _, rate in PHASES)
    port = free_port()
    variants = {"fusioninfer default autoscaling": (f"http://127.0.0.1:{port}", sized(burst) + 1),
                "fixed, sized for the burst": (None, sized(burst)),
                "fixed, sized for the mean": (None, sized(mean))}
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
            meters[name] = Meter(keda, namespace)
        for name, address in gateways.items():  # every service answers before the clock starts
            deadline = time.monotonic() + 300
            while first_token(address, "warm up") is None:
                assert time.monotonic() < deadline, f"{name} never answered"
                time.sleep(1)
        outcomes: dict[str, list[float | None]] = {name: [] for name in variants}
        with ThreadPoolExecutor(256) as pool:
            for meter in meters.values():
                meter.start()
            sent = 0
            for seconds, rate in PHASES:
                start = time.monotonic()
                count = int(seconds * rate)
                for number in range(count):
                    time.sleep(max(0.0, start + number / rate - time.monotonic()))
                    for name, address in gateways.items():
                        pool.submit(lambda n=name, a=address, s=sent: outcomes[n].append(
                            first_token(a, f"request {s}")))
                    sent += 1
                time.sleep(max(0.0, start + seconds - time.monotonic()))
        for name, meter in meters.items():
            meter.done.set()
            meter.join()
            answered = [ttft for ttft in outcomes[name] if ttft is not None]
            results[name] = {"replica-seconds": meter.replica_seconds, "p50": percentile(answered, 0.5),
                             "p99": percentile(answered, 0.99), "lost": len(outcomes[name]) - len(answered),
                             "requests": len(outcomes[name])}
    serving_kubelet.engine_options.pop("inference", None)
    baseline = results["fixed, sized for the burst"]
    print(f"\nbench-elastic: phases {PHASES} (seconds, requests/s), engines start in {COLD_START}s, "
          f"{PER_REPLICA} requests each at once")
    print(f"{'service':34} {'replicas':>8} {'replica-s':>10} {'vs burst':>8} {'TTFT p50':>9} {'p99':>8} "
          f"{'p99 vs burst':>12} {'lost':>5}")
    for name, figures in results.items():
        print(f"{name:34} {variants[name][1]:>8} {figures['replica-seconds']:>10.0f} "
              f"{figures['replica-seconds'] / baseline['replica-seconds']:>8.2f} {figures['p50']:>8.2f}s "
              f"{figures['p99']:>7.2f}s {figures['p99'] / baseline['p99']:>12.2f} "
              f"{figures['lost']:>3}/{figures['requests']}")
