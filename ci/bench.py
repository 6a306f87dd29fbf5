"""Benchmarks (`make bench`): figures, not pass/fail; every ratio is taken within one run.

1. What a post-renderer adds to `helm template`, helm 3 and helm 4 (plugins), on each story and on a
   chart with nothing to expand, from interleaved rounds in random order: helm alone; + `cat`;
   + `python -S` copying stdin to stdout; + the same with `site` (what any console script starts with);
   + the floor for any CPython + PyYAML post-renderer (load the stream with PyYAML's C loader, dump it
   with its C dumper); + fusion-postrender, as installed (what a user's helm runs). Medians; our added
   time over the Python copy's and over the floor's; our total over helm alone.
2. The streams helm hands the post-renderer, fed straight to the same post-renderers: the same
   comparison without helm's own variance.
3. A prefill/decode service with 10 … 10,000 replicas per role, in each layout: the expansion alone (in
   process), the whole post-render as a process (parse, expand, write), and that process's peak RSS.
4. The same service through the KRM function (`fusion-krm`, a ResourceList in and out) beside the
   post-renderer, and the PyYAML round trip of the KRM function's output: what the other transport costs.
"""

from __future__ import annotations

import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ci.tools import CHART, HELM_VERSIONS, VALUES, Helm, binary, make_helm, tool_path  # noqa: E402
from fusion_helm import parse_inference_service  # noqa: E402
from fusion_helm.expand import expand  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "60"))
STORIES = sorted(VALUES.glob("story*.yaml"))
PLAIN = "nothing to expand (11 objects)"
COPY = "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read())"
FLOOR = """import sys
import yaml
documents = list(yaml.load_all(sys.stdin.buffer.read().decode(), Loader=yaml.CSafeLoader))
sys.stdout.write(yaml.dump_all(documents, Dumper=yaml.CSafeDumper))
"""
PLAIN_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: plain\nversion: 0.1.0\n",
    "templates/objects.yaml": "".join(
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ .Release.Name }}}}-config-{i}\ndata:\n"
        f"  key: value-{i}\n" for i in range(10)) + (
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: 2\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n"
        "      containers: [{name: web, image: nginx:1.27, ports: [{containerPort: 80}]}]\n"),
}
OURS = "fusion-postrender"
FLOOR_NAME = "PyYAML round trip"
COPY_NAME = "python copy"
"""The least any Python command adds: start (with site, as every installed script does), copy, exit."""


def post_renderers(tmp: Path) -> dict[str, str]:
    """Name → executable of each post-renderer measured: each runs as its own process, no shell between
    (Helm 3 runs these; Helm 4 wraps each in a plugin, as it does ours)."""
    scripts = {"python -S copy": ("-S", COPY), COPY_NAME: ("", COPY), FLOOR_NAME: ("", FLOOR)}
    found = {"cat": "cat"}
    for name, (flags, code) in scripts.items():
        path = tmp / name.replace(" ", "-")
        path.write_text(f"#!{sys.executable} {flags}".rstrip() + "\n" + code + "\n")
        path.chmod(0o755)
        found[name] = str(path)
    return {**found, OURS: OURS}


def plugin(helm: Helm, directory: Path, name: str, command: list[str]) -> str:
    """A postrenderer/v1 plugin running COMMAND through a shell wrapper, as ours does."""
    directory.mkdir(parents=True)
    script = directory / "run.sh"
    script.write_text("#!/bin/sh\nexec " + " ".join(f"'{part}'" for part in command) + ' "$@"\n')
    script.chmod(0o755)
    (directory / "plugin.yaml").write_text(
        f"apiVersion: v1\ntype: postrenderer/v1\nname: {name}\nversion: 0.1.0\nruntime: subprocess\n"
        "runtimeConfig:\n  platformCommand:\n    - command: ${HELM_PLUGIN_DIR}/run.sh\n")
    helm.run("plugin", "install", str(directory))
    return name


def timed(command: list[str], env: dict[str, str], stdin: Path | None = None) -> float:
    with open(stdin or os.devnull, "rb") as given:
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True, stdin=given, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return time.perf_counter() - start


def interleaved(variants: dict[str, list[str]], env: dict[str, str], stdin: Path | None = None
                ) -> dict[str, float]:
    """Median wall time of each variant over ROUNDS rounds, each round running every variant once, in an
    order shuffled anew each round."""
    for command in variants.values():
        timed(command, env, stdin)  # warm the caches
    times: dict[str, list[float]] = {name: [] for name in variants}
    order = list(variants)
    shuffle = random.Random(0).shuffle
    for _ in range(ROUNDS):
        shuffle(order)
        for name in order:
            times[name].append(timed(variants[name], env, stdin))
    return {name: statistics.median(values) for name, values in times.items()}


def charts(tmp: Path) -> dict[str, list[str]]:
    """Chart name → the arguments of `helm template` that render it."""
    plain = tmp / "plain"
    for name, text in PLAIN_CHART.items():
        (plain / name).parent.mkdir(parents=True, exist_ok=True)
        (plain / name).write_text(text)
    return {**{story.stem: [str(CHART), "-f", str(story)] for story in STORIES}, PLAIN: [str(plain)]}


def helm_overhead(tmp: Path) -> dict[tuple[int, str], Path]:
    """Section 1; returns the stream each helm handed the post-renderer, by (major, chart)."""
    print(f"## helm template, alone and with post-renderers (median of {ROUNDS} interleaved rounds, ms)")
    renderers = post_renderers(tmp)
    print(f"{'helm':<6}{'chart':<38}{'alone':>7}" + "".join(f"{'+' + name:>22}" for name in renderers)
          + f"{'ours/copy':>11}{'ours/floor':>12}{'x alone':>9}")
    streams = {}
    for major in (3, 4):
        helm = make_helm(major, tmp / f"helm{major}")
        env = {**helm.env(), "PATH": tool_path()}
        capture = tmp / f"capture-{major}"
        capture.write_text("#!/bin/sh\nexec tee \"$CAPTURE\"\n")
        capture.chmod(0o755)
        names = {name: (OURS if name == OURS else plugin(helm, tmp / f"plugins{major}" / str(i), f"bench-{i}",
                                                        [executable]))
                 for i, (name, executable) in enumerate(renderers.items())} if major == 4 else renderers
        capture_as = plugin(helm, tmp / f"plugins{major}" / "capture", "bench-capture", [str(capture)]) \
            if major == 4 else str(capture)
        for chart, arguments in charts(tmp).items():
            base = [str(helm.path), "template", "r", *arguments]
            stream = streams[(major, chart)] = tmp / f"stream-{major}-{chart.split()[0]}.yaml"
            subprocess.run([*base, "--post-renderer", capture_as], env={**env, "CAPTURE": str(stream)},
                           check=True, stdout=subprocess.DEVNULL)
            variants = {"alone": base} | {name: [*base, "--post-renderer", names[name]] for name in renderers}
            medians = interleaved(variants, env)
            print(_row(f"{major:<6}{chart:<38}", medians))
    return streams


def _row(label: str, medians: dict[str, float], over_alone: bool = True) -> str:
    base = medians["alone"]
    added = {name: medians[name] - base for name in medians}
    return (f"{label}{base * 1e3:>7.1f}" + "".join(f"{medians[name] * 1e3:>13.1f} (+{added[name] * 1e3:5.1f})"
                                                  for name in medians if name != "alone")
            + f"{added[OURS] / added[COPY_NAME]:>11.2f}" + f"{added[OURS] / added[FLOOR_NAME]:>12.2f}"
            + (f"{medians[OURS] / base:>9.2f}" if over_alone else ""))


def straight(tmp: Path, streams: dict[tuple[int, str], Path]) -> None:
    """Section 2: each captured stream on each post-renderer's standard input, no helm around it."""
    print(f"\n## the streams helm hands the post-renderer, fed straight to each (median of {ROUNDS} "
          "interleaved rounds, ms; `true` is an empty process)")
    renderers = post_renderers(tmp)
    print(f"{'helm':<6}{'chart':<38}{'true':>7}" + "".join(f"{'+' + name:>22}" for name in renderers)
          + f"{'ours/copy':>11}{'ours/floor':>12}")
    env = {"PATH": tool_path()}
    for (major, chart), stream in streams.items():
        variants = {"alone": ["true"]} | {name: [executable] for name, executable in renderers.items()}
        medians = interleaved(variants, env, stream)
        print(_row(f"{major:<6}{chart:<38}", medians, over_alone=False))


def pd_service(replicas: int, layout: str) -> dict[str, Any]:
    story = yaml.safe_load((VALUES / "story2-pd-qwen3-8b.yaml").read_text())
    for role in story["roles"]:
        role["replicas"] = replicas
    return {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
            "metadata": {"name": "bench"}, "spec": {"roles": story["roles"], "layout": layout}}


def best_of(fn: Callable[[], object], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


# Linux charges a child's peak RSS with the memory of the process that spawned it (the exec'd image
# inherits the spawner's high-water mark), so the measured process is spawned by this small one, which
# reports the peak of its child alone.
SPAWNER = """
import os, sys, time
start = time.perf_counter()
pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ)
_, status, usage = os.wait4(pid, 0)
sys.stderr.write(f"{time.perf_counter() - start} {usage.ru_maxrss}\\n")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_process(command: list[str], path: Path) -> tuple[float, int, int]:
    """COMMAND's wall time and peak RSS (bytes, as the kernel counts it, bounded below by the
    spawner's own), and its output's size, on the stream in PATH."""
    with path.open("rb") as stdin, tempfile.TemporaryFile() as stdout:
        done = subprocess.run([sys.executable, "-S", "-c", SPAWNER, *command], stdin=stdin, stdout=stdout,
                              stderr=subprocess.PIPE, env={"PATH": tool_path()}, check=True)
        seconds, peak_kib = done.stderr.split()[-2:]
        return float(seconds), int(peak_kib) * 1024, stdout.seek(0, os.SEEK_END)


def distinct_dicts(value: Any, seen: set[int]) -> int:
    """How many mappings VALUE holds, each shared one counted once: what building it allocates."""
    if isinstance(value, dict):
        if id(value) in seen:
            return 0
        seen.add(id(value))
        return 1 + sum(distinct_dicts(item, seen) for item in value.values())
    if isinstance(value, list):
        return sum(distinct_dicts(item, seen) for item in value)
    return 0


def dict_loop(count: int) -> list[dict[str, int]]:
    """The floor for building COUNT mappings and keeping them: a loop that does only that."""
    return [{"a": index, "b": index, "c": index, "d": index} for index in range(count)]


def expansion_scaling(tmp: Path, layout: str) -> None:
    print(f"\n## prefill/decode service, layout {layout}, N replicas per role (in process, best of 5: the "
          "expansion, and a loop building as many mappings as it does; as a process, median of 5: the whole "
          "post-render, and the PyYAML round trip of its output)")
    print(f"{'N/role':>7}{'objects':>9}{'mappings':>10}{'expand ms':>11}{'x':>6}{'loop x':>8}"
          f"{'post-render ms':>16}{'x':>6}{'round trip ms':>15}{'output MiB':>12}{'peak RSS MiB':>14}")
    floor = post_renderers(tmp)[FLOOR_NAME]
    previous: tuple[float, float, float] | None = None
    for replicas in (10, 100, 1000, 10_000):
        obj = pd_service(replicas, layout)
        objects = expand(parse_inference_service(obj))
        mappings = distinct_dicts(objects, set())
        expand_s = best_of(lambda obj=obj: expand(parse_inference_service(obj)))
        loop_s = best_of(lambda mappings=mappings: dict_loop(mappings))
        stream = tmp / f"pd-{layout}-{replicas}.yaml"
        stream.write_text(yaml.safe_dump(obj))
        runs = [run_process([OURS], stream) for _ in range(5)]
        render_s = statistics.median(run[0] for run in runs)
        peak = max(run[1] for run in runs)
        output = tmp / f"pd-{layout}-{replicas}-out.yaml"
        output.write_text(subprocess.run([OURS], stdin=stream.open("rb"), capture_output=True,
                                         env={"PATH": tool_path()}, check=True).stdout.decode())
        floor_s = statistics.median(run_process([floor], output)[0] for _ in range(1 if replicas > 1000 else 3))
        growth = ["" if previous is None else f"{now / before:.1f}"
                  for now, before in zip((expand_s, loop_s, render_s), previous or (1, 1, 1), strict=True)]
        print(f"{replicas:>7}{len(objects):>9}{mappings:>10}{expand_s * 1e3:>11.1f}{growth[0]:>6}{growth[1]:>8}"
              f"{render_s * 1e3:>16.1f}{growth[2]:>6}{floor_s * 1e3:>15.1f}{runs[0][2] / 2**20:>12.2f}"
              f"{peak / 2**20:>14.1f}")
        previous = (expand_s, loop_s, render_s)


def krm_transport(tmp: Path) -> None:
    print("\n## the same service (layout replica) through fusion-krm and fusion-postrender (processes, median "
          "of 5; the floor: the PyYAML round trip of fusion-krm's output)")
    print(f"{'N/role':>7}{'post-render ms':>16}{'krm ms':>9}{'krm x':>7}{'round trip ms':>15}"
          f"{'post-render MiB':>17}{'krm MiB':>9}")
    floor = post_renderers(tmp)[FLOOR_NAME]
    for replicas in (10, 100, 1000, 10_000):
        obj = pd_service(replicas, "replica")
        stream, resource_list = tmp / f"krm-{replicas}.yaml", tmp / f"krm-{replicas}-list.yaml"
        stream.write_text(yaml.safe_dump(obj))
        resource_list.write_text(yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
                                                 "items": [obj]}))
        ours = [run_process([OURS], stream) for _ in range(5)]
        krm = [run_process(["fusion-krm"], resource_list) for _ in range(5)]
        output = tmp / f"krm-{replicas}-out.yaml"
        output.write_text(subprocess.run(["fusion-krm"], stdin=resource_list.open("rb"), capture_output=True,
                                         env={"PATH": tool_path()}, check=True).stdout.decode())
        floor_s = statistics.median(run_process([floor], output)[0] for _ in range(1 if replicas > 1000 else 3))
        ours_s, krm_s = (statistics.median(run[0] for run in runs) for runs in (ours, krm))
        print(f"{replicas:>7}{ours_s * 1e3:>16.1f}{krm_s * 1e3:>9.1f}{krm_s / ours_s:>7.2f}{floor_s * 1e3:>15.1f}"
              f"{max(run[1] for run in ours) / 2**20:>17.1f}{max(run[1] for run in krm) / 2**20:>9.1f}")


def main() -> None:
    for major in HELM_VERSIONS:
        binary(major)  # FUSION_CACHE set and helm fetched, or stop here, saying which
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.platform()}")
    with tempfile.TemporaryDirectory() as tmp:
        streams = helm_overhead(Path(tmp))
        straight(Path(tmp), streams)
        for layout in ("replica", "role", "disaggregated"):
            expansion_scaling(Path(tmp), layout)
        krm_transport(Path(tmp))


if __name__ == "__main__":
    main()
