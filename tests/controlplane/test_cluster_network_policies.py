"""NetworkPolicies enforced for real on the test control plane: SIG Network's kube-network-policies decides each
connection a pod makes (tests/controlplane/network_policies.py). A pod of another namespace reaches a served
engine's port; a default-deny ingress policy in the engine's namespace refuses it (its first packet dropped: the
client times out), and so it stays while the enforcer runs; with the enforcer stopped, the same connection goes
through, the policies unchanged; an allow rule naming the client's namespace, its pod and the port lets it through
again, and only it: a pod of that namespace without the label, and another port, stay refused."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fusion_helm.base.labels import replica_index
from tests.builders import every_bootstrap, role
from tests.controlplane.cluster import PICKERS, Cluster, eventually, ready_pods, release
from tests.controlplane.hook_kubelet import SERVICE_LABEL
from tests.controlplane.network_policies import Enforcer, Outcome, connect, http_get, network_pod, ready
from tests.controlplane.nodes import NODE_PREFIX
from tests.controlplane.serving import NETWORK_ONLY, SERVING, ServedPod, ServingKubelet
from tests.helm import Helm

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


# -- The policies the chart renders, enforced: a connectivity matrix per layout ------------------------------

NETWORK_ALONE = {**SERVING, NETWORK_ONLY[0]: NETWORK_ONLY[1]}
"""The release's pods each get a network and an address and turn Ready, running nothing: a connection the
policies admit is answered by a reset (nothing listens), one they refuse times out."""
GATEWAY_NAMESPACE, OUTSIDE = "reach-gateway", "reach-outside"
ALLOWED, REFUSED = Outcome.REFUSED, Outcome.TIMED_OUT
RAY_HEAD, SERVING_PORT, NIXL_SIDE_CHANNEL, SGLANG_ROUTER_PORT = 6379, 8000, 5600, 30000
KV_EVENTS, KV_REPLAY = 5557, 5558


def network_alone(values: dict[str, Any]) -> dict[str, Any]:
    """VALUES whose every pod — serving, picker, frontend — runs as a network alone, without hooks."""
    for given in values["roles"]:
        if given["componentType"] == "router":
            given.setdefault("endpointPicker", {})["podAnnotations"] = NETWORK_ALONE
        else:
            given["template"].setdefault("metadata", {})["annotations"] = NETWORK_ALONE
    return {**values, "hooks": {"enabled": False}}


@contextlib.contextmanager
def installed(cluster: Cluster, helm: Helm, kubelet: ServingKubelet, values: dict[str, Any], namespace: str,
              tmp_path: Path, pods: int) -> Iterator[dict[str, list[ServedPod]]]:
    """VALUES installed in NAMESPACE, its PODS each with a network: the pods by role, leaders first."""
    path = tmp_path / f"{namespace}.yaml"
    path.write_text(yaml.safe_dump(network_alone(values)))
    with release(cluster, helm, "reach", namespace) as made:
        made.install(path)
        ready_pods(cluster, namespace, pods)

        def by_role() -> dict[str, list[ServedPod]] | None:
            served = kubelet.served(namespace)
            if len(served) < pods:
                return None
            roles: dict[str, list[ServedPod]] = {}
            for pod in sorted(served, key=lambda p: (replica_index(p.labels) or "", p.labels.get(WORKER, ""), p.key)):
                roles.setdefault(pod.labels[ROLE], []).append(pod)
            return roles

        yield eventually(f"the pods of {namespace} with their networks", by_role, interval=0.2)


ROLE, WORKER = "fusioninfer.io/role-name", "leaderworkerset.sigs.k8s.io/worker-index"


def group(pods: list[ServedPod], index: int) -> tuple[ServedPod, ServedPod]:
    """Replica INDEX's leader and worker."""
    [leader, worker] = [pod for pod in pods if replica_index(pod.labels) == str(index)]
    return leader, worker


@pytest.fixture(scope="module")
def probes(cluster: Cluster, serving_kubelet: ServingKubelet) -> Iterator[dict[str, ServedPod]]:
    """A pod of the shared Gateway's namespace (its proxies) and one of a namespace of nobody's."""
    cluster.control_plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
                                 for name in (GATEWAY_NAMESPACE, OUTSIDE)])
    try:
        yield {"gateway": network_pod(serving_kubelet, GATEWAY_NAMESPACE, "proxy"),
               "outsider": network_pod(serving_kubelet, OUTSIDE, "stranger")}
    finally:
        cluster.control_plane.kubectl("delete", "namespace", "--wait=false", "--ignore-not-found", GATEWAY_NAMESPACE,
                                      OUTSIDE)


def test_a_multi_node_service_on_a_shared_gateway_admits_its_gateway_its_picker_and_each_group_its_own(
        cluster: Cluster, helm4: Helm, serving_kubelet: ServingKubelet, network_policies: Enforcer,
        probes: dict[str, ServedPod], tmp_path: Path) -> None:
    """Ray's and vLLM's own multi-node bootstraps, two replicas of Ray's: the Gateway's namespace and the picker
    reach the leaders' serving port and nothing else; a replica's pods reach each other's every port, and no
    other replica's or role's; another namespace reaches nothing."""
    ray, native = every_bootstrap()[:2]
    values = {"name": "multi", "roles": [{**ray, "replicas": 2}, native, {
        "name": "router", "componentType": "router", "sharedGateway": {"name": "gw", "namespace": GATEWAY_NAMESPACE},
        "modelNames": ["m"]}]}
    namespace = "reach-multi"
    with installed(cluster, helm4, serving_kubelet, values, namespace, tmp_path, 6 + PICKERS) as roles:
        (leader, worker), (_, other_worker) = group(roles["ray"], 0), group(roles["ray"], 1)
        _, native_worker = group(roles["vllm"], 0)
        picker = roles["router"][0]
        network_policies.sync()
        matrix = [
            ("the Gateway's pods", probes["gateway"], leader, SERVING_PORT, ALLOWED),
            ("the picker", picker, leader, SERVING_PORT, ALLOWED),
            ("the replica's worker, Ray's head", worker, leader, RAY_HEAD, ALLOWED),
            ("the leader, its worker", leader, worker, RAY_HEAD, ALLOWED),
            ("another namespace", probes["outsider"], leader, SERVING_PORT, REFUSED),
            ("the Gateway's pods, Ray's head", probes["gateway"], leader, RAY_HEAD, REFUSED),
            ("the picker, Ray's head", picker, leader, RAY_HEAD, REFUSED),
            ("another replica's worker", other_worker, leader, RAY_HEAD, REFUSED),
            ("another role's worker", native_worker, leader, RAY_HEAD, REFUSED),
        ]
        assert reach(matrix) == wanted(matrix), network_policies.tail()
        # Without the enforcer, the same policies in place, every one of them is reached.
        with network_policies.stopped():
            assert set(reach(matrix).values()) == {ALLOWED}, reach(matrix)


def test_prefill_and_decode_reach_each_other_the_clients_the_decoders_and_a_frontend_its_pods(
        cluster: Cluster, helm4: Helm, serving_kubelet: ServingKubelet, network_policies: Enforcer,
        probes: dict[str, ServedPod], tmp_path: Path) -> None:
    """A prefill/decode service behind its own Gateway (its namespace's pods), the decoders' sidecar in front,
    routed by the engines' KV-cache events (precise-prefix-cache): the decoders reach the prefill pods (the
    sidecar's request, the KV transfer), the namespace's pods the pool's port, the pickers each engine's event
    and replay sockets, which nothing else reaches; and a frontend's service: the frontend reaches its pods,
    the namespace's pods the frontend."""
    precise = {"image": "vllm/vllm-openai:v0.19.0"}  # the first vLLM with the pickers' render server
    pd = {"name": "pd", "roles": [role("prefill", "prefiller", **precise), role("decode", "decoder", **precise), {
        "name": "router", "componentType": "router", "httproute": {"parentRefs": [{"name": "gw"}]},
        "strategy": "precise-prefix-cache"}]}
    container = {"name": "router", "image": "lmsysorg/sgl-model-gateway:v0.2.1"}
    frontend = {"name": "lb", "componentType": "frontend", "frontend": {"kind": "sglang-router"}, "replicas": 1,
                "template": {"spec": {"containers": [container]}}}
    fronted = {"name": "fronted", "roles": [role("w", "worker"), frontend]}
    namespace = "reach-pd"
    with installed(cluster, helm4, serving_kubelet, pd, namespace, tmp_path, 2 + PICKERS) as roles, \
            installed(cluster, helm4, serving_kubelet, fronted, f"{namespace}-fronted", tmp_path, 2) as front:
        [prefill], [decode] = roles["prefill"], roles["decode"]
        picker = roles["router"][0]
        client = network_pod(serving_kubelet, namespace, "client")  # the own Gateway's pods, and the clients
        [worker], [router] = front["w"], front["lb"]
        network_policies.sync()
        matrix = [
            ("the decoder, the prefill engine", decode, prefill, SERVING_PORT, ALLOWED),
            ("the decoder, the KV side channel", decode, prefill, NIXL_SIDE_CHANNEL, ALLOWED),
            ("the namespace's pods, the pool's port", client, decode, SERVING_PORT, ALLOWED),
            ("the namespace's pods, the KV side channel", client, prefill, NIXL_SIDE_CHANNEL, REFUSED),
            ("the picker, the prefill engine's KV events", picker, prefill, KV_EVENTS, ALLOWED),
            ("the picker, the decode engine's KV event replay", picker, decode, KV_REPLAY, ALLOWED),
            ("the namespace's pods, the KV events", client, decode, KV_EVENTS, REFUSED),
            ("the decoder, the prefill engine's KV event replay", decode, prefill, KV_REPLAY, ALLOWED),
            ("another namespace, the decoders", probes["outsider"], decode, SERVING_PORT, REFUSED),
            ("the frontend, its pods", router, worker, SERVING_PORT, ALLOWED),
            ("another namespace, the frontend", probes["outsider"], router, SGLANG_ROUTER_PORT, REFUSED),
            ("another service's pods, the frontend's pods", decode, worker, SERVING_PORT, REFUSED),
        ]
        try:
            assert reach(matrix) == wanted(matrix), network_policies.tail()
        finally:
            cluster.core.delete_namespaced_pod("client", namespace, grace_period_seconds=0)


Connection = tuple[str, ServedPod, ServedPod, int, Outcome]
"""What is tried, from which pod, to which pod and port, and what the policies should make of it."""


def reach(matrix: list[Connection]) -> dict[str, Outcome]:
    """Each connection of MATRIX, tried: reached (a reset: nothing listens) or refused (no answer)."""
    return {what: connect(source, target.address, port) for what, source, target, port, _ in matrix}


def wanted(matrix: list[Connection]) -> dict[str, Outcome]:
    return {what: outcome for what, _, _, _, outcome in matrix}
