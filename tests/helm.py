"""The real helm binaries for the tests: ci/tools.py's (the pins of ci/tools.env in FUSION_CACHE, each major
version run in its own HELM_* homes), and what only the tests ask of them."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from ci.tools import (
    CHART,
    CLI_PLUGIN,
    HELM_BELOW_MINIMUM_VERSION,
    PLUGIN,
    ROOT,
    TOOLS,
    VALUES,
    Helm,
    binary,
    cache,
    helm_path,
    make_helm,
    tool_path,
    values_args,
)

__all__ = ["BELOW_MINIMUM", "CACHE", "CHART", "CLI_PLUGIN", "CRD", "CRD_CHART", "HELM_BELOW_MINIMUM_VERSION", "PLUGIN",
           "ROOT", "TOOLS", "VALUES", "Helm", "binary", "fusion_helm", "make_helm", "plugins_of", "postrender",
           "tool_path", "values_args"]

CACHE = cache()
"""FUSION_CACHE: the suite stops at once, saying so, where it is not set (make sets it)."""
CRD_CHART = ROOT / "charts" / "fusioninfer-crds"
BBR_CHART = ROOT / "charts" / "fusioninfer-bbr"
CRD = CRD_CHART / "templates" / "fusioninfer.io_inferenceservices.yaml"
BELOW_MINIMUM = helm_path(HELM_BELOW_MINIMUM_VERSION)
"""A helm older than the charts' minimum (3.17), which they refuse."""


def fusion_helm(*args: str | Path, stdin: str | None = None, check: bool = True
                ) -> subprocess.CompletedProcess[str]:
    """The installed fusion-helm command."""
    return subprocess.run([str(Path(sys.executable).parent / "fusion-helm"), *map(str, args)], input=stdin,
                          text=True, capture_output=True, check=check)


def plugins_of(tools: Path) -> Path:
    """Where the package whose commands are in TOOLS has its helm plugins, as `fusion-helm plugin-dir`
    tells a user."""
    found = subprocess.run([str(tools / "fusion-helm"), "plugin-dir", PLUGIN.name], capture_output=True,
                           text=True, check=True).stdout.strip()
    return Path(found).parent


def postrender(*args: str, stdin: str | None = None, env: Mapping[str, str] | None = None
               ) -> subprocess.CompletedProcess[str]:
    """The installed fusion-postrender command, started by hand rather than by helm: ARGS, STDIN, and in its
    environment nothing but PATH (the fusion commands first) and ENV."""
    return subprocess.run([str(TOOLS / "fusion-postrender"), *args], input=stdin, text=True, capture_output=True,
                          env={"PATH": tool_path(), **(env or {})})
