"""Autoscaling on the control plane: KEDA's operator and metrics server (v2.21.0, from the Go module proxy)
behind the API server's aggregation layer, a Prometheus it asks, and kube-controller-manager's HPA
controller scaling a LeaderWorkerSet through its scale subresource, whole groups at a time, down to zero
and back."""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml

from tests.cluster import PICKERS, Cluster, eventually, release
from tests.controlplane import components
from tests.controlplane.builds import shared_crd
from tests.controlplane.processes import free_port
from tests.helm import VALUES, Helm
from tests.pickers import kubeconfig_for, running, serving
from tests.serving import (
    HEALTH,
    SERVING,
    PickerEndpoints,
    ServingKubelet,
    completion,
    gateway,
    serving_values,
)
from tests.test_cluster_picker_availability import PICKER, SERVICE

pytestmark = pytest.mark.cluster
LWS = ("leaderworkerset.x-k8s.io", "v1", "leaderworkersets")
POD_MONITOR_CRD = "monitoring.coreos.com_podmonitors.yaml"


def test_a_prometheus_query_scales_a_leader_worker_set_by_whole_groups(keda: Cluster) -> None:
    """A ScaledObject whose query says 3 against a target of 1 per replica: the HPA KEDA makes scales the
    LeaderWorkerSet of two-pod groups from 1 to 3 replicas, 6 pods."""
    namespace = "elastic-keda"
    address = components.prometheus(keda.control_plane, namespace, [])
    keda.control_plane.apply([
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
         "metadata": {"name": "groups", "namespace": namespace},
         "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2, "workerTemplate": {
             "spec": {"containers": [{"name": "engine", "image": "engine"}]}}}}},
        {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
         "metadata": {"name": "groups", "namespace": namespace},
         "spec": {"scaleTargetRef": {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                                     "name": "groups"},
                  "minReplicaCount": 1, "maxReplicaCount": 5, "pollingInterval": 2,
                  "triggers": [{"type": "prometheus", "metricType": "AverageValue",
                                "metadata": {"serverAddress": address, "query": "vector(3)", "threshold": "1"}}]}}])
    custom = kubernetes.client.CustomObjectsApi(keda.api)

    def replicas() -> int:
        return int(custom.get_namespaced_custom_object(*LWS[:2], namespace, LWS[2], "groups")["spec"]["replicas"])

    eventually("the LeaderWorkerSet at 3 replicas", lambda: replicas() == 3, timeout=120)
    eventually("6 pods", lambda: len(keda.pods(namespace)) == 6)


def test_an_idle_leader_worker_set_stands_at_zero_and_wakes_when_the_signal_comes(keda: Cluster) -> None:
    """minReplicaCount 0: KEDA itself takes an idle LeaderWorkerSet to 0 groups (no pods) and back once
    the query passes its activation threshold; the HPA takes it from there."""
    namespace = "elastic-zero"
    address = components.prometheus(keda.control_plane, namespace, [])

    def objects(query: str) -> list[dict[str, Any]]:
        return [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
             "metadata": {"name": "groups", "namespace": namespace},
             "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2, "workerTemplate": {
                 "spec": {"containers": [{"name": "engine", "image": "engine"}]}}}}},
            {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
             "metadata": {"name": "groups", "namespace": namespace},
             "spec": {"scaleTargetRef": {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                                         "name": "groups"},
                      "minReplicaCount": 0, "maxReplicaCount": 4, "pollingInterval": 1, "cooldownPeriod": 1,
                      "triggers": [{"type": "prometheus", "metricType": "AverageValue", "metadata": {
                          "serverAddress": address, "query": query, "threshold": "1", "activationThreshold": "0"}}]}}]

    custom = kubernetes.client.CustomObjectsApi(keda.api)

    def replicas() -> int:
        return int(custom.get_namespaced_custom_object(*LWS[:2], namespace, LWS[2], "groups")["spec"]["replicas"])

    keda.control_plane.apply(objects("vector(0)"))
    eventually("the idle LeaderWorkerSet at 0", lambda: replicas() == 0, timeout=120)
    eventually("no pods", lambda: not keda.pods(namespace))
    keda.control_plane.apply(objects("vector(2)")[2:])
    eventually("the LeaderWorkerSet woken to 2", lambda: replicas() == 2, timeout=120)
    eventually("4 pods", lambda: len(keda.pods(namespace)) == 4)


ZERO_PROBE = {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 1, "failureThreshold": 60}
"""The engine's start budget: a minute (the picker holds requests that long, and two more minutes)."""
WAITING = 12
"""Requests sent while the role stands at zero."""


def elastic_values(tmp_path: Path, prometheus: str, **autoscaling: Any) -> Path:
    """Story 1 behind an llm-d-router picker whose pods run for real (two, as the chart's default), its
    worker scaled by KEDA on the rendered signals from the Prometheus at PROMETHEUS."""
    path = serving_values(VALUES / "story1-monolithic-qwen3-8b.yaml", tmp_path, endpointPicker={
        "generation": "llm-d-router", "podAnnotations": SERVING,
        # Prometheus scrapes without a token here (docs/monitoring.md, "The picker's metrics").
        "flags": {"metrics-endpoint-auth": "false"}})
    values = yaml.safe_load(path.read_text())
    worker = values["roles"][0]
    del worker["replicas"]
    worker["autoscaling"] = {"maxReplicas": 2, "prometheus": {"serverAddress": prometheus}, **autoscaling}
    engine = worker["template"]["spec"]["containers"][0]
    engine["startupProbe"] = ZERO_PROBE
    engine["readinessProbe"] = {**HEALTH, "periodSeconds": 1}
    values.update(layout="role", monitoring={"podMonitor": {"enabled": True}})
    path.write_text(yaml.safe_dump(values))
    return path


@contextlib.contextmanager
def pod_monitors(cluster: Cluster) -> Iterator[None]:
    """The Prometheus Operator's PodMonitor CRD, for the while: other tests show a cluster without it."""
    crd = shared_crd(POD_MONITOR_CRD)
    cluster.control_plane.kubectl("apply", "--server-side", "-f", str(crd))
    cluster.control_plane.established("podmonitors.monitoring.coreos.com")
    try:
        yield
    finally:
        cluster.control_plane.kubectl("delete", "--ignore-not-found", "--wait", "-f", str(crd), check=False)


def lws_replicas(cluster: Cluster, namespace: str, name: str) -> int | None:
    found = kubernetes.client.CustomObjectsApi(cluster.api).get_namespaced_custom_object(
        *LWS[:2], namespace, LWS[2], name)
    return found["spec"].get("replicas")


def test_requests_that_arrive_at_zero_wait_for_the_replica_they_wake(
        keda: Cluster, helm4: Helm, serving_kubelet: ServingKubelet, tmp_path: Path) -> None:
    """The worker stands at zero while idle; requests sent then are held by the pickers' flow control,
    their queue wakes the role through Prometheus and KEDA, and every one is answered once the replica is
    Ready. The same requests through a picker of the same configuration without flow control all fail at
    once."""
    helm, namespace = helm4, "elastic-wake"
    port = free_port()
    values = elastic_values(tmp_path, f"http://127.0.0.1:{port}", minReplicas=0)
    with pod_monitors(keda), release(keda, helm, SERVICE, namespace) as installed:
        installed.install(values)
        manifest = {f"{o['kind']}/{o['metadata']['name']}": o for o in installed.manifest()}
        monitors = [o for o in manifest.values() if o["kind"] == "PodMonitor"]
        components.prometheus(keda.control_plane, namespace, components.pod_monitor_scrapes(
            keda.control_plane, monitors), port=port)
        [lws] = [o["metadata"]["name"] for o in manifest.values() if o["kind"] == "LeaderWorkerSet"]
        eventually("the idle worker at zero", lambda: lws_replicas(keda, namespace, lws) == 0, timeout=120)
        eventually("no serving pod", lambda: not serving_kubelet.served(namespace) or all(
            pod.role != "inference" for pod in serving_kubelet.served(namespace)), timeout=60)
        with PickerEndpoints(keda, namespace, PICKER, tmp_path / "pickers") as endpoints, \
                gateway(f"@{endpoints.path}", tmp_path) as address:
            eventually("the gateway to know the pickers", lambda: len(endpoints.addresses) == PICKERS, timeout=120)
            model = "Qwen/Qwen3-8B"

            # Without flow control (the rendered configuration less its gate): a request finds no endpoint.
            [deployment] = [o for key, o in manifest.items() if key.startswith("Deployment/")]
            [configmap] = [o for key, o in manifest.items() if key.startswith("ConfigMap/") and key.endswith("-epp")]
            config = yaml.safe_load(next(iter(configmap["data"].values())))
            assert config["featureGates"] == ["flowControl"], config
            ungated = {key: value for key, value in config.items() if key not in ("featureGates", "flowControl")}
            plain = {**configmap, "data": {key: yaml.safe_dump(ungated) for key in configmap["data"]}}
            account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
            kubeconfig = kubeconfig_for(keda, namespace, account, tmp_path / "kubeconfig")
            (tmp_path / "plain").mkdir()
            with running(deployment, plain, namespace, kubeconfig, tmp_path / "plain", offset=100) as picker:
                serving(picker)
                with gateway(picker.grpc, tmp_path / "plain") as unqueued:
                    lost = [completion(unqueued, {"model": model, "prompt": "hi", "max_tokens": 4}, timeout=30)[0]
                            for _ in range(3)]
            assert all(status >= 500 for status in lost), lost
            assert lws_replicas(keda, namespace, lws) == 0

            # With it: every request waits, and is answered.
            started = time.monotonic()
            with ThreadPoolExecutor(WAITING) as pool:
                answers = list(pool.map(lambda i: completion(address, {"model": model, "prompt": f"hello {i}",
                                                                       "max_tokens": 4}, timeout=300),
                                        range(WAITING)))
            waited = time.monotonic() - started
        statuses = Counter(status for status, _, _ in answers)
        assert statuses == {200: WAITING}, (statuses, [body for status, _, body in answers if status != 200][:2])
        assert lws_replicas(keda, namespace, lws) == 1
        assert waited > 2, f"answered in {waited:.1f}s: the role was not at zero"
