"""Benchmarks (`make bench`): figures, not pass/fail; every ratio is taken within one run.

1. What a post-renderer adds to `helm template`, on each story, helm 3 and helm 4 (plugins), from
   interleaved rounds: helm alone; + `cat`; + `python -S` copying stdin to stdout; + the floor for any
   CPython + PyYAML post-renderer (load the stream with PyYAML's C loader, dump it with its C dumper);
   + fusion-postrender. Medians, and our added time over the floor's.
2. A chart with nothing to expand: helm alone vs with fusion-postrender.
3. A prefill/decode service with 10 … 10,000 replicas per role: the expansion alone (in process), the
   whole post-render as a process (parse, expand, write), and that process's peak RSS.
"""

from __future__ import annotations

import os
import platform
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

from fusion_helm import parse_inference_service  # noqa: E402
from fusion_helm.expand import expand  # noqa: E402
from tests.helm import CHART, VALUES, Helm, make_helm, tool_path  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "60"))
STORIES = sorted(VALUES.glob("story*.yaml"))
FLOOR = """import sys
import yaml
documents = list(yaml.load_all(sys.stdin.buffer.read().decode(), Loader=yaml.CSafeLoader))
sys.stdout.write(yaml.dump_all(documents, Dumper=yaml.CSafeDumper))
"""
COPY = "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read())"
PLAIN_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: plain\nversion: 0.1.0\n",
    "templates/objects.yaml": "".join(
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ .Release.Name }}}}-config-{i}\ndata:\n"
        f"  key: value-{i}\n" for i in range(10)) + (
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: 2\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n"
        "      containers: [{name: web, image: nginx:1.27, ports: [{containerPort: 80}]}]\n"),
}


def post_renderers(tmp: Path) -> dict[str, list[str]]:
    """Name → command of each post-renderer measured (Helm 3 runs these; Helm 4 wraps each in a plugin)."""
    floor = tmp / "floor.py"
    floor.write_text(FLOOR)
    return {"cat": ["cat"], "python -S copy": [sys.executable, "-S", "-c", COPY],
            "PyYAML round trip": [sys.executable, str(floor)], "fusion-postrender": ["fusion-postrender"]}


def plugin(tmp: Path, helm: Helm, name: str, command: list[str]) -> str:
    """A postrenderer/v1 plugin running COMMAND through a shell wrapper, as ours does."""
    directory = tmp / "plugins" / name
    directory.mkdir(parents=True)
    script = directory / "run.sh"
    script.write_text("#!/bin/sh\nexec " + " ".join(f"'{part}'" for part in command) + ' "$@"\n')
    script.chmod(0o755)
    (directory / "plugin.yaml").write_text(
        f"apiVersion: v1\ntype: postrenderer/v1\nname: {name}\nversion: 0.1.0\nruntime: subprocess\n"
        "runtimeConfig:\n  platformCommand:\n    - command: ${HELM_PLUGIN_DIR}/run.sh\n")
    helm.run("plugin", "install", str(directory))
    return name


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def interleaved(variants: dict[str, list[str]], env: dict[str, str]) -> dict[str, float]:
    """Median wall time of each variant over ROUNDS rounds, each round running every variant once."""
    for command in variants.values():
        timed(command, env)  # warm the caches
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(ROUNDS):
        for name, command in variants.items():
            times[name].append(timed(command, env))
    return {name: statistics.median(values) for name, values in times.items()}


def helm_overhead(tmp: Path) -> None:
    print(f"## helm template, alone and with post-renderers (median of {ROUNDS} interleaved rounds, ms)")
    renderers = post_renderers(tmp)
    print(f"{'helm':<6}{'story':<38}{'alone':>7}" + "".join(f"{'+' + name:>22}" for name in renderers)
          + f"{'ours / floor':>14}")
    for major in (3, 4):
        helm = make_helm(major, tmp / f"helm{major}")
        names = {name: name if major == 3 else
                 ("fusion-postrender" if name == "fusion-postrender" else plugin(tmp / f"h{major}", helm,
                                                                              f"bench-{len(name)}-{i}", command))
                 for i, (name, command) in enumerate(renderers.items())}
        env = {**helm.env(), "PATH": tool_path()}
        for story in STORIES:
            base = [str(helm.path), "template", "r", str(CHART), "-f", str(story)]
            variants = {"alone": base}
            for name in renderers:
                post = renderers[name] if major == 3 else [names[name]]
                if major == 3 and len(post) > 1:
                    post = [str(_wrapper(tmp, name, post))]
                variants[name] = [*base, "--post-renderer", post[0]]
            medians = interleaved(variants, env)
            alone = medians["alone"]
            added = {name: medians[name] - alone for name in renderers}
            print(f"{major:<6}{story.stem:<38}{alone * 1e3:>7.1f}" + "".join(
                f"{medians[name] * 1e3:>13.1f} (+{added[name] * 1e3:5.1f})" for name in renderers)
                + f"{added['fusion-postrender'] / added['PyYAML round trip']:>14.2f}")


def _wrapper(tmp: Path, name: str, command: list[str]) -> Path:
    """Helm 3 takes a post-renderer as one executable: a script running COMMAND."""
    path = tmp / f"{name.replace(' ', '-')}.sh"
    if not path.exists():
        path.write_text("#!/bin/sh\nexec " + " ".join(f"'{part}'" for part in command) + "\n")
        path.chmod(0o755)
    return path


def nothing_to_expand(tmp: Path) -> None:
    chart = tmp / "plain"
    for name, text in PLAIN_CHART.items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(text)
    print(f"\n## a chart with nothing to expand (11 objects): helm alone vs with fusion-postrender "
          f"(median of {ROUNDS}, ms)")
    for major in (3, 4):
        helm = make_helm(major, tmp / f"plain-helm{major}")
        base = [str(helm.path), "template", "r", str(chart)]
        medians = interleaved({"alone": base, "with": [*base, "--post-renderer", "fusion-postrender"]},
                              {**helm.env(), "PATH": tool_path()})
        print(f"helm {major}: alone {medians['alone'] * 1e3:.1f}, with {medians['with'] * 1e3:.1f}: "
              f"x{medians['with'] / medians['alone']:.2f}")


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


def post_render_process(path: Path) -> tuple[float, int, int]:
    """Wall time, peak RSS (bytes, as the kernel counts it for the process) and output size of one
    fusion-postrender process on the stream in PATH."""
    with path.open("rb") as stdin, tempfile.TemporaryFile() as stdout:
        start = time.perf_counter()
        process = subprocess.Popen(["fusion-postrender"], stdin=stdin, stdout=stdout, env={"PATH": tool_path()})
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        assert process.returncode == 0
        return seconds, usage.ru_maxrss * 1024, stdout.seek(0, os.SEEK_END)


def expansion_scaling() -> None:
    print("\n## prefill/decode service, N replicas per role (expansion: best of 5 in process; post-render: "
          "median of 5 processes)")
    print(f"{'N/role':>7}{'objects':>9}{'expand ms':>11}{'x':>6}{'post-render ms':>16}{'x':>6}{'output MiB':>12}"
          f"{'peak RSS MiB':>14}")
    previous: tuple[float, float] | None = None
    for replicas in (10, 100, 1000, 10_000):
        obj = pd_service(replicas)
        objects = expand(parse_inference_service(obj))
        expand_s = best_of(lambda obj=obj: expand(parse_inference_service(obj)))
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as stream:
            stream.write(yaml.safe_dump(obj))
            stream.flush()
            runs = [post_render_process(Path(stream.name)) for _ in range(5)]
        render_s = statistics.median(run[0] for run in runs)
        peak = max(run[1] for run in runs)
        growth = ("" if previous is None else f"{expand_s / previous[0]:>6.1f}",
                  "" if previous is None else f"{render_s / previous[1]:>6.1f}")
        print(f"{replicas:>7}{len(objects):>9}{expand_s * 1e3:>11.1f}{growth[0]:>6}{render_s * 1e3:>16.1f}"
              f"{growth[1]:>6}{runs[0][2] / 2**20:>12.2f}{peak / 2**20:>14.1f}")
        previous = (expand_s, render_s)


def main() -> None:
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.platform()}")
    with tempfile.TemporaryDirectory() as tmp:
        helm_overhead(Path(tmp))
        nothing_to_expand(Path(tmp))
    expansion_scaling()


if __name__ == "__main__":
    main()
