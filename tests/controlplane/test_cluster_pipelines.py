"""docs/pipelines.md's helmfile recipe against the test control plane, helm 3 and 4: `helmfile diff`
lists the expanded objects, `helmfile apply` installs the story (its LeaderWorkerSets' pods Ready,
its PodGroup Running), the diff then shows nothing (it renders as the upgrade does, lookups included),
a scaling values change shows and applies as the removed replicas, and a role removal the chart
refuses fails the diff with the chart's message."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from tests.controlplane.builds import CACHE, VERSIONS
from tests.controlplane.cluster import LWS, PODGROUP, Cluster, eventually, expected_pods, ready_pods, release
from tests.helm import VALUES, Helm
from tests.recipes import Workspace, section
from tests.support import DOC_STORY

SERVICE = "qwen-inference-service"


def install_helm_diff(helm: Helm) -> None:
    """helm-diff, built by ci/cluster/build.sh, as `helm plugin install` would lay it out (its install
    hook downloads a release binary; here the built one is put in its place)."""
    version = VERSIONS["HELM_DIFF_VERSION"]
    plugin = helm.home / "data" / "plugins" / "helm-diff"
    if not (plugin / "bin" / "diff").is_file():
        (plugin / "bin").mkdir(parents=True, exist_ok=True)
        shutil.copy(CACHE / "share" / f"helm-diff-{version}" / "plugin.yaml", plugin / "plugin.yaml")
        shutil.copy(CACHE / "bin" / f"helm-diff-{version}", plugin / "bin" / "diff")
    assert "diff" in helm.run("plugin", "list").stdout


def changes(diff: str) -> dict[str, str]:
    """helm-diff's headlines (`<namespace>, <name>, <Kind> (<group>) has been added:`, `… has changed:`)
    → {Kind/name: added, removed or changed}."""
    found = {}
    for line in diff.splitlines():
        for what, ending in (("added", " has been added:"), ("removed", " has been removed:"),
                             ("changed", " has changed:")):
            if line.endswith(ending):
                _, name, kind = (part.strip() for part in line.split(",")[:3])
                found[f"{kind.split(' ')[0]}/{name}"] = what
    return found


def test_helmfile_diff_and_apply_install_and_scale_a_story(cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    install_helm_diff(helm)
    recipe = section("helmfile")
    workspace = Workspace(tmp_path / "clone", helm)
    workspace.write(recipe.files)
    [diff_and_apply] = [command for command in recipe.commands if " apply" in command]
    diff, apply = diff_and_apply.strip().splitlines()
    kubeconfig = {"KUBECONFIG": str(cluster.kubeconfig)}
    # LWS's namespace, as on any cluster LWS is installed in: the chart grants the prerequisite check a
    # Role there, which a diff rendered without the cluster would show as removed.
    cluster.control_plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "lws-system"}}])
    with release(cluster, helm, "qwen", "qwen") as installed:
        first = changes(workspace.run(diff, **kubeconfig).stdout)
        lws = [f"LeaderWorkerSet/{SERVICE}-{role}-{i}" for role, n in (("prefill", 2), ("decode", 4)) for i in range(n)]
        assert {name: first.get(name) for name in [*lws, f"PodGroup/{SERVICE}"]} == dict.fromkeys(
            [*lws, f"PodGroup/{SERVICE}"], "added")
        workspace.run(apply, **kubeconfig)
        ready_pods(cluster, "qwen", expected_pods(VALUES / DOC_STORY))
        names = sorted(name.split("/")[1] for name in lws)
        assert sorted(o["metadata"]["name"] for o in cluster.custom(LWS, "qwen")) == names
        eventually("the PodGroup to run", lambda: [g for g in cluster.custom(PODGROUP, "qwen")
                                                  if (g.get("status") or {}).get("phase") == "Running"])
        assert len([doc for doc in yaml.safe_load_all(installed.run("get", "manifest", "qwen"))
                    if doc and doc["kind"] == "LeaderWorkerSet"]) == 6
        assert changes(workspace.run(diff, **kubeconfig).stdout) == {}

        # The documented scaling change: decode from 4 to 2 (at gang level role the PodGroup stays as it is).
        helmfile = workspace.root / "deploy" / "helmfile.yaml"
        spec = yaml.safe_load(helmfile.read_text())
        spec["releases"][0]["set"] = [{"name": "roles[1].replicas", "value": 2}]
        helmfile.write_text(yaml.safe_dump(spec))
        # The hooks' ConfigMap carries the spec the check Job decides from: its replica count changes too.
        assert changes(workspace.run(diff, **kubeconfig).stdout) == {
            f"LeaderWorkerSet/{SERVICE}-decode-2": "removed", f"LeaderWorkerSet/{SERVICE}-decode-3": "removed",
            f"InferenceService/{SERVICE}": "changed", f"ConfigMap/{SERVICE}-hooks": "changed"}
        workspace.run(apply, **kubeconfig)
        ready_pods(cluster, "qwen", 4)

        # What the upgrade would refuse, the diff refuses, in the chart's words.
        story = yaml.safe_load((VALUES / DOC_STORY).read_text())
        story["roles"] = [role for role in story["roles"] if role["name"] != "decode"]
        (workspace.root / "deploy" / "prefill-only.yaml").write_text(yaml.safe_dump(story))
        del spec["releases"][0]["set"]
        spec["releases"][0]["values"].append("prefill-only.yaml")
        helmfile.write_text(yaml.safe_dump(spec))
        refused = workspace.run(diff, check=False, **kubeconfig)
        assert refused.returncode != 0 and "has been removed" not in refused.stdout
        assert (f"this upgrade removes role decode of InferenceService {SERVICE} and deletes its 2 replica(s), "
                "2 pod(s); to allow it, set allowRoleRemoval={decode}") in refused.stdout + refused.stderr
