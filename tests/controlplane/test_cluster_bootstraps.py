"""A service with a role of each multi-node bootstrap, installed with real helm on the local control
plane: the API server and the controllers take every object, each pod runs the command its bootstrap
gives it, and the InferencePool selects exactly the pods that serve — each replica's leader, and every
pod of the role whose every node serves."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.builders import SERVES_EVERYWHERE, every_bootstrap
from tests.controlplane.cluster import PICKERS, Cluster, eventually, ready_pods, release
from tests.helm import Helm

ROLE_NAME = "fusioninfer.io/role-name"
WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
ROLES = every_bootstrap()


STARTED_BY = {  # the name each bootstrap's script runs as ($0), leader and worker
    "ray": ("ray-leader", "ray-worker"), "vllm": ("vllm-leader", "vllm-worker"),
    "dp": ("vllm-data-parallel-leader", "vllm-data-parallel-worker"),
    SERVES_EVERYWHERE: ("vllm-data-parallel-leader", "vllm-data-parallel-worker"),
    "sglang": ("sglang-leader", "sglang-worker"),
}


def test_a_role_of_each_bootstrap_installs_and_the_pool_selects_the_pods_that_serve(
        cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump({"name": "engines", "roles": [*ROLES, {
        "name": "router", "componentType": "router", "httproute": {"parentRefs": [{"name": "gw"}]}}]}))
    namespace = f"bootstraps-helm{helm.major}"
    with release(cluster, helm, "engines", namespace) as installed:
        installed.install(values)
        manifest = installed.manifest()
        assert len(cluster.on_server(namespace, manifest)) == len(manifest)
        pods = ready_pods(cluster, namespace, 2 * len(ROLES) + PICKERS)  # and the endpoint pickers
        serving = [p for p in pods if p.metadata.labels.get(ROLE_NAME) != "router"]
        for pod in serving:
            role, index = pod.metadata.labels[ROLE_NAME], pod.metadata.labels[WORKER_INDEX]
            [container] = pod.spec.containers
            if role == "custom":
                assert container.name == ("engine" if index == "0" else "rpc")
            else:
                assert container.command[:2] == ["/bin/sh", "-c"]
                assert container.command[3] == STARTED_BY[role][index != "0"]
            serves = index == "0" or role == SERVES_EVERYWHERE
            assert bool(container.ports and any(p.container_port == 8000 for p in container.ports)) == serves, \
                pod.metadata.name

        [pool] = [o for o in manifest if o["kind"] == "InferencePool"]
        selector = pool["spec"]["selector"].get("matchLabels", pool["spec"]["selector"])
        selected = cluster.core.list_namespaced_pod(
            namespace, label_selector=",".join(f"{k}={v}" for k, v in selector.items())).items
        assert sorted(p.metadata.name for p in selected) == sorted(
            p.metadata.name for p in serving
            if p.metadata.labels[WORKER_INDEX] == "0" or p.metadata.labels[ROLE_NAME] == SERVES_EVERYWHERE)
        assert len(selected) == len(ROLES) + 1
        installed.uninstall()
        eventually(f"nothing of the release left in {namespace}", lambda: not cluster.leftovers(namespace))
