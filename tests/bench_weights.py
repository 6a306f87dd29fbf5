"""`make bench-weights`: a new replica's time to Ready with its weights on the model cache, against one that
fetches them from the hub as it starts (what a service without spec.modelCache does).

The real vLLM CPU build serves a random-weight Llama of about BENCH_WEIGHTS_GB (default 4) GB of bfloat16
weights (as most hub models' are) from a hub on loopback (olah, tests/model_sources.py). Each replica runs
what the post-renderer writes for it — its init container, command line and env:

- **fetches at start**: ``--model org/big --revision COMMIT`` with the hub's HF_ENDPOINT; vLLM downloads into
  an empty HF_HOME, as every new pod of such a service does;
- **from the cache**: the fetch Job's program has filled the cache (timed apart: once per service and
  revision, not per replica); the replica's wait-for-weights finds the folder, and vLLM loads it from the
  volume with the hub off.

Time to Ready runs from the replica's start to vLLM's /health answering. The hub moves about 0.04 GB/s (olah
reads each file whole and streams it in 4 KiB pieces from one Python process): the gap between the two
replicas is the weights' size over that rate, and grows with the size.

Beside it, on the same hub in the same run, each client fetches the same revision into an empty folder:
the fetch Job's program (its WORKERS files at once, each verified) and one file at a time, against the hub's
own parallel download (``huggingface_hub.snapshot_download``, 8 files at once, which verifies nothing) and
its command line (``hf download``). The weights come in shards of BENCH_WEIGHTS_SHARD (default 500MB), as a
hub model's do.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests import engines, model_sources
from tests.builders import render, role, service
from tests.controlplane import kubelet
from tests.engines import SOURCES, built

WEIGHTS_GB = float(os.environ.get("BENCH_WEIGHTS_GB", "4"))
SHARD = os.environ.get("BENCH_WEIGHTS_SHARD", "500MB")
HIDDEN = 1024
LAYER_BYTES = (4 * HIDDEN * HIDDEN + 3 * HIDDEN * 4 * HIDDEN) * 2
"""A layer's bfloat16 weights: attention's four projections and the MLP's three, 4 times as wide."""
NAME = "org/big"
PORT = 8000


def replica(model: dict[str, Any], cache: dict[str, Any] | None) -> dict[str, Any]:
    """The pod spec the post-renderer writes for a replica of a service serving MODEL (with CACHE)."""
    engine = role("chat", "worker", image=f"vllm/vllm-openai:v{engines.VERSIONS['VLLM_VERSION']}",
                  args=["--model", NAME, "--max-model-len", "256", "--enforce-eager"],
                  env=[{"name": "VLLM_CPU_KVCACHE_SPACE", "value": "1"}])
    objects = render(service(engine, model=model, **({"modelCache": cache} if cache else {})))
    spec: dict[str, Any] = objects["LeaderWorkerSet/svc-chat-0"]["spec"]["leaderWorkerTemplate"]["workerTemplate"][
        "spec"]
    return spec


def time_to_ready(spec: dict[str, Any], folders: dict[str, Path], workdir: Path) -> tuple[float, float, int]:
    """SPEC's pod started as a kubelet starts it: seconds to its init containers' end and to vLLM's /health,
    and the engine's peak RSS (bytes, over its processes)."""
    workdir.mkdir(parents=True)
    started = time.monotonic()
    for init in spec.get("initContainers") or []:
        subprocess.run(kubelet.in_mounts(init, folders, workdir / "init.termination", init["command"]),
                       check=True, capture_output=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    initialized = time.monotonic()
    container = spec["containers"][0]
    env = {entry["name"]: entry["value"] for entry in container.get("env") or []}
    # This machine's address, which vLLM would otherwise look up by routing towards a public one.
    env |= {**engines.REAL_ENGINE_ENV, "HOME": str(workdir), "PATH": f"{engines.VLLM / 'bin'}:/usr/bin:/bin",
            "VLLM_HOST_IP": "127.0.0.1"}
    argv = kubelet.in_mounts(container, folders, workdir / "termination",
                             [str(engines.VLLM / "bin" / "vllm"), "serve", *container["args"]])
    with (workdir / "vllm.log").open("wb") as log:
        process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 1200
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            assert process.poll() is None and time.monotonic() < deadline, (workdir / "vllm.log").read_text()[-3000:]
            time.sleep(0.2)
        ready = time.monotonic()
        return initialized - started, ready - started, _peak_rss(process.pid)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        kubelet.remove_mount_points()


SNAPSHOT = "snapshot_download (8 at once, unverified)"


def client_seconds(hub: model_sources.Hub, commit: str, workdir: Path) -> dict[str, float]:
    """Seconds each client takes to fetch NAME at COMMIT from HUB into a folder of its own (removed after)."""
    python = str(built(SOURCES) / "bin" / "python")
    # The hub on loopback and nothing else: hf's command line would otherwise ask PyPI for a newer release.
    env = {"PATH": os.environ["PATH"], "HF_ENDPOINT": hub.endpoint, "HF_HUB_DISABLE_XET": "1",
           "HF_HUB_DISABLE_UPDATE_CHECK": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
    clients: dict[str, Any] = {
        "fetch Job's program (8 at once, verified)": lambda folder: model_sources.fetch(
            f"hf://{NAME}", commit, folder, "model", {**env, "HOME": str(folder)}, timeout=1800),
        "fetch Job's program, one at a time, verified": lambda folder: model_sources.fetch(
            f"hf://{NAME}", commit, folder, "model", {**env, "HOME": str(folder)}, "--workers", "1", timeout=1800),
        SNAPSHOT: lambda folder: subprocess.run(
            [python, "-c", "import sys, huggingface_hub; huggingface_hub.snapshot_download(sys.argv[1], "
             "revision=sys.argv[2], local_dir=sys.argv[3], max_workers=8)", NAME, commit, str(folder / "model")],
            capture_output=True, text=True, timeout=1800, env={**env, "HOME": str(folder)}),
        "hf download (8 at once, unverified)": lambda folder: subprocess.run(
            [str(built(engines.VLLM) / "bin" / "hf"), "download", NAME, "--revision", commit, "--local-dir",
             str(folder / "model")], capture_output=True, text=True, timeout=1800, env={**env, "HOME": str(folder)}),
    }
    seconds = {}
    for index, (client, run) in enumerate(clients.items()):
        folder = workdir / str(index)
        folder.mkdir(parents=True)
        began = time.monotonic()
        done = run(folder)
        seconds[client] = time.monotonic() - began
        assert done.returncode == 0, (client, done.stderr[-2000:])
        subprocess.run(["rm", "-rf", str(folder)], check=True)
    return seconds


def _peak_rss(session: int) -> int:
    """The peak RSS (VmHWM) summed over the processes of SESSION."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
            if int(fields[3]) == session:  # the session id
                status = (stat.parent / "status").read_text()
                total += int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) * 1024
        except (OSError, StopIteration, ValueError):
            continue
    return total


def test_time_to_ready_from_the_cache_against_fetching_at_start(tmp_path: Path) -> None:
    layers = max(1, round(WEIGHTS_GB * 1e9 / LAYER_BYTES))
    made = engines.tiny_model(tmp_path / "big", layers=layers, hidden=HIDDEN, shard=SHARD, dtype="bfloat16")
    weights = sum(path.stat().st_size for path in made.glob("*.safetensors"))
    shards = len(list(made.glob("*.safetensors")))
    with model_sources.hub(tmp_path / "hub") as hub:
        commit = hub.repository_moved(NAME, made)
        model = {"source": f"hf://{NAME}", "revision": commit, "endpoint": hub.endpoint}

        fetching = replica(model, None)
        _, fetching_ready, fetching_rss = time_to_ready(fetching, {}, tmp_path / "fetches")
        # Its download (in its HOME's Hugging Face cache) is the disk the cache needs next; its log stays.
        subprocess.run(["rm", "-rf", str(tmp_path / "fetches" / ".cache")], check=True)

        cache = tmp_path / "cache"
        began = time.monotonic()
        fetched = model_sources.fetch(f"hf://{NAME}", commit, cache, f"hf/{NAME}/{commit}",
                                      {"HF_ENDPOINT": hub.endpoint}, timeout=1800)
        fetch_seconds = time.monotonic() - began
        assert fetched.returncode == 0, fetched.stderr
        rates = client_seconds(hub, commit, tmp_path / "clients")
    # The hub is gone: the cached replica never asks it.
    cached = replica(model, {"claimName": "cache"})
    waited, cached_ready, cached_rss = time_to_ready(cached, {"fusioninfer-weights": cache}, tmp_path / "cached")

    print(f"\n{weights / 1e9:.2f} GB of weights ({layers} layers), the real vLLM {engines.VERSIONS['VLLM_VERSION']} "
          "CPU build, a hub on loopback")
    print(f"{'replica':<22}{'time to Ready':>15}{'weights step':>16}{'engine peak RSS':>18}")
    print(f"{'fetches at start':<22}{fetching_ready:>13.1f} s{'in its start':>16}{fetching_rss / 2**30:>14.2f} GiB")
    print(f"{'from the cache':<22}{cached_ready:>13.1f} s{waited:>14.2f} s{cached_rss / 2**30:>14.2f} GiB")
    print(f"from the cache / fetches at start: {cached_ready / fetching_ready:.2f}")
    print(f"the fetch Job's program, once per service and revision: {fetch_seconds:.1f} s "
          f"({weights / 1e9 / fetch_seconds:.2f} GB/s, every file verified)")
    print(f"\neach client on the same hub, {weights / 1e9:.2f} GB in {shards} shards, into an empty folder")
    print(f"{'client':<44}{'seconds':>9}{'GB/s':>8}{'of snapshot_download':>22}")
    for client, seconds in rates.items():
        print(f"{client:<44}{seconds:>9.1f}{weights / 1e9 / seconds:>8.2f}"
              f"{rates[SNAPSHOT] / seconds:>21.2f}x")
