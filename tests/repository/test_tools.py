"""The pins of the project's tools live in ci/tools.env alone, and the cache in FUSION_CACHE alone:
no other file names a pinned version, and every script and test that reads the cache stops at once,
saying so, without FUSION_CACHE, rather than finding a cache of its own."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ci.tools import PINS
from tests.helm import ROOT

TEXT_DIRS = ("fusion_helm", "bin", "tests", "charts", "values", "docs", "ci", "hooks", ".ci")
TEXT_FILES = ("Makefile", "README.md", "pyproject.toml", "MANIFEST.in")


def test_no_file_but_ci_tools_env_names_a_pinned_version() -> None:
    """Versions and the packages that carry them, as ci/tools.env writes them: a document points to the
    file instead (a version repeated elsewhere goes stale when the pin moves)."""
    pins = {value.rpartition("@")[0] if key.endswith("_NPM_PACKAGE") else value for key, value in PINS.items()}
    paths = [path for top in TEXT_DIRS for path in (ROOT / top).rglob("*") if path.is_file()] + \
        [ROOT / name for name in TEXT_FILES]
    named = {}
    for path in paths:
        if path == ROOT / "ci" / "tools.env" or "__pycache__" in path.parts:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        if found := sorted(pin for pin in pins if pin in text):
            named[str(path.relative_to(ROOT))] = found
    assert named == {}


STOPPING = {
    "fetch-helm.sh": ["ci/fetch-helm.sh"],
    "cluster build.sh": ["ci/cluster/build.sh"],
    "engines build.sh": ["ci/engines/build.sh"],
    "bench.py": [sys.executable, "ci/bench.py"],
    "tests.controlplane": [sys.executable, "-m", "tests.controlplane", "down", "/nonexistent"],
    "pytest": [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only",
               "tests/repository/test_tools.py"],
}


@pytest.mark.parametrize("command", STOPPING.values(), ids=STOPPING.keys())
def test_without_fusion_cache_each_stops_at_once_saying_so(command: list[str]) -> None:
    env = {key: value for key, value in os.environ.items() if key != "FUSION_CACHE"}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stdout + done.stderr
    assert "FUSION_CACHE" in done.stderr and "make" in done.stderr, done.stderr
