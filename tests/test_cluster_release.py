"""Installed as users install it, helm 3 and 4: `make dist`'s chart packages pushed to an OCI registry
(the CNCF distribution registry, run locally) and installed from oci:// onto the control plane, the
CRD chart first, rendered by the post-renderer of the wheel installed into a fresh virtualenv (Helm 4:
its plugin)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.cluster import LWS, Cluster, ready_pods, release
from tests.helm import CHART, VALUES, Helm, make_helm, plugins_of

STORY = VALUES / "story1-monolithic-qwen3-8b.yaml"


def test_the_charts_install_from_an_oci_registry(cluster: Cluster, helm: Helm, dist: Path, installed: Path,
                                                  oci_registry: str, tmp_path: Path) -> None:
    version = str(yaml.safe_load((CHART / "Chart.yaml").read_text())["version"])
    user = make_helm(helm.major, tmp_path / "home", tools=installed, plugins=plugins_of(installed))
    repository = f"oci://{oci_registry}/helm{helm.major}"
    for chart in ("fusioninfer-crds", "fusioninfer"):
        pushed = user.run("push", dist / f"{chart}-{version}.tgz", repository, "--plain-http")
        assert f"Pushed: {oci_registry}/helm{helm.major}/{chart}:{version}" in pushed.stdout + pushed.stderr

    kube = ("--kubeconfig", str(cluster.kubeconfig))
    server_side = ("--server-side=true", "--force-conflicts") if helm.major == 4 else ()
    user.run("upgrade", "--install", "fusioninfer-crds", f"{repository}/fusioninfer-crds", "--version", version,
             "--plain-http", "--take-ownership", *server_side, "--namespace", "default", *kube)
    namespace = f"oci-helm{helm.major}"
    with release(cluster, user, "qwen", namespace):
        user.run("install", "qwen", f"{repository}/fusioninfer", "--version", version, "--plain-http",
                 "-f", STORY, "--post-renderer", "fusion-postrender", "--namespace", namespace,
                 "--create-namespace", *kube)
        shown = yaml.safe_load(user.run("show", "chart", f"{repository}/fusioninfer", "--version", version,
                                        "--plain-http").stdout)
        assert shown["version"] == version
        lws = {o["metadata"]["name"] for o in cluster.custom(LWS, namespace)}
        assert lws == {"qwen-inference-inference-0"}, lws
        ready_pods(cluster, namespace, want=1)
