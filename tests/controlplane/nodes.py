"""Fake GPU nodes, managed by kwok: they report `nvidia.com/gpu` and their pods turn Ready."""

from __future__ import annotations

import json
import time
from typing import Any

from tests.controlplane.processes import ControlPlane, ControlPlaneError

NODE_PREFIX = "gpu-node-"


def gpu_node(name: str, gpus: int) -> dict[str, object]:
    resources = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                     "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                "kubernetes.io/arch": "amd64", "type": "kwok"}},
        # Status is kept on create: it is how a kubelet registers its capacity, and what kwok reads.
        "status": {"capacity": resources, "allocatable": resources},
    }


def schedulable(node: dict[str, Any]) -> bool:
    """Ready, and the node lifecycle controller has lifted the taints a new node starts with."""
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in node.get("status", {}).get("conditions", []))
    return ready and not node["spec"].get("taints")


def set_gpu_nodes(cp: ControlPlane, count: int, gpus: int = 8, timeout: float = 60) -> list[str]:
    """Make the cluster's GPU nodes exactly COUNT nodes of GPUS each, all schedulable; return their names."""
    wanted = [f"{NODE_PREFIX}{i:02d}" for i in range(count)]
    existing = {n["metadata"]["name"] for n in cp.items("nodes") if n["metadata"]["name"].startswith(NODE_PREFIX)}
    extra = sorted(existing - set(wanted))
    if extra:
        cp.kubectl("delete", "node", "--wait=true", *extra)
    missing = [gpu_node(name, gpus) for name in wanted if name not in existing]
    if missing:
        cp.kubectl("create", "-f", "-", stdin="\n".join(json.dumps(node) for node in missing))
    deadline = time.monotonic() + timeout
    while True:
        ready = {n["metadata"]["name"] for n in cp.items("nodes") if schedulable(n)}
        if set(wanted) <= ready:
            return wanted
        if time.monotonic() > deadline:
            raise ControlPlaneError(f"nodes not Ready after {timeout:.0f}s: {sorted(set(wanted) - ready)}\n"
                                    f"{cp.tail('kwok')}")
        time.sleep(0.3)
