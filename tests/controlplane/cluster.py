"""What cluster tests hold: the control plane, a Kubernetes client on it, and helm releases in it."""

from __future__ import annotations

import json
import subprocess
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import kubernetes
import pytest
import yaml

from fusion_helm.model.router import Router
from tests.controlplane import ControlPlane
from tests.controlplane.nodes import schedulable
from tests.helm import CHART, CRD_CHART, Helm, fusion_helm, values_args

T = TypeVar("T")

LWS = ("leaderworkerset.x-k8s.io", "v1", "leaderworkersets")
REPLICA_INDEX, GROUP_INDEX, ROLE_NAME = ("fusioninfer.io/replica-index", "leaderworkerset.sigs.k8s.io/group-index",
                                         "fusioninfer.io/role-name")
PODGROUP = ("scheduling.volcano.sh", "v1beta1", "podgroups")
# 8-GPU kwok nodes the session starts with: enough for the largest story (80 GPUs).
GPU_NODES = 10
ONE_HELM = pytest.mark.parametrize("helm", [4], ids=["helm4"], indirect=True)
"""For a long test of what the controllers or the picker do, which helm only installs (each helm's
install and upgrade paths are the other tests'): helm 4 alone."""
PICKERS = Router.DEFAULT_PICKER_REPLICAS
"""The endpoint pickers' pods a router runs unless it says otherwise."""
VOLCANO_SETTLE = 3.0
"""Seconds for six of Volcano\'s 500 ms scheduling periods: after them, nothing else will be placed."""


def eventually(what: str, probe: Callable[[], T | None], timeout: float = 90, interval: float = 0.5,
               describe: Callable[[], str] | None = None) -> T:
    """Poll PROBE until it returns something truthy; fail naming WHAT (and DESCRIBE's account of the state)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            state = f"; {describe()}" if describe else ""
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}{state}")
        time.sleep(interval)


@dataclass
class Cluster:
    control_plane: ControlPlane
    api: kubernetes.client.ApiClient

    @property
    def kubeconfig(self) -> Path:
        return self.control_plane.kubeconfig

    @property
    def core(self) -> kubernetes.client.CoreV1Api:
        return kubernetes.client.CoreV1Api(self.api)

    @property
    def apps(self) -> kubernetes.client.AppsV1Api:
        return kubernetes.client.AppsV1Api(self.api)

    def custom(self, resource: tuple[str, str, str], namespace: str) -> list[dict[str, Any]]:
        group, version, plural = resource
        listed = kubernetes.client.CustomObjectsApi(self.api).list_namespaced_custom_object(
            group, version, namespace, plural)
        items: list[dict[str, Any]] = listed["items"]
        return items

    def pods(self, namespace: str) -> list[kubernetes.client.V1Pod]:
        return list(self.core.list_namespaced_pod(namespace).items)

    def on_server(self, namespace: str, objects: list[dict[str, Any]]) -> list[str]:
        """Which of OBJECTS the API server has (kind/name each), in NAMESPACE unless they name another."""
        return self.control_plane.kubectl("get", "--namespace", namespace, "-o", "name", "--ignore-not-found",
                                          "-f", "-", stdin=yaml.safe_dump_all(objects)).stdout.split()

    def leftovers(self, namespace: str) -> dict[str, list[str]]:
        """The LeaderWorkerSets, StatefulSets, PodGroups and pods still in NAMESPACE."""
        found = {
            "LeaderWorkerSet": [o["metadata"]["name"] for o in self.custom(LWS, namespace)],
            "StatefulSet": [s.metadata.name for s in self.apps.list_namespaced_stateful_set(namespace).items],
            "PodGroup": [o["metadata"]["name"] for o in self.custom(PODGROUP, namespace)],
            "Pod": [p.metadata.name for p in self.pods(namespace)],
        }
        return {kind: names for kind, names in found.items() if names}


def ready(pod: kubernetes.client.V1Pod) -> bool:
    conditions = pod.status.conditions or []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


@dataclass
class Release:
    """One `helm install` of the chart, through the post-renderer, into its own namespace."""

    cluster: Cluster
    helm: Helm
    name: str
    namespace: str

    def run(self, *args: str | Path, check: bool = True) -> str:
        result = self.helm.run(*args, "--namespace", self.namespace, "--kubeconfig", self.cluster.kubeconfig,
                               check=check)
        return result.stdout if result.returncode == 0 else ""

    def exists(self) -> bool:
        return bool(self.run("status", self.name, check=False))

    def install(self, *values: Path, verb: str = "install") -> None:
        extra = ["--create-namespace"] if verb == "install" else []
        self.run(verb, self.name, CHART, *values_args(*values), "--post-renderer", "fusion-postrender", *extra)

    def render(self, *values: Path) -> str:
        """`helm template` of the chart as this release, without the post-renderer."""
        return self.helm.run("template", self.name, CHART, *values_args(*values), "--namespace",
                             self.namespace).stdout

    def manifest(self) -> list[dict[str, Any]]:
        """The objects helm applied (post-rendered), as helm recorded them."""
        return [doc for doc in yaml.safe_load_all(self.run("get", "manifest", self.name)) if doc]

    def uninstall(self) -> None:
        self.run("uninstall", self.name, "--wait")


@contextmanager
def release(cluster: Cluster, helm: Helm, name: str, namespace: str) -> Iterator[Release]:
    """A release that is uninstalled afterwards, and whose pods are gone before the next test runs:
    cluster tests share the GPU nodes."""
    installed = Release(cluster, helm, name, namespace)
    try:
        yield installed
    finally:
        if installed.exists():
            installed.uninstall()
        eventually(f"the pods of {namespace}/{name} to be deleted", lambda: not cluster.pods(namespace))


def install_crd_chart(cluster: Cluster, helm: Helm, *args: str, check: bool = True
                      ) -> subprocess.CompletedProcess[str]:
    """The InferenceService CRD's chart, as docs/lifecycle.md has a cluster install and upgrade it."""
    # Helm 4 applies server-side; a CRD an earlier field manager applied (kubectl, Helm 3's crds/) conflicts
    force = ["--server-side=true", "--force-conflicts"] if helm.major >= 4 else []
    return helm.run("upgrade", "--install", "fusioninfer-crds", CRD_CHART, "--take-ownership", *force, "--namespace",
                    "default", "--kubeconfig", cluster.kubeconfig, "--wait", *args, check=check)


def expected_pods(values: Path) -> int:
    roles = yaml.safe_load(values.read_text())["roles"]
    return sum(role["replicas"] * role.get("multinode", {}).get("nodeCount", 1) for role in roles)


def owner(pod: kubernetes.client.V1Pod) -> str:
    """The LeaderWorkerSet a pod belongs to (a label LWS's pod webhook sets)."""
    name: str = pod.metadata.labels["leaderworkerset.sigs.k8s.io/name"]
    return name


def ready_pods(cluster: Cluster, namespace: str, want: int, owners: set[str] | None = None, timeout: float = 90
               ) -> list[kubernetes.client.V1Pod]:
    """Wait for exactly WANT pods in NAMESPACE, all Ready (and all of the LeaderWorkerSets OWNERS), for up to
    TIMEOUT seconds."""
    def probe() -> list[kubernetes.client.V1Pod] | None:
        pods = cluster.pods(namespace)
        settled = len(pods) == want and all(map(ready, pods))
        return pods if settled and (owners is None or {owner(p) for p in pods} == owners) else None
    return eventually(f"{want} Ready pods in {namespace}", probe, timeout=timeout,
                      describe=lambda: unready(cluster, namespace))


def unready(cluster: Cluster, namespace: str) -> str:
    """Why pods are not Ready: each such pod's phase, node and conditions, the nodes that take no pods
    (not Ready, or still tainted), and the end of kwok's log (it makes nodes and pods Ready)."""
    def conditions(pod: kubernetes.client.V1Pod) -> str:
        return ", ".join(f"{c.type}={c.status}{f' ({c.reason})' if c.reason else ''}"
                         for c in pod.status.conditions or [])
    pods = [f"{p.metadata.name} {p.status.phase} on {p.spec.node_name or '-'}: {conditions(p)}"
            for p in cluster.pods(namespace) if not ready(p)]
    nodes = [f"{n['metadata']['name']} {n.get('status', {}).get('conditions', [])} "
             f"addresses {n.get('status', {}).get('addresses', [])}"
             for n in cluster.control_plane.items("nodes") if not schedulable(n)]
    kwok = cluster.control_plane.tail("kwok", 15)
    return f"{len(pods)} pods not Ready: {pods[:8]}; nodes not schedulable: {nodes}; kwok's log ends:\n{kwok}"


def tasks(pods: list[kubernetes.client.V1Pod]) -> dict[str, list[kubernetes.client.V1Pod]]:
    """Pods by replica, ``<role>-<index>``: the index is our label in the replica layout, LWS's group
    index in the role layout."""
    by_task: dict[str, list[kubernetes.client.V1Pod]] = defaultdict(list)
    for pod in pods:
        labels = pod.metadata.labels or {}
        index = labels.get(REPLICA_INDEX, labels.get(GROUP_INDEX))
        by_task[f"{labels.get(ROLE_NAME)}-{index}" if index is not None else pod.metadata.name].append(pod)
    return dict(by_task)


def scaled(values: Path, replicas: dict[str, int], into: Path) -> Path:
    spec = yaml.safe_load(values.read_text())
    for role in spec["roles"]:
        role["replicas"] = replicas.get(role["name"], role["replicas"])
    into.write_text(yaml.safe_dump(spec))
    return into


def pods_by_lws(pods: list[kubernetes.client.V1Pod]) -> dict[str, dict[str, str]]:
    """LeaderWorkerSet → {pod name: pod UID}."""
    found: dict[str, dict[str, str]] = defaultdict(dict)
    for pod in pods:
        found[owner(pod)][pod.metadata.name] = pod.metadata.uid
    return dict(found)


def bound_replicas(cluster: Cluster, namespace: str) -> set[str]:
    return {task for task, members in tasks(cluster.pods(namespace)).items() if any(p.spec.node_name for p in members)}


def volcano_decided(cluster: Cluster, namespace: str) -> bool:
    """Volcano has judged the PodGroup: it runs (its atomic minimum is placed) or is unschedulable."""
    for podgroup in cluster.custom(PODGROUP, namespace):
        status = podgroup.get("status", {})
        unschedulable = any(c["type"] == "Unschedulable" and c["status"] == "True"
                            for c in status.get("conditions", []))
        if status.get("phase") != "Running" and not unschedulable:
            return False
    return True


def planned(manifest: list[dict[str, Any]], *cluster: str | Path) -> dict[str, Any]:
    """`fusion-helm plan -o json` of the objects helm applied (one service), on the CLUSTER it is given
    (``--gpus 64``, ``--topology FILE``)."""
    result = fusion_helm("plan", "-", *cluster, "-o", "json", stdin=yaml.safe_dump_all(manifest))
    [service] = json.loads(result.stdout)["services"]
    return dict(service)


def outcomes(service: dict[str, Any]) -> dict[str, str]:
    """Replica → what the plan says of it: placed, waits or undecided."""
    return {r["name"]: r["outcome"] for role in service["roles"] for r in role["replicas"]}


def holds_to_plan(service: dict[str, Any], bound: set[str]) -> None:
    """The replicas the scheduler bound are what the plan promised: every one it says is placed, none it
    says waits, and of each role as many as it says (the undecided ones in whatever order came)."""
    said = outcomes(service)
    assert {name for name, outcome in said.items() if outcome == "placed"} <= bound, (said, bound)
    assert not {name for name, outcome in said.items() if outcome == "waits"} & bound, (said, bound)
    for role in service["roles"]:
        count = sum(r["name"] in bound for r in role["replicas"])
        assert role["placed"]["min"] <= count <= role["placed"]["max"], (role["name"], role["placed"], bound)
