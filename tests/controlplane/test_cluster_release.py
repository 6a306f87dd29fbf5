"""Installed as users install it, helm 3 and 4: `make dist`'s chart packages pushed to an OCI registry
(the CNCF distribution registry, run locally) and installed from oci:// onto the control plane by the
commands the chart's README gives, the CRD chart first, rendered by the post-renderer of the wheel
installed into a fresh virtualenv (Helm 4: its plugin); then pulled and installed from its own files,
the example values the package holds, as the README's next block says."""

from __future__ import annotations

import shlex
import subprocess
from functools import reduce
from pathlib import Path

import yaml

from tests.controlplane.cluster import LWS, Cluster, ready_pods, release
from tests.helm import CHART, VALUES, Helm, make_helm, plugins_of

STORY = VALUES / "story1-monolithic-qwen3-8b.yaml"


def readme_commands(readme: str) -> tuple[list[list[str]], dict[str, list[str]]]:
    """The README's first bash block: its commands, split as a shell splits them (lines joined at a
    trailing backslash), and the flags its comments say to add, by what for (``Helm 4: add …``)."""
    block = readme.split("```bash\n", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    commands, added = [], {}
    for line in block.splitlines():
        words = shlex.split(line, comments=False)
        if "#" in words:
            comment = " ".join(words[words.index("#") + 1:])
            words = words[:words.index("#")]
            for clause in comment.split(";"):
                what, found, flags = clause.partition(": add ")
                if found:
                    added[what.strip()] = flags.split()
        commands.append(words)
    return commands, added


def test_the_chart_readme_s_install_commands_work(cluster: Cluster, helm: Helm, dist: Path, installed: Path,
                                                  oci_registry: str, tmp_path: Path) -> None:
    """The install block of the README a user reads (`helm show readme`), run command by command: its
    wheel from `make dist`, its REGISTRY a local one (plain HTTP) holding the charts, its values.yaml
    story 1, the flags its comments add for Helm 4."""
    version = str(yaml.safe_load((CHART / "Chart.yaml").read_text())["version"])
    user = make_helm(helm.major, tmp_path / "home", tools=installed, plugins=plugins_of(installed))
    registry = f"{oci_registry}/helm{helm.major}"
    for chart in ("fusioninfer-crds", "fusioninfer"):
        pushed = user.run("push", dist / f"{chart}-{version}.tgz", f"oci://{registry}/charts", "--plain-http")
        assert f"Pushed: {registry}/charts/{chart}:{version}" in pushed.stdout + pushed.stderr
    readme = user.run("show", "readme", f"oci://{registry}/charts/fusioninfer", "--version", version,
                      "--plain-http").stdout
    commands, added = readme_commands(readme)
    assert [words[:2] for words in commands] == [["pip", "install"], ["helm", "upgrade"], ["helm", "install"]]
    [wheel] = dist.glob("*.whl")
    local = {"REGISTRY": registry, wheel.name: str(wheel), "values.yaml": str(STORY)}
    with release(cluster, user, "qwen", "llm"):
        for words in commands:
            words = [reduce(lambda word, old: word.replace(old, local[old]), local, word) for word in words]
            if words[0] == "pip":
                done = subprocess.run([str(installed / "pip"), *words[1:]], capture_output=True, text=True)
                assert done.returncode == 0, done.stderr
                continue
            extra = ["--plain-http", "--kubeconfig", str(cluster.kubeconfig)]
            if words[1] == "upgrade" and helm.major == 4:
                extra += added["Helm 4"]
            user.run(*words[1:], *extra)
        lws = {o["metadata"]["name"] for o in cluster.custom(LWS, "llm")}
        assert lws == {"qwen-inference-inference-0"}, lws
        ready_pods(cluster, "llm", want=1)

    # The README's block for the documents and examples the package holds: pulled and installed as written.
    block = readme.split("```bash\n")[3].split("```", 1)[0]
    assert "helm pull oci://REGISTRY/charts/fusioninfer" in block, block
    with release(cluster, user, "qwen", "llm"):
        for words in (shlex.split(line, comments=True) for line in block.replace("\\\n", " ").splitlines()):
            words = [word.replace("REGISTRY", registry) for word in words]
            flags = ["--plain-http"] if words[1] == "pull" else ["--kubeconfig", str(cluster.kubeconfig)]
            done = subprocess.run([str(user.path), *words[1:], *flags], cwd=tmp_path, env=user.env(), text=True,
                                  capture_output=True)
            assert done.returncode == 0, done.stderr
        assert (tmp_path / "fusioninfer" / "docs" / "router.md").read_bytes() == (
            VALUES.parent / "docs" / "router.md").read_bytes()
        pools = cluster.control_plane.items("inferencepools.inference.networking.k8s.io", "llm")
        assert [pool["metadata"]["name"] for pool in pools] == ["qwen-pd-router"], pools
