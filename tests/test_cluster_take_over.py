"""A chart of plain LeaderWorkerSets, taken over by the post-renderer, installed and scaled up with real
helm on the local control plane; `fusion-helm status --lws` reports it under its original name."""

from __future__ import annotations

import json

import pytest

from tests.cluster import Cluster, owner, pods_by_lws, ready_pods, release
from tests.helm import Helm, fusion_helm
from tests.test_take_over import LWS_CHART

pytestmark = pytest.mark.cluster


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
