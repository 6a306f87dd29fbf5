"""The drain stage: an autoscaled role's pods keep serving a while after they are marked for deletion."""

from __future__ import annotations

from typing import Any

from fusion_helm.expand.pods import Pod, RoleTemplates
from tests.builders import render, requesting_cpu, role, service
from tests.expand import alone

SCALED = {"minReplicas": 1, "maxReplicas": 4}


def scaled(**container: Any) -> dict[str, Any]:
    spec = requesting_cpu(role("chat", "worker", **container))
    del spec["replicas"]
    return {**spec, "autoscaling": SCALED}


def test_the_stage_alone_drains_every_pod_of_an_autoscaled_role() -> None:
    """Leader and workers alike (the leader's engine needs its workers' ranks to the end); a fixed role's pods
    as they were."""
    service_model = alone.model(service(scaled(), role("fixed", "worker"), layout="role"))
    leader = {"spec": {"containers": [{"name": "engine", "lifecycle": {"postStart": {"exec": {"command": ["x"]}}}}]}}
    worker = {"spec": {"containers": [{"name": "ray"}], "terminationGracePeriodSeconds": 5}}
    fixed = {"spec": {"containers": [{"name": "engine"}]}}
    changed = alone.pods("drain", alone.facts(service_model), {
        "chat": RoleTemplates(size=2, leader=Pod(leader, None), worker=Pod(worker, None)),
        "fixed": RoleTemplates(size=1, worker=Pod(fixed, None))})
    chat = changed["chat"]
    assert chat.leader is not None
    assert chat.leader.template == {"spec": {"containers": [{"name": "engine", "lifecycle": {
        "postStart": {"exec": {"command": ["x"]}}, "preStop": {"sleep": {"seconds": 30}}}}],
        "terminationGracePeriodSeconds": 60}}
    assert chat.worker.template == {"spec": {"containers": [{"name": "ray", "lifecycle": {
        "preStop": {"sleep": {"seconds": 30}}}}], "terminationGracePeriodSeconds": 60}}
    assert changed["fixed"].worker.template == fixed


def test_an_autoscaled_role_s_pods_drain_before_they_stop() -> None:
    """An autoscaler removes replicas while they serve: each pod of one (a multi-node replica's workers too)
    keeps serving a while after it leaves the pool; a preStop of the user's own is kept."""
    own = scaled()
    own["template"]["spec"]["containers"][0]["lifecycle"] = {"preStop": {"exec": {"command": ["/drain.sh"]}}}
    own["template"]["spec"]["terminationGracePeriodSeconds"] = 300
    pod = render(service(own, layout="role"))["LeaderWorkerSet/svc-chat"]["spec"]["leaderWorkerTemplate"][
        "workerTemplate"]
    assert pod["spec"]["containers"][0]["lifecycle"] == {"preStop": {"exec": {"command": ["/drain.sh"]}}}
    assert pod["spec"]["terminationGracePeriodSeconds"] == 300
    fixed = render(service(role("chat", "worker"), layout="role"))["LeaderWorkerSet/svc-chat"]["spec"][
        "leaderWorkerTemplate"]
    assert "lifecycle" not in fixed["workerTemplate"]["spec"]["containers"][0]
