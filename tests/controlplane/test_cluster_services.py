"""Services over serving pods and frontends' objects, installed with helm 3 and 4 on the control plane: the
API server takes them, and each Service selects exactly the pods that serve — each replica's leader, or
every pod of a role whose every node serves — as the API server lists them by its selector. (Their
EndpointSlices are not read: the test cluster's pods have loopback addresses, which the API server refuses
in them; docs/test-cluster.md.)"""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.controlplane.cluster import Cluster, ready_pods, release
from tests.helm import Helm


def values(tmp_path: Path) -> Path:
    """A leader-served multi-node role, a role whose every node serves, each with a Service of its own, one
    over both, and an SGLang router frontend (its pods, a Deployment's, run by kwok here)."""
    engine = {"name": "vllm", "image": "vllm/vllm-openai:v0.32.0", "args": ["Qwen/Qwen3-8B"],
              "ports": [{"containerPort": 8000, "name": "http"}, {"containerPort": 9400, "name": "metrics"}],
              "resources": {"limits": {"nvidia.com/gpu": "8"}}}
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump({
        "roles": [
            {"name": "tp", "componentType": "worker", "replicas": 2, "multinode": {"nodeCount": 2},
             "service": {}, "template": {"spec": {"containers": [engine]}}},
            {"name": "dp", "componentType": "worker", "replicas": 1, "service": {"headless": True},
             "multinode": {"nodeCount": 2, "bootstrap": "vllm-data-parallel",
                           "dataParallel": {"ranksPerNode": 8, "hybridLoadBalancing": True}},
             "template": {"spec": {"containers": [engine]}}},
            {"name": "gateway", "componentType": "frontend", "frontend": {"kind": "sglang-router"},
             "service": {"type": "NodePort"},
             "template": {"spec": {"containers": [{"name": "router", "image": "lmsysorg/sglang:v0.5.23"}]}}},
        ],
        "service": {"type": "ClusterIP"},
    }))
    return path


def selected(cluster: Cluster, namespace: str, name: str) -> list[str]:
    selector = cluster.core.read_namespaced_service(name, namespace).spec.selector
    listed = cluster.core.list_namespaced_pod(namespace, label_selector=",".join(
        f"{key}={value}" for key, value in selector.items())).items
    return sorted(pod.metadata.name for pod in listed)


def test_services_select_exactly_the_serving_pods(cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    namespace = f"services-helm{helm.major}"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(values(tmp_path))
        pods = ready_pods(cluster, namespace, 2 * 2 + 2 + 2)  # tp: 2 replicas of 2, dp: 1 of 2, the frontend: 2
        leaders = ["svc-tp-0-0", "svc-tp-1-0"]
        assert selected(cluster, namespace, "svc-tp-serving") == leaders
        assert selected(cluster, namespace, "svc-dp-serving") == ["svc-dp-0-0", "svc-dp-0-0-1"]
        assert selected(cluster, namespace, "svc-serving") == sorted([*leaders, "svc-dp-0-0", "svc-dp-0-0-1"])
        frontend_pods = sorted(p.metadata.name for p in pods if p.metadata.name.startswith("svc-gateway-"))
        assert len(frontend_pods) == 2 and selected(cluster, namespace, "svc-gateway") == frontend_pods
        gateway = cluster.core.read_namespaced_service("svc-gateway", namespace).spec
        assert (gateway.type, gateway.ports[0].port, gateway.ports[0].node_port is not None) == ("NodePort", 30000,
                                                                                               True)
        dp = cluster.core.read_namespaced_service("svc-dp-serving", namespace).spec
        assert dp.cluster_ip == "None"
        assert [(p.name, p.port) for p in cluster.core.read_namespaced_service("svc-tp-serving", namespace)
                .spec.ports] == [("http", 8000), ("metrics", 9400)]
        # The frontend's pods may read the pods it discovers, as its ServiceAccount.
        allowed = cluster.control_plane.kubectl(
            "auth", "can-i", "watch", "pods", "-n", namespace,
            f"--as=system:serviceaccount:{namespace}:svc-gateway").stdout.strip()
        assert allowed == "yes"
