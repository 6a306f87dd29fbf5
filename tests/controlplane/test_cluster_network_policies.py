"""NetworkPolicies enforced for real on the test control plane: SIG Network's kube-network-policies decides each
connection a pod makes (tests/controlplane/network_policies.py). A pod of another namespace reaches a served
engine's port; a default-deny ingress policy in the engine's namespace refuses it (its first packet dropped: the
client times out), and so it stays while the enforcer runs; with the enforcer stopped, the same connection goes
through, the policies unchanged; an allow rule naming the client's namespace, its pod and the port lets it through
again, and only it: a pod of that namespace without the label, and another port, stay refused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.controlplane.cluster import Cluster, eventually
from tests.controlplane.hook_kubelet import SERVICE_LABEL
from tests.controlplane.network_policies import Enforcer, Outcome, connect, http_get, network_pod, ready
from tests.controlplane.nodes import NODE_PREFIX
from tests.controlplane.serving import SERVING, ServedPod, ServingKubelet

SERVED, CLIENTS = "netpol-served", "netpol-clients"
ENGINE_PORT = 8000
OTHER_PORT = 8001
"""Where nothing listens in the engine's pod: a connection there allowed is reset, one refused times out."""


def engine_pod() -> dict[str, Any]:
    """A serving pod whose engine (the simulator, tests/controlplane/serving.py) serves on ENGINE_PORT; Ready once
    it answers."""
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "engine", "namespace": SERVED, "labels": {SERVICE_LABEL: "netpol", "app": "engine"},
                     "annotations": SERVING},
        "spec": {"nodeName": f"{NODE_PREFIX}01", "terminationGracePeriodSeconds": 0, "containers": [{
            "name": "vllm", "image": "vllm/vllm-openai:v0.32.0", "command": ["vllm", "serve", "tiny"],
            "args": ["--port", str(ENGINE_PORT)], "ports": [{"containerPort": ENGINE_PORT, "name": "http"}],
            "readinessProbe": {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 1}}]}}


def policy(name: str, ingress: list[dict[str, Any]]) -> dict[str, Any]:
    """A NetworkPolicy of the engine's namespace over its every pod, for ingress, allowing INGRESS."""
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": SERVED},
            "spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": ingress}}


@pytest.fixture
def namespaces(cluster: Cluster) -> Iterator[None]:
    cluster.control_plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {
        "team": team}}} for name, team in ((SERVED, "served"), (CLIENTS, "clients"))])
    try:
        yield
    finally:
        cluster.control_plane.kubectl("delete", "namespace", "--wait=false", SERVED, CLIENTS)
        eventually("the test's pods to be gone", lambda: not (cluster.pods(SERVED) or cluster.pods(CLIENTS)),
                   interval=0.2)


def test_a_default_deny_refuses_another_namespace_s_pod_and_an_allow_rule_admits_it(
        cluster: Cluster, serving_kubelet: ServingKubelet, network_policies: Enforcer, namespaces: None) -> None:
    cluster.control_plane.apply([engine_pod()])
    client = network_pod(serving_kubelet, CLIENTS, "client", {"role": "client"}, node=f"{NODE_PREFIX}02")
    stranger = network_pod(serving_kubelet, CLIENTS, "stranger", {"role": "other"}, node=f"{NODE_PREFIX}02")
    engine = eventually("the engine Ready", lambda: _engine(cluster, serving_kubelet), interval=0.1)
    url = f"http://{engine.address}:{ENGINE_PORT}/health"
    network_policies.sync()
    assert http_get(client, url) == (Outcome.CONNECTED, 200)  # no policy: every pod reaches it
    assert connect(client, engine.address, OTHER_PORT) is Outcome.REFUSED  # reached, nothing listens

    cluster.control_plane.apply([policy("default-deny", [])])
    network_policies.sync()
    assert connect(client, engine.address, ENGINE_PORT) is Outcome.TIMED_OUT
    with network_policies.stopped():  # the policy in place, nothing enforcing it
        assert http_get(client, url) == (Outcome.CONNECTED, 200)
    network_policies.sync()
    assert connect(client, engine.address, ENGINE_PORT) is Outcome.TIMED_OUT, network_policies.tail()

    cluster.control_plane.apply([policy("clients-to-the-engine", [{
        "from": [{"namespaceSelector": {"matchLabels": {"team": "clients"}},
                  "podSelector": {"matchLabels": {"role": "client"}}}],
        "ports": [{"protocol": "TCP", "port": ENGINE_PORT}]}])])
    network_policies.sync()
    assert http_get(client, url) == (Outcome.CONNECTED, 200), network_policies.tail()
    assert connect(stranger, engine.address, ENGINE_PORT) is Outcome.TIMED_OUT
    assert connect(client, engine.address, OTHER_PORT) is Outcome.TIMED_OUT


def _engine(cluster: Cluster, kubelet: ServingKubelet) -> ServedPod | None:
    if not ready(cluster.control_plane, SERVED, "engine"):
        return None
    with kubelet.lock:
        return kubelet.pods.get(f"{SERVED}/engine")
