"""The tools ci/tools.env pins, and where they are: the cache they are fetched into (FUSION_CACHE,
which the Makefile resolves and exports), the charts, and helm 3 and 4 run each in homes of its own
with our post-renderer. Standard library only; ci/bench.py and the tests (tests/helm.py) import it.

Helm 3 runs the post-renderer as an executable on PATH; Helm 4 only as a postrenderer/v1 plugin,
installed here from fusion_helm/plugins/fusion-postrender. (A Helm 3 sharing Helm 4's plugin directory fails
to load the v1 plugin.yaml, hence the separate homes.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "charts" / "fusioninfer"
VALUES = ROOT / "values"
PLUGIN = ROOT / "fusion_helm" / "plugins" / "fusion-postrender"
CLI_PLUGIN = ROOT / "fusion_helm" / "plugins" / "fusion"


def read_env(path: Path) -> dict[str, str]:
    """The KEY=VALUE lines of a file of pins (ci/tools.env, ci/cluster/versions.env,
    ci/engines/versions.env), which a shell sources: comments and blank lines skipped."""
    return dict(line.split("=", 1) for line in path.read_text().splitlines()
                if line.strip() and not line.startswith("#"))


PINS = read_env(ROOT / "ci" / "tools.env")
HELM_VERSIONS = {3: PINS["HELM3_VERSION"], 4: PINS["HELM4_VERSION"]}
HELM_BELOW_MINIMUM_VERSION = PINS["HELM_BELOW_MINIMUM_VERSION"]
"""A helm older than the charts' minimum (3.17), which they refuse."""


def cache() -> Path:
    """The cache of downloads and builds: FUSION_CACHE, which the Makefile sets; nothing else, so that
    every script and test agrees with it."""
    found = os.environ.get("FUSION_CACHE")
    if not found:
        raise SystemExit("FUSION_CACHE is not set: run this through make (which sets it), or set FUSION_CACHE "
                         "to the cache directory")
    return Path(found)


def helm_path(version: str) -> Path:
    """Where ci/fetch-helm.sh puts helm VERSION."""
    return cache() / "helm" / version / "helm"


def binary(major: int) -> Path:
    """The helm MAJOR binary ci/tools.env pins."""
    path = helm_path(HELM_VERSIONS[major])
    if not path.is_file():
        raise RuntimeError(f"helm {HELM_VERSIONS[major]} not found at {path}: run `make setup` "
                           f"(ci/fetch-helm.sh fetches it)")
    return path


TOOLS = Path(sys.executable).parent
"""Where this interpreter's scripts are: the fusion commands of the package installed in it."""


def tool_path(tools: Path = TOOLS) -> str:
    """PATH with the fusion commands in TOOLS (fusion-postrender) first."""
    return os.pathsep.join([str(tools), os.environ.get("PATH", "")])


def values_args(*values: Path) -> list[str | Path]:
    """``-f FILE`` for each values file, in order."""
    return [arg for path in values for arg in ("-f", path)]


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
        """`helm template`; without the hook Jobs unless HOOKS (tests/chart/test_hooks.py looks at those)."""
        args = ["template", "release", chart, *([] if hooks else ["--no-hooks"]), *values_args(*values)]
        if post_render:
            args += ["--post-renderer", "fusion-postrender"]
        return self.run(*args, *extra, check=check)


def make_helm(major: int, home: Path, tools: Path = TOOLS, plugins: Path = PLUGIN.parent) -> Helm:
    """Helm MAJOR in HOME, running the fusion commands in TOOLS, with the plugins in PLUGINS installed."""
    helm = Helm(major, binary(major), home, tools)
    version = helm.run("version", "--template", "{{.Version}}").stdout.strip()
    assert version == HELM_VERSIONS[major], f"expected helm {HELM_VERSIONS[major]}, got {version}"
    if major == 4:
        helm.run("plugin", "install", plugins / PLUGIN.name)
    helm.run("plugin", "install", plugins / CLI_PLUGIN.name)
    return helm
