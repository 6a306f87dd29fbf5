"""The commands the NOTES print after `helm install`, run as printed against what the install made on the
control plane: the count of what the post-renderer made, and the lookup of where a first request goes
(the Gateway's address, the frontend's Service, a serving pod), under layouts replica and disaggregated."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.controlplane.builds import binary
from tests.controlplane.cluster import Cluster, eventually, release
from tests.helm import CHART, VALUES, Helm

CASES = {  # example, layout → what the first request's lookup finds
    ("router-pd-qwen3-8b.yaml", "replica"): "gateway",
    ("story2-pd-qwen3-8b.yaml", "disaggregated"): "pod",
    ("sglang-router-pd-qwen3-8b.yaml", "replica"): "service",
}


def command(notes: str, start: str) -> str:
    """The command of NOTES whose first line starts with START (indented), its continued lines with it."""
    lines = notes.splitlines()
    first = next(index for index, line in enumerate(lines) if line.startswith(f"  {start}"))
    end = first
    while lines[end].endswith("\\"):
        end += 1
    return "\n".join(lines[first:end + 1])


def shell(helm: Helm, cluster: Cluster, tools: Path, script: str) -> str:
    """SCRIPT in sh, as a user with this cluster's kubeconfig and this helm and kubectl on PATH runs it."""
    tools.mkdir(exist_ok=True)
    for name, target in (("kubectl", binary("kubectl")), ("helm", helm.path)):
        if not (tools / name).exists():
            (tools / name).symlink_to(target)
    env = {**helm.env(), "KUBECONFIG": str(cluster.kubeconfig)}
    env["PATH"] = os.pathsep.join([str(tools), env["PATH"]])
    done = subprocess.run(["sh", "-c", script], env=env, text=True, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("example,layout", list(CASES), ids=lambda value: str(value).removesuffix(".yaml"))
def test_the_notes_commands_find_what_the_install_made(cluster: Cluster, helm: Helm, tmp_path: Path,
                                                       example: str, layout: str) -> None:
    values = {**yaml.safe_load((VALUES / example).read_text()), "layout": layout}
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    namespace = f"notes-{layout}-helm{helm.major}"
    with release(cluster, helm, "qwen", namespace) as installed:
        printed = installed.run("install", "qwen", CHART, "-f", path, "--post-renderer", "fusion-postrender",
                                "--create-namespace")
        notes = printed.split("NOTES:\n", 1)[1]
        counted = shell(helm, cluster, tmp_path / "bin", command(notes, "helm get manifest"))
        kinds = {line.split()[-1] for line in counted.splitlines()}
        assert ("DisaggregatedSet" if layout == "disaggregated" else "LeaderWorkerSet") in kinds, counted
        assert {"InferenceService", "PodGroup"} <= kinds, counted

        target = CASES[(example, layout)]
        if target == "gateway":
            # what a Gateway controller writes once it serves the Gateway
            [gateway] = cluster.control_plane.items("gateways.gateway.networking.k8s.io", namespace)
            cluster.control_plane.kubectl("patch", "gateway", gateway["metadata"]["name"], "-n", namespace,
                                          "--subresource", "status", "--type", "merge", "-p",
                                          '{"status": {"addresses": [{"type": "IPAddress", "value": "127.0.0.1"}]}}')
            address = shell(helm, cluster, tmp_path / "bin", command(notes, "ADDRESS=") + '\necho "$ADDRESS"')
            assert address == "127.0.0.1\n"
            assert command(notes, "curl").startswith("  curl http://$ADDRESS:80/v1/completions")
        else:
            lookup = command(notes, "TARGET=") + '\necho "$TARGET"'
            found = eventually(f"the {target} the NOTES name",
                               lambda: shell(helm, cluster, tmp_path / "bin", lookup).strip())
            kind, _, name = found.partition("/")
            assert kind == target, found
            if target == "pod":
                labels = cluster.core.read_namespaced_pod(name, namespace).metadata.labels
                assert (labels["fusioninfer.io/component-type"], labels["leaderworkerset.sigs.k8s.io/worker-index"]) \
                    == ("decoder", "0")
            else:
                frontend = next(role["name"] for role in values["roles"] if role["componentType"] == "frontend")
                labels = cluster.core.read_namespaced_service(name, namespace).metadata.labels
                assert labels["fusioninfer.io/role-name"] == frontend
