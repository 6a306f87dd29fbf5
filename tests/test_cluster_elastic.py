"""Autoscaling on the control plane: KEDA's operator and metrics server (v2.21.0, from the Go module proxy)
behind the API server's aggregation layer, a Prometheus it asks, and kube-controller-manager's HPA
controller scaling a LeaderWorkerSet through its scale subresource, whole groups at a time, down to zero
and back."""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest

from tests.cluster import Cluster, eventually
from tests.controlplane import components

pytestmark = pytest.mark.cluster
LWS = ("leaderworkerset.x-k8s.io", "v1", "leaderworkersets")


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
