"""Every shell block the README, docs/ and the charts' READMEs show, accounted for: each that needs no
cluster, registry or network runs here as written, from a clone's root, with helm 3 and 4, and prints
what the document says it prints; each other is named with what it needs and the test that runs it."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helm import ROOT, Helm, fusion_helm
from tests.recipes import Workspace

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "charts" / "fusioninfer" / "README.md",
             ROOT / "charts" / "fusioninfer-crds" / "README.md", ROOT / "charts" / "fusioninfer-bbr" / "README.md"]
pytestmark = pytest.mark.source_tree  # `make demo`, as the README has it run
FENCE = re.compile(r"^```(sh|bash|console)\n(.*?)^```$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    document: str
    text: str
    console: bool
    """`$ command` lines, the rest what they print; else commands, and `# ` lines after them the output."""

    @property
    def key(self) -> str:
        """The document and its first command, as the tables below name a block."""
        first = next(line for line in self.text.splitlines() if line.strip() and not line.startswith("#"))
        return f"{self.document}: {first.removeprefix('$ ').strip()}"

    def commands(self) -> str:
        if not self.console:
            return self.text
        lines, taking = [], False
        for line in self.text.splitlines():
            if line.startswith("$ "):
                lines.append(line[2:])
                taking = line.endswith("\\")
            elif taking:
                lines.append(line)
                taking = line.endswith("\\")
        return "\n".join(lines) + "\n"

    def output(self) -> list[str]:
        """What the block says its commands print."""
        lines = self.text.splitlines()
        if self.console:
            printed, taking = [], False
            for line in lines:
                if line.startswith("$ ") or taking:
                    taking = line.endswith("\\")
                else:
                    printed.append(line)
            return printed
        last = max(index for index, line in enumerate(lines) if line.strip() and not line.startswith("#"))
        return [line[2:] for line in lines[last + 1:] if line.startswith("# ")]


def blocks() -> list[Block]:
    return [Block(str(path.relative_to(ROOT)), match[2], match[1] == "console")
            for path in DOCUMENTS for match in FENCE.finditer(path.read_text())]


RUN = {
    "README.md: helm template ds charts/fusioninfer -f values/story4-pd-multinode-deepseek-r1.yaml \\",
    "README.md: helm template ds charts/fusioninfer -f values/topology-racks-deepseek-r1.yaml \\",
    "README.md: helm template qwen charts/fusioninfer -f values/router-pd-qwen3-8b.yaml --set layout=disaggregated \\",
    "README.md: helm template qwen charts/fusioninfer -f values/router-pd-qwen3-8b.yaml "
    "--post-renderer fusion-postrender",
    "README.md: helm template qwen charts/fusioninfer -f values/story1-monolithic-qwen3-8b.yaml \\",
    "README.md: helm template qwen charts/fusioninfer -f values/elastic-qwen3-8b.yaml "
    "--post-renderer fusion-postrender",
    "README.md: helm template deepseek charts/fusioninfer -f values/cached-multinode-deepseek-r1.yaml \\",
    "docs/autoscaling.md: helm template qwen charts/fusioninfer -f values/elastic-qwen3-8b.yaml --post-renderer "
    "fusion-postrender \\",
    "docs/gang-scheduling.md: helm template ds charts/fusioninfer -f values/topology-racks-deepseek-r1.yaml \\",
    "docs/gang-scheduling.md: helm template ds charts/fusioninfer -f values/story4-pd-multinode-deepseek-r1.yaml "
    "| fusion-helm plan - --gpus 64",
    "docs/layouts.md: helm template ds charts/fusioninfer -f values/story4-pd-multinode-deepseek-r1.yaml \\",
    "docs/layouts.md: helm template ds charts/fusioninfer -f values/story4-pd-multinode-deepseek-r1.yaml "
    "--set layout=role \\",
    "docs/layouts.md: helm template ds charts/fusioninfer -f values/story4-pd-multinode-deepseek-r1.yaml "
    "--set layout=disaggregated \\",
    "docs/take-over.md: helm install vllm ./your-chart --post-renderer fusion-postrender --post-renderer-args "
    "--take-over-lws",
    "docs/take-over.md: helm install sample ./your-chart --post-renderer fusion-postrender \\",
}
"""Blocks run here. (The take-over ones: their `fusion-helm render` lines, on what the sample chart
renders, since `helm install` needs a cluster: tests/controlplane/test_cluster_take_over.py installs it.)"""

ELSEWHERE = {
    "README.md: make demo   # render the prefill/decode story through real helm and the post-renderer (no cluster)":
        "tests/repository/test_makefile.py and .ci/run: `make test` is this suite, `make demo` runs below",
    "README.md: helm upgrade --install fusioninfer-crds charts/fusioninfer-crds --take-ownership":
        "a cluster: tests/controlplane/test_cluster_lifecycle.py, tests/chart/test_helm_plugins.py (the plugin "
        "folders)",
    "README.md: python3 -m venv ~/fusioninfer && ~/fusioninfer/bin/pip install fusioninfer_helm-0.1.0-py3-none-any.whl":
        "a registry and a cluster: tests/controlplane/test_cluster_release.py",
    "docs/router.md: helm upgrade --install gateway charts/fusioninfer-bbr --namespace gateways "
    "--set provider=istio \\":
        "a cluster with Istio: tests/chart/test_bbr_chart.py renders it, "
        "tests/controlplane/test_cluster_shared_gateway.py installs it",
    "charts/fusioninfer-bbr/README.md: helm upgrade --install gateway charts/fusioninfer-bbr --namespace gateways "
    "--set provider=istio \\":
        "a cluster with Istio: tests/chart/test_bbr_chart.py renders it, "
        "tests/controlplane/test_cluster_shared_gateway.py installs it",
    "docs/layouts.md: LeaderWorkerSet/deepseek-r1-disagg-decode   rolling (group 1; partition keeps 0)":
        "output alone: tests/cli/test_diff.py",
    "docs/layouts.md: helm upgrade qwen charts/fusioninfer -f values/story2-pd-qwen3-8b.yaml --set layout=role "
    "--post-renderer fusion-postrender": "a cluster: tests/controlplane/test_cluster_layouts.py",
    "docs/lifecycle.md: helm upgrade --install fusioninfer-crds charts/fusioninfer-crds --take-ownership"
    "            # Helm 3": "a cluster: tests/controlplane/test_cluster_day_two.py",
    "docs/lifecycle.md: helm history qwen": "a cluster: tests/controlplane/test_cluster_day_two.py",
    "docs/lifecycle.md: helm upgrade qwen charts/fusioninfer -f new-values.yaml --post-renderer fusion-postrender "
    "--atomic    # Helm 3": "a cluster: tests/controlplane/test_cluster_day_two.py",
    "docs/lifecycle.md: helm uninstall qwen --wait": "a cluster: tests/controlplane/test_cluster_day_two.py",
    "docs/lifecycle.md: helm upgrade qwen charts/fusioninfer -f values/story2-pd-qwen3-8b.yaml "
    "--set 'roles[1].replicas=6' \\": "a cluster: tests/controlplane/test_cluster_lifecycle.py",
    "docs/lifecycle.md: helm get manifest qwen > current.yaml":
        "a cluster: tests/controlplane/test_cluster_lifecycle.py",
    "docs/lifecycle.md: kubectl logs job/qwen-hooks-check -n llm        # <service>-hooks-check; the status Job: "
    "<service>-hooks-status": "a cluster: tests/controlplane/test_cluster_day_two.py",
    "docs/lifecycle.md: fusion-helm status qwen -n llm            # a table; -o json; --write stores it in the "
    "status subresource": "a cluster: tests/controlplane/test_cluster_lifecycle.py",
    "docs/package.md: pip install fusioninfer-helm            # the post-renderer, fusion-helm and the KRM function":
        "the network (PyPI): tests/repository/test_release.py installs the wheel",
    "docs/package.md: helm upgrade --install fusioninfer-crds oci://REGISTRY/charts/fusioninfer-crds --version 0.1.0 "
    "--take-ownership": "a registry and a cluster: tests/controlplane/test_cluster_release.py",
    "docs/pipelines.md: cp values/story2-pd-qwen3-8b.yaml deploy/qwen/values.yaml": "tests/chart/test_pipelines.py",
    "docs/pipelines.md: kustomize build --enable-alpha-plugins --enable-exec deploy/broken":
        "tests/chart/test_pipelines.py",
    "docs/pipelines.md: mkdir -p qwen-pkg": "tests/chart/test_pipelines.py",
    "docs/pipelines.md: helm template qwen charts/fusioninfer -f values/story2-pd-qwen3-8b.yaml --post-renderer "
    "fusion-postrender > rendered.yaml": "tests/chart/test_pipelines.py",
    "docs/pipelines.md: helmfile --file deploy/helmfile.yaml template": "tests/chart/test_pipelines.py",
    "docs/pipelines.md: helmfile --file deploy/helmfile.yaml diff":
        "a cluster: tests/controlplane/test_cluster_pipelines.py",
    "docs/pipelines.md: mkdir -p clusters/prod/qwen": "tests/chart/test_pipelines.py",
    "docs/take-over.md: fusion-helm status --lws x -n NAMESPACE        # -o json for the status object":
        "a cluster: tests/controlplane/test_cluster_take_over.py",
    "docs/test-cluster.md: make cluster-build      # build everything (cold: see the README for timings; warm: "
    "seconds)": "the control plane itself: tests/controlplane/test_cluster.py",
    "charts/fusioninfer/README.md: pip install fusioninfer_helm-0.1.0-py3-none-any.whl      # fusion-postrender, "
    "fusion-krm, fusion-helm": "a registry and a cluster: tests/controlplane/test_cluster_release.py",
    "charts/fusioninfer/README.md: HELM_DATA_HOME=~/.local/share/helm4 helm4 plugin install \"$(fusion-helm "
    "plugin-dir fusion-postrender)\"": "tests/chart/test_helm_plugins.py",
    "charts/fusioninfer/README.md: helm pull oci://REGISTRY/charts/fusioninfer --version 0.1.0 --untar   # "
    "fusioninfer/docs, fusioninfer/values": "a registry and a cluster: tests/controlplane/test_cluster_release.py",
    "charts/fusioninfer-crds/README.md: helm upgrade --install fusioninfer-crds oci://REGISTRY/charts/fusioninfer-crds "
    "--version 0.1.0 \\": "a registry and a cluster: tests/controlplane/test_cluster_release.py",
}
"""Blocks run elsewhere, and what they need."""


def test_every_block_is_run_here_or_named_with_what_it_needs() -> None:
    keys = [block.key for block in blocks()]
    assert len(keys) == len(set(keys))
    assert not RUN & ELSEWHERE.keys()
    assert sorted(set(keys) - RUN - ELSEWHERE.keys()) == []  # a new block: run it below, or name why not
    assert sorted((RUN | ELSEWHERE.keys()) - set(keys)) == []  # a block gone or changed: update the tables


@pytest.fixture
def clone(helm: Helm, tmp_path: Path) -> Workspace:
    workspace = Workspace(tmp_path / "clone", helm)
    (workspace.root / "docs").symlink_to(ROOT / "docs")
    return workspace


def shown(expected: list[str], printed: str) -> None:
    """Each line the document shows is printed; `…` stands for what it leaves out, and a line ending
    `  + the tree` for the tree after it."""
    lines = printed.splitlines()
    for line in expected:
        parts = [part.strip() for part in line.removesuffix("  + the tree").split("…") if part.strip()]
        assert any(all(part in candidate for part in parts) for candidate in lines) or \
            all(part in printed for part in parts), f"{line!r} not in:\n{printed}"


@pytest.mark.parametrize("key", sorted(RUN))
def test_the_block_runs_as_written_and_prints_what_the_document_says(clone: Workspace, key: str) -> None:
    [block] = [block for block in blocks() if block.key == key]
    commands = block.commands()
    if block.document == "docs/take-over.md":  # `helm install` needs a cluster; what it installs, rendered
        clone.run(f"helm template vllm {ROOT / 'tests' / 'fixtures' / 'lws-chart'} > manifests.yaml")
        commands = "\n".join(line for line in commands.splitlines() if line.startswith("fusion-helm render"))
    done = clone.run(commands, check=False)
    assert done.returncode == (1 if "fusion-helm validate" in commands else 0), done.stderr
    printed = done.stdout + done.stderr
    shown(block.output(), printed)
    piped = "|" in commands or ">" in commands
    if not piped and ("--post-renderer fusion-postrender" in commands or "fusion-helm render" in commands):
        assert re.search(r"^kind: (LeaderWorkerSet|DisaggregatedSet)$", done.stdout, re.M), done.stdout[:2000]


def test_make_demo_renders_the_story_as_the_readme_says() -> None:
    done = subprocess.run(["make", "--no-print-directory", "-s", "demo"], cwd=ROOT, text=True, capture_output=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    kinds = re.findall(r"^kind: (\w+)$", done.stdout, re.M)
    assert kinds.count("LeaderWorkerSet") == 6 and "PodGroup" in kinds and "InferenceService" in kinds, kinds
    # The story serves as it says: prefill and decode paired by its router, nothing validate warns of.
    assert {"InferencePool", "HTTPRoute"} <= set(kinds), kinds
    checked = fusion_helm("validate", "-", stdin=done.stdout)
    assert "warning" not in checked.stderr, checked.stderr
