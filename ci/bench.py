"""Benchmarks (`make bench`): figures, not pass/fail. Ratios are taken within one run.

1. `helm template` alone vs with the post-renderer, for each story and the router example, both helm
   majors.
2. Expansion of a prefill/decode service with 10, 100 and 1,000 replicas per role: expansion
   alone, the whole text-to-text post-render, and the peak memory the post-render allocates.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fusion_helm import expand, parse_inference_service, render  # noqa: E402
from tests.helm import CHART, VALUES, make_helm  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "15"))


def wall(command: list[str], env: dict[str, str]) -> float:
    """Median wall time of a command over RUNS runs (one warm-up run first)."""
    subprocess.run(command, env=env, check=True, capture_output=True)
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def helm_overhead(tmp: Path) -> None:
    print(f"## helm template, alone vs with --post-renderer fusion-postrender (median of {RUNS})")
    print(f"{'helm':<8}{'story':<40}{'alone ms':>10}{'with ms':>10}{'added':>9}")
    for major in (3, 4):
        helm = make_helm(major, tmp / f"helm{major}")
        for story in [*sorted(VALUES.glob("story*.yaml")), VALUES / "router-pd-qwen3-8b.yaml"]:
            base = [str(helm.path), "template", "r", str(CHART), "-f", str(story)]
            alone = wall(base, helm.env())
            with_pr = wall([*base, "--post-renderer", "fusion-postrender"], helm.env())
            print(f"{major:<8}{story.stem:<40}{alone * 1e3:>10.1f}{with_pr * 1e3:>10.1f}"
                  f"{(with_pr / alone - 1) * 100:>8.0f}%")
    start = time.perf_counter()
    for _ in range(RUNS):
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    print(f"(for scale: starting this Python interpreter alone takes "
          f"{(time.perf_counter() - start) / RUNS * 1e3:.1f} ms)")


def pd_service(replicas: int) -> dict[str, Any]:
    story = yaml.safe_load((VALUES / "story2-pd-qwen3-8b.yaml").read_text())
    for role in story["roles"]:
        role["replicas"] = replicas
    return {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
            "metadata": {"name": "bench"}, "spec": {"roles": story["roles"]}}


def best_of(fn: Callable[[], object], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def expansion_scaling() -> None:
    print("\n## prefill/decode service, N replicas per role (best of 5)")
    print(f"{'N/role':>7}{'objects':>9}{'expand ms':>11}{'render ms':>11}{'output MiB':>12}{'peak MiB':>10}")
    for replicas in (10, 100, 1000):
        obj = pd_service(replicas)
        text = yaml.safe_dump(obj)
        objects = expand(parse_inference_service(obj))
        expand_s = best_of(lambda obj=obj: expand(parse_inference_service(obj)))
        render_s = best_of(lambda text=text: render(text))
        tracemalloc.start()
        output = render(text)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"{replicas:>7}{len(objects):>9}{expand_s * 1e3:>11.1f}{render_s * 1e3:>11.1f}"
              f"{len(output) / 2**20:>12.2f}{peak / 2**20:>10.1f}")


def main() -> None:
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.platform()}")
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        helm_overhead(Path(tmp))
    expansion_scaling()


if __name__ == "__main__":
    main()
