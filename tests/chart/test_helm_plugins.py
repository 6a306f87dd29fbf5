"""Helm 3 and Helm 4 on one machine, one plugin folder, as the READMEs install them: `helm fusion` in the
shared folder for both, Helm 4's post-renderer plugin in a folder of Helm 4's own (installed with a
data home of its own), which Helm 4's HELM_PLUGINS adds. Both list their plugins, run `helm fusion`
and post-render alike. Without that folder — the post-renderer installed where Helm 3 looks too —
Helm 3 stops loading every plugin."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml

from tests.helm import CLI_PLUGIN, PLUGIN, VALUES, Helm, binary

STORY = VALUES / "story2-pd-qwen3-8b.yaml"


class SharedHelm(Helm):
    """A Helm whose data home (and so its default plugin folder) is shared with the other major, and
    whose HELM_PLUGINS, when given, is its own."""

    plugins: str | None = None

    def env(self) -> dict[str, str]:
        env = super().env()
        if self.plugins is not None:
            env["HELM_PLUGINS"] = self.plugins
        return env


def helms(home: Path, helm4_plugins: str | None) -> tuple[SharedHelm, SharedHelm]:
    helm3, helm4 = SharedHelm(3, binary(3), home), SharedHelm(4, binary(4), home)
    object.__setattr__(helm4, "plugins", helm4_plugins)
    return helm3, helm4


def default_plugins(home: Path) -> str:
    return str(home / "data" / "plugins")


def test_both_helms_use_one_plugin_folder_with_the_post_renderer_in_helm_4_s_own(tmp_path: Path) -> None:
    # Helm 4.1's `plugin install` of a directory installs under HELM_DATA_HOME, whatever HELM_PLUGINS says
    installer = SharedHelm(4, binary(4), tmp_path / "helm4")
    installer.run("plugin", "install", PLUGIN)
    own = default_plugins(tmp_path / "helm4")
    helm3, helm4 = helms(tmp_path, os.pathsep.join([default_plugins(tmp_path), own]))
    helm3.run("plugin", "install", CLI_PLUGIN)  # either helm installs `helm fusion`: both read it

    assert "fusion" in helm3.run("plugin", "list").stdout
    listed = helm4.run("plugin", "list").stdout
    assert "fusion-postrender" in listed and "\nfusion " in listed.replace("\t", " ")
    for helm in (helm3, helm4):
        assert "validate" in helm.run("fusion", "--help").stdout
    rendered = [{f"{doc['kind']}/{doc['metadata']['name']}": doc for doc in yaml.safe_load_all(
        helm.template(STORY).stdout)} for helm in (helm3, helm4)]
    assert any(key.startswith("LeaderWorkerSet/") for key in rendered[0]) and rendered[0] == rendered[1]


def test_the_post_renderer_in_the_shared_folder_breaks_helm_3(tmp_path: Path) -> None:
    """What the README's separate folder prevents."""
    helm3, helm4 = helms(tmp_path, None)
    helm3.run("plugin", "install", CLI_PLUGIN)
    helm4.run("plugin", "install", PLUGIN)
    listed = helm3.run("plugin", "list", check=False)
    fusion = subprocess.run([str(helm3.path), "fusion", "--help"], env=helm3.env(), capture_output=True, text=True)
    assert listed.returncode != 0 and 'unknown field "apiVersion"' in listed.stderr, listed.stderr
    assert fusion.returncode != 0, fusion.stdout
