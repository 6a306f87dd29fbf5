"""A chart of plain LeaderWorkerSets, taken over by the post-renderer, installed and scaled up with real
helm on the local control plane; `fusion-helm status --lws` reports it under its original name. In the
role layout, LWS's own sample shape is kept whole: its Service still selects the leaders, its rollout rolls.
(The Service's EndpointSlices are not read: the test cluster's pods have loopback addresses, which the API
server refuses in them; docs/test-cluster.md.)"""

from __future__ import annotations

import json
from typing import Any

import kubernetes

from tests.controlplane.cluster import (
    LWS,
    PODGROUP,
    Cluster,
    eventually,
    owner,
    pods_by_lws,
    ready,
    ready_pods,
    release,
)
from tests.helm import Helm, fusion_helm
from tests.support import LWS_CHART, ROLLOUT_CHART


def test_a_taken_over_lws_installs_scales_up_and_reports_its_status(cluster: Cluster, helm: Helm) -> None:
    namespace = f"take-over-helm{helm.major}"
    with release(cluster, helm, "svc", namespace) as installed:
        def deploy(verb: str, replicas: int) -> None:
            extra = ["--create-namespace"] if verb == "install" else []
            installed.run(verb, "svc", LWS_CHART, "--set", f"replicas={replicas}", "--post-renderer",
                          "fusion-postrender", *extra)

        deploy("install", 1)
        # svc-big: 1 replica of 4 pods, through its per-replica LeaderWorkerSet; svc-small: LWS's own.
        before = pods_by_lws(ready_pods(cluster, namespace, 5))
        assert set(before) == {"svc-big-group-0", "svc-small"}

        deploy("upgrade", 2)
        after_pods = ready_pods(cluster, namespace, 9)
        after = pods_by_lws(after_pods)
        assert set(after) == {"svc-big-group-0", "svc-big-group-1", "svc-small"}
        # The chart's Service on the leaders by the LeaderWorkerSet's name, carried through: every replica's
        # leader, and nothing else.
        selector = cluster.core.read_namespaced_service("svc-big-leader", namespace).spec.selector
        listed = cluster.core.list_namespaced_pod(namespace, label_selector=",".join(
            f"{key}={value}" for key, value in selector.items())).items
        assert sorted(p.metadata.name for p in listed) == ["svc-big-group-0-0", "svc-big-group-1-0"]
        assert after["svc-big-group-0"] == before["svc-big-group-0"], "scaling up replaced a running replica"
        assert after["svc-small"] == before["svc-small"]
        assert {p.spec.scheduler_name for p in after_pods if owner(p).startswith("svc-big")} == {"volcano"}

        reported = fusion_helm("status", "--lws", "svc-big", "-n", namespace, "--kubeconfig",
                               cluster.kubeconfig, "-o", "json")
        status = json.loads(reported.stdout)
        assert (status["name"], status["kind"]) == ("svc-big", "LeaderWorkerSet")
        assert (status["status"]["replicas"], status["status"]["readyReplicas"]) == (2, 2)
        assert {c["type"]: c["status"] for c in status["status"]["conditions"]} == \
            {"Available": "True", "Progressing": "False"}


def test_a_leader_worker_set_kept_whole_keeps_its_service_and_rolls_out(cluster: Cluster, helm: Helm) -> None:
    namespace = f"take-over-role-helm{helm.major}"
    with release(cluster, helm, "sample", namespace) as installed:
        def deploy(verb: str, *values: str) -> None:
            extra = ["--create-namespace"] if verb == "install" else []
            installed.run(verb, "sample", ROLLOUT_CHART, "--post-renderer", "fusion-postrender", *values, *extra)

        deploy("install")
        pods = ready_pods(cluster, namespace, 12, owners={"sample"})  # 3 groups of 4, one LeaderWorkerSet
        [lws] = cluster.custom(LWS, namespace)
        assert lws["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] == {"maxUnavailable": 2, "maxSurge": 2,
                                                                                "partition": 0}  # the CRD's default
        assert lws["metadata"]["labels"]["fusioninfer.io/service"] == "sample"
        assert [o["metadata"]["name"] for o in cluster.custom(PODGROUP, namespace)] == ["sample"]
        assert {p.spec.scheduler_name for p in pods} == {"volcano"}
        leaders = {"sample-0", "sample-1", "sample-2"}
        assert selected_by_service(cluster, namespace, pods) == leaders

        reported = eventually("LWS to report every group ready", lambda: lws_status(cluster, namespace, ready=3))
        assert (reported["name"], reported["status"]["replicas"]) == ("sample", 3)
        assert {c["type"]: c["status"] for c in reported["status"]["conditions"]}["Available"] == "True"

        # A new image: the LWS controller rolls the groups under the carried rollout; the Service follows.
        deploy("upgrade", "--set", "image=nginxinc/nginx-unprivileged:1.28")
        rolled = eventually("every group to roll to the new image", lambda: rolled_pods(cluster, namespace),
                            timeout=180)
        assert {owner(p) for p in rolled} == {"sample"}
        assert not {p.metadata.uid for p in rolled} & {p.metadata.uid for p in pods}
        assert selected_by_service(cluster, namespace, rolled) == leaders


def selected_by_service(cluster: Cluster, namespace: str, pods: list[kubernetes.client.V1Pod]) -> set[str]:
    """The pods the chart's Service selects, as the API server lists them; asserted to be exactly those
    of PODS (the LeaderWorkerSet's) that carry every label of its selector."""
    selector = cluster.core.read_namespaced_service("sample-leader", namespace).spec.selector
    assert selector == {"leaderworkerset.sigs.k8s.io/name": "sample", "role": "leader"}
    listed = cluster.core.list_namespaced_pod(
        namespace, label_selector=",".join(f"{key}={value}" for key, value in selector.items())).items
    matching = {p.metadata.name for p in pods if selector.items() <= (p.metadata.labels or {}).items()}
    assert {p.metadata.name for p in listed} == matching
    return matching


def lws_status(cluster: Cluster, namespace: str, ready: int) -> dict[str, Any] | None:
    """`fusion-helm status --lws sample` once it reports READY groups ready (LWS updates it as they become so)."""
    reported = fusion_helm("status", "--lws", "sample", "-n", namespace, "--kubeconfig", cluster.kubeconfig,
                           "-o", "json")
    status: dict[str, Any] = json.loads(reported.stdout)
    return status if status["status"]["readyReplicas"] == ready else None


def rolled_pods(cluster: Cluster, namespace: str) -> list[kubernetes.client.V1Pod] | None:
    """All 12 pods, Ready, on the new image, none being deleted (the surge groups gone); else None."""
    pods = cluster.pods(namespace)
    done = len(pods) == 12 and all(ready(p) and p.metadata.deletion_timestamp is None
                                   and p.spec.containers[0].image.endswith(":1.28") for p in pods)
    return pods if done else None
