"""A real Kubernetes control plane on loopback, from the binaries ci/cluster/build.sh builds; and the tests
that run on it (test_cluster_*.py) with their harness: the cluster's client and release helpers (cluster),
the runners that do a kubelet's part for the pods that must really run (hook_kubelet: the charts' Jobs;
serving: serving pods, pickers, routers, in network namespaces; kubelet: what both share), the pickers'
probes (pickers), the rollout watchers (rollouts), and NetworkPolicies enforced with connections tried from
pods' networks (network_policies).

etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok (fake GPU nodes whose pods turn
Running and Ready), the LeaderWorkerSet controller with its webhooks, and Volcano's scheduler and
PodGroup controller. Used by the `cluster` fixture in tests/conftest.py and by `make cluster-up`.
"""

from __future__ import annotations

from pathlib import Path

from tests.controlplane import components
from tests.controlplane.nodes import set_gpu_nodes
from tests.controlplane.processes import ControlPlane, ControlPlaneError

__all__ = ["ControlPlane", "ControlPlaneError", "set_gpu_nodes", "start"]


def start(workdir: Path) -> ControlPlane:
    """Start every component in WORKDIR; on any failure stop what was started and raise."""
    workdir.mkdir(parents=True, exist_ok=True)
    cp = ControlPlane(workdir)
    try:
        for component in (components.etcd, components.apiserver, components.crds, components.controllers,
                          components.kwok, components.leaderworkerset, components.volcano):
            component(cp)
    except BaseException:
        cp.stop()
        raise
    return cp
