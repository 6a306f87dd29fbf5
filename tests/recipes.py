"""The recipes of docs/pipelines.md as the tests run them: per section (``## Title``), the files it
creates (a fenced block right after a line ``File `path`:``) and its shell blocks (```` ```sh ````), in
order. A comment line in a shell block after its commands is output the commands print."""

from __future__ import annotations

import functools
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tests.controlplane.builds import CACHE, VERSIONS
from tests.helm import ROOT, Helm

DOC = ROOT / "docs" / "pipelines.md"
_FILE = re.compile(r"^File `([^`]+)`:$")
_FENCE = re.compile(r"^```(\w*)$")
TOOLS = {"kustomize": "KUSTOMIZE", "helmfile": "HELMFILE", "kpt": "KPT", "kubeconform": "KUBECONFORM"}
"""Commands a recipe runs → their version in ci/cluster/versions.env (built by build.sh pipelines)."""


@dataclass
class Section:
    files: dict[str, str] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)


def sections(text: str | None = None) -> dict[str, Section]:
    out: dict[str, Section] = {}
    current = Section()
    lines = iter((DOC.read_text() if text is None else text).splitlines())
    pending_file: str | None = None
    for line in lines:
        if line.startswith("## "):
            current = out.setdefault(line[3:].strip(), Section())
            pending_file = None
        elif match := _FILE.match(line):
            pending_file = match.group(1)
        elif match := _FENCE.match(line):
            body = []
            for inner in lines:
                if inner == "```":
                    break
                body.append(inner)
            block = "\n".join(body) + "\n"
            if pending_file is not None:
                current.files[pending_file] = block
            elif match.group(1) == "sh":
                current.commands.append(block)
            pending_file = None
        elif line.strip():
            pending_file = None  # prose between a File line and a block: the block is not that file
    return out


def expected_output(command: str) -> list[str]:
    """The comment lines of a shell block after its first command: what it prints."""
    lines = command.splitlines()
    first = next(i for i, line in enumerate(lines) if line and not line.startswith("#"))
    return [line[2:] for line in lines[first:] if line.startswith("# ")]


def tool(name: str) -> Path:
    path = CACHE / "bin" / f"{name}-{VERSIONS[TOOLS[name] + '_VERSION']}"
    if not path.is_file():
        raise RuntimeError(f"{path} is missing: `make cluster-build` builds the pipeline tools (ci/cluster/build.sh)")
    return path


class Workspace:
    """A scratch directory standing in for the root of a clone (chart, stories and plugins linked), with
    a `bin` of the tools the recipes name: helm (the given major), kustomize, kpt, kubeconform, helmfile."""

    def __init__(self, root: Path, helm: Helm) -> None:
        self.root = root
        self.helm = helm
        root.mkdir(parents=True)
        for name in ("charts", "values", "plugins"):
            (root / name).symlink_to(ROOT / name)
        self.bin = root.parent / f"{root.name}-bin"
        self.bin.mkdir()
        (self.bin / "helm").symlink_to(helm.path)
        for name in TOOLS:
            (self.bin / name).symlink_to(tool(name))

    def env(self, **extra: str) -> dict[str, str]:
        env = self.helm.env()
        env["PATH"] = os.pathsep.join([str(self.bin), env["PATH"]])
        return {**env, **extra}

    def write(self, files: dict[str, str]) -> None:
        for name, text in files.items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

    def run(self, command: str, check: bool = True, cwd: Path | None = None, **env: str
            ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=cwd or self.root, text=True,
                                capture_output=True, env=self.env(**env), timeout=600)
        if check and result.returncode != 0:
            raise AssertionError(f"{command!r} failed ({result.returncode}):\n{result.stderr}")
        return result


def section(title: str) -> Section:
    """The section of docs/pipelines.md titled TITLE."""
    found = _recipes().get(title)
    assert found is not None, f"docs/pipelines.md has no section {title!r}"
    return found


@functools.cache
def _recipes() -> dict[str, Section]:
    return sections()
