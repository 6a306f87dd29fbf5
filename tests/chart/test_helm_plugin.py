"""`helm fusion …`: the CLI plugin loads in Helm 3 and 4 and is fusion-helm."""

from __future__ import annotations

from pathlib import Path

from tests.helm import VALUES, Helm, fusion_helm

STORY4 = VALUES / "story4-pd-multinode-deepseek-r1.yaml"


def test_the_plugin_loads_beside_the_post_renderer(helm: Helm) -> None:
    names = [line.split()[0] for line in helm.run("plugin", "list").stdout.splitlines()[1:] if line.strip()]
    assert "fusion" in names
    assert ("fusion-postrender" in names) is (helm.major == 4)


def test_helm_fusion_is_fusion_helm(helm: Helm) -> None:
    rendered = helm.template(STORY4, post_render=False).stdout
    via_helm = helm.run("fusion", "plan", "-", "--gpus", "64", stdin=rendered).stdout
    direct = fusion_helm("plan", "-", "--gpus", "64", stdin=rendered).stdout
    assert via_helm == direct
    assert "deepseek-r1-disagg: partial" in via_helm


def test_errors_come_through(helm: Helm, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    rendered = helm.template(STORY4, post_render=False).stdout
    assert rendered.count("replicas: 2") == 1  # decode's
    bad.write_text(rendered.replace("replicas: 2", "replicas: -1"))
    result = helm.run("fusion", "validate", str(bad), check=False)
    assert result.returncode != 0
    assert result.stdout == ""
    assert "spec.roles[1].replicas: must be >= 0, got -1" in result.stderr
