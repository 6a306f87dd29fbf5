"""Drives the real helm binaries, each major version in its own HELM_* homes.

Helm 3 runs the post-renderer as an executable on PATH; Helm 4 only as a postrenderer/v1 plugin,
installed here from fusion_helm/plugins/fusion-postrender. (A Helm 3 sharing Helm 4's plugin directory fails
to load the v1 plugin.yaml, hence the separate homes.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "charts" / "fusioninfer"
CRD_CHART = ROOT / "charts" / "fusioninfer-crds"
CRD = CRD_CHART / "templates" / "fusioninfer.io_inferenceservices.yaml"
VALUES = ROOT / "values"
PLUGIN = ROOT / "fusion_helm" / "plugins" / "fusion-postrender"
CLI_PLUGIN = ROOT / "fusion_helm" / "plugins" / "fusion"
CACHE = Path(os.environ.get("FUSION_CACHE", Path.home() / ".cache" / "fusioninfer"))
VERSIONS = {3: "v3.17.3", 4: "v4.1.4"}
BELOW_MINIMUM = Path(os.environ.get("FUSION_HELM_BELOW_MINIMUM", CACHE / "helm" / "v3.16.4" / "helm"))
"""A helm older than the charts' minimum (3.17), which they refuse."""


def binary(major: int) -> Path:
    path = Path(os.environ.get(f"FUSION_HELM{major}", CACHE / "helm" / VERSIONS[major] / "helm"))
    if not path.is_file():
        raise RuntimeError(f"helm {VERSIONS[major]} not found at {path}: run `make setup` "
                           f"(ci/fetch-helm.sh fetches it)")
    return path


def values_args(*values: Path) -> list[str | Path]:
    """``-f FILE`` for each values file, in order."""
    return [arg for path in values for arg in ("-f", path)]


def fusion_helm(*args: str | Path, stdin: str | None = None, check: bool = True
                ) -> subprocess.CompletedProcess[str]:
    """The installed fusion-helm command."""
    return subprocess.run([str(Path(sys.executable).parent / "fusion-helm"), *map(str, args)], input=stdin,
                          text=True, capture_output=True, check=check)


TOOLS = Path(sys.executable).parent
"""Where this interpreter's scripts are: the fusion commands of the package installed in it."""


def plugins_of(tools: Path) -> Path:
    """Where the package whose commands are in TOOLS has its helm plugins, as `fusion-helm plugin-dir`
    tells a user."""
    found = subprocess.run([str(tools / "fusion-helm"), "plugin-dir", PLUGIN.name], capture_output=True,
                           text=True, check=True).stdout.strip()
    return Path(found).parent


def tool_path(tools: Path = TOOLS) -> str:
    """PATH with the fusion commands in TOOLS (fusion-postrender) first."""
    return os.pathsep.join([str(tools), os.environ.get("PATH", "")])


def postrender(*args: str, stdin: str | None = None, env: Mapping[str, str] | None = None
               ) -> subprocess.CompletedProcess[str]:
    """The installed fusion-postrender command, started by hand rather than by helm: ARGS, STDIN, and in its
    environment nothing but PATH (the fusion commands first) and ENV."""
    return subprocess.run([str(TOOLS / "fusion-postrender"), *args], input=stdin, text=True, capture_output=True,
                          env={"PATH": tool_path(), **(env or {})})


@dataclass(frozen=True)
class Helm:
    major: int
    path: Path
    home: Path
    tools: Path = TOOLS
    """Where the fusion commands it runs are."""

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HELM_")}
        env.update(PATH=tool_path(self.tools), HELM_CONFIG_HOME=str(self.home / "config"),
                   HELM_CACHE_HOME=str(self.home / "cache"), HELM_DATA_HOME=str(self.home / "data"))
        return env

    def run(self, *args: str | Path, check: bool = True, stdin: str | None = None
            ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([str(self.path), *map(str, args)], env=self.env(), text=True,
                                capture_output=True, input=stdin)
        if check and result.returncode != 0:
            raise AssertionError(f"helm {self.major} {' '.join(map(str, args))} failed:\n{result.stderr}")
        return result

    def template(self, *values: Path, chart: Path = CHART, post_render: bool = True, hooks: bool = False,
                 check: bool = True, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
        """`helm template`; without the hook Jobs unless HOOKS (tests/test_hooks.py looks at those)."""
        args = ["template", "release", chart, *([] if hooks else ["--no-hooks"]), *values_args(*values)]
        if post_render:
            args += ["--post-renderer", "fusion-postrender"]
        return self.run(*args, *extra, check=check)


def make_helm(major: int, home: Path, tools: Path = TOOLS, plugins: Path = PLUGIN.parent) -> Helm:
    """Helm MAJOR in HOME, running the fusion commands in TOOLS, with the plugins in PLUGINS installed."""
    helm = Helm(major, binary(major), home, tools)
    version = helm.run("version", "--template", "{{.Version}}").stdout.strip()
    assert version == VERSIONS[major], f"expected helm {VERSIONS[major]}, got {version}"
    if major == 4:
        helm.run("plugin", "install", plugins / PLUGIN.name)
    helm.run("plugin", "install", plugins / CLI_PLUGIN.name)
    return helm
