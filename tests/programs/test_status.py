"""Each role's ComponentStatus from its pods, and the status subresource written from it."""

from __future__ import annotations

from typing import Any

from fusion_helm.base.kinds import JOB, LEADER_WORKER_SET, SCALED_OBJECT
from fusion_helm.programs.status import (
    ComponentStatus,
    Phase,
    Workloads,
    component_statuses,
    reads,
    role_shapes,
    rolling,
    rollouts,
    service_status,
    signals_read,
    status_object,
    taken_over_status,
    taken_over_table,
    to_table,
    weights,
)
from tests.builders import REQUESTS_CPU, render, role, service

ROLES = role_shapes(service(role("prefill", "prefiller"), role("decode", replicas=2, nodes=2))["spec"])


def statuses_of(pods: list[dict[str, Any]]) -> dict[str, ComponentStatus]:
    return component_statuses("svc", ROLES, pods)


def pod(role_name: str, index: int, worker: int = 0, *, node: str | None = "n", ready: bool = True,
        waiting: str | None = None, phase: str = "Running") -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase, "conditions": [{"type": "Ready", "status": str(ready)}]}
    if waiting:
        status["containerStatuses"] = [{"name": "vllm", "state": {"waiting": {"reason": waiting}}}]
    return {"metadata": {"name": f"svc-{role_name}-{index}-0-{worker}",
                         "labels": {"fusioninfer.io/service": "svc", "fusioninfer.io/role-name": role_name,
                                    "fusioninfer.io/replica-index": str(index)}},
            "spec": {"nodeName": node} if node else {}, "status": status}


def test_a_replica_is_ready_only_when_all_its_pods_are() -> None:
    pods = [pod("prefill", 0), pod("decode", 0, 0), pod("decode", 0, 1), pod("decode", 1, 0),
            pod("decode", 1, 1, ready=False)]
    statuses = statuses_of(pods)
    assert statuses["prefill"].to_manifest() == {"desiredReplicas": 1, "readyReplicas": 1, "nodesPerReplica": 1,
                                                 "totalPods": 1, "readyPods": 1, "phase": "Running"}
    assert statuses["decode"].to_manifest() == {"desiredReplicas": 2, "readyReplicas": 1, "nodesPerReplica": 2,
                                                "totalPods": 4, "readyPods": 3, "phase": "Deploying"}


def test_phases() -> None:
    def phase(*pods: dict[str, Any]) -> Phase:
        return statuses_of(list(pods))["decode"].phase
    assert phase() is Phase.PENDING
    assert phase(pod("decode", 0, node=None, ready=False)) is Phase.PENDING
    assert phase(pod("decode", 0, ready=False)) is Phase.DEPLOYING
    assert phase(*(pod("decode", i, w) for i in (0, 1) for w in (0, 1))) is Phase.RUNNING
    assert phase(pod("decode", 0, ready=False, waiting="CrashLoopBackOff")) is Phase.FAILED
    assert phase(pod("decode", 0, ready=False, phase="Failed")) is Phase.FAILED


def test_other_services_and_removed_replicas_do_not_count() -> None:
    other = pod("decode", 0)
    other["metadata"]["labels"]["fusioninfer.io/service"] = "other"
    statuses = statuses_of([other, pod("decode", 2), pod("decode", 3)])
    assert statuses["decode"].ready_pods == 0


def test_the_ready_condition() -> None:
    running = statuses_of([pod("prefill", 0)] + [pod("decode", i, w) for i in (0, 1) for w in (0, 1)])
    status = status_object(running, 3, "2026-01-02T00:00:00Z")
    assert "observedGeneration" not in status  # the conditions carry it (Helm 4's --wait reads a top-level one)
    assert status["conditions"] == [{"type": "Ready", "status": "True", "reason": "AllComponentsRunning",
                                     "message": "every replica of every role is ready", "observedGeneration": 3,
                                     "lastTransitionTime": "2026-01-02T00:00:00Z"}]
    # still ready later: the transition time stays
    again = status_object(running, 3, "2026-01-03T00:00:00Z", status["conditions"])
    assert again["conditions"][0]["lastTransitionTime"] == "2026-01-02T00:00:00Z"
    assert again["components"]["decode"]["lastUpdateTime"] == "2026-01-03T00:00:00Z"

    failing = statuses_of([pod("prefill", 0, ready=False, waiting="ImagePullBackOff")])
    [condition] = status_object(failing, 4, "2026-01-04T00:00:00Z", status["conditions"])["conditions"]
    assert (condition["status"], condition["reason"], condition["lastTransitionTime"]) == (
        "False", "ComponentFailed", "2026-01-04T00:00:00Z")
    assert condition["message"] == "prefill: pod svc-prefill-0-0-0 container vllm: ImagePullBackOff"


def test_the_table() -> None:
    statuses = statuses_of([pod("prefill", 0)])
    assert to_table("svc", statuses) == (
        "InferenceService svc\n"
        "ROLE     PHASE    READY REPLICAS  NODES/REPLICA  READY PODS\n"
        "prefill  Running  1/1             1              1/1\n"
        "decode   Pending  0/2             2              0/4\n")


# The role layout: pods carry LWS's group index, and the count and rollout are the LeaderWorkerSet's.
ROLE_LAYOUT = service(role("prefill", "prefiller"),
                      {**role("decode", nodes=2, **REQUESTS_CPU), "autoscaling": {"maxReplicas": 4}}, layout="role")
del ROLE_LAYOUT["spec"]["roles"][1]["replicas"]  # the autoscaler owns it
ROLE_LAYOUT["metadata"]["generation"] = 2


def group_pod(role_name: str, group: int, worker: int = 0, ready: bool = True) -> dict[str, Any]:
    made = pod(role_name, group, worker, ready=ready)
    labels = made["metadata"]["labels"]
    labels["leaderworkerset.sigs.k8s.io/group-index"] = labels.pop("fusioninfer.io/replica-index")
    return made


def role_lws(role_name: str, replicas: int, updated: int, *, partition: int = 0, updating: bool = False,
             seen: bool = True) -> dict[str, Any]:
    """The role's LeaderWorkerSet as the expansion makes it, as the API server returns it (replicas
    set: by the autoscaler, else LWS's default) with the status the LWS controller writes."""
    lws = render(ROLE_LAYOUT)[f"LeaderWorkerSet/svc-{role_name}"]
    lws["metadata"]["generation"] = 3
    lws["spec"]["replicas"] = replicas
    if partition:
        lws["spec"]["rolloutStrategy"] = {"rollingUpdateConfiguration": {"partition": partition}}
    conditions = [{"type": "UpdateInProgress", "status": "True"}] if updating else []
    lws["status"] = {"observedGeneration": 3 if seen else 2, "updatedReplicas": updated, "conditions": conditions}
    return lws


def test_role_layout_pods_count_by_group_and_the_lws_says_how_many() -> None:
    pods = [group_pod("prefill", 0)] + [group_pod("decode", g, w) for g in range(3) for w in range(2)]
    # The autoscaler raised decode to 3: the LeaderWorkerSet, not the spec, has the count.
    statuses, body = service_status(ROLE_LAYOUT, pods, "T",
                                    Workloads(leader_worker_sets=(role_lws("prefill", 1, 1), role_lws("decode", 3, 3))))
    assert statuses["decode"].to_manifest() == {"desiredReplicas": 3, "readyReplicas": 3, "nodesPerReplica": 2,
                                                "totalPods": 6, "readyPods": 6, "phase": "Running"}
    assert body["conditions"] == [
        {"type": "Ready", "status": "True", "reason": "AllComponentsRunning",
         "message": "every replica of every role is ready", "observedGeneration": 2, "lastTransitionTime": "T"},
        {"type": "Progressing", "status": "False", "reason": "NoRollout", "message": "no role is rolling",
         "observedGeneration": 2, "lastTransitionTime": "T"}]


def test_a_rolling_role_is_progressing_while_its_old_groups_keep_it_ready() -> None:
    pods = [group_pod("prefill", 0)] + [group_pod("decode", g, w) for g in range(3) for w in range(2)]
    before = {"type": "Progressing", "status": "True", "lastTransitionTime": "T0"}
    service_object = {**ROLE_LAYOUT, "status": {"conditions": [before]}}
    lwses = Workloads(leader_worker_sets=(role_lws("prefill", 1, 1), role_lws("decode", 3, 1, updating=True)))
    statuses, body = service_status(service_object, pods, "T1", lwses)
    ready, progressing = body["conditions"]
    assert ready["status"] == "True"
    assert progressing == {"type": "Progressing", "status": "True", "reason": "RollingUpdate",
                           "message": "decode: 1/3 groups updated", "observedGeneration": 2,
                           "lastTransitionTime": "T0"}
    assert to_table("svc", statuses, rolling(ROLE_LAYOUT["spec"], lwses)).splitlines()[-1] == \
        "decode progressing: 1/3 groups updated"


def test_how_far_a_rollout_is() -> None:
    assert rollouts([role_lws("decode", 4, 4)]) == {}
    assert rollouts([role_lws("decode", 4, 2, partition=2)]) == {}  # the groups the canary lets through are done
    assert rollouts([role_lws("decode", 4, 1, partition=2)]) == {"decode": "1/4 groups updated"}
    assert rollouts([role_lws("decode", 4, 5)]) == {}  # a surge group counts among the updated
    assert rollouts([role_lws("decode", 4, 4, updating=True)]) == {"decode": "4/4 groups updated"}
    # Before the controller has seen the new spec its counts are the previous spec's.
    assert rollouts([role_lws("decode", 4, 4, seen=False)]) == {"decode": "not yet seen by the LWS controller"}
    replica_layout = role_lws("decode", 1, 0)
    replica_layout["metadata"]["labels"]["fusioninfer.io/replica-index"] = "0"
    assert rollouts([replica_layout]) == {}


def test_the_replica_layout_reads_no_leader_worker_set_and_has_no_progressing_condition() -> None:
    spec = service(role("prefill", "prefiller"))
    assert reads(spec["spec"]) == frozenset() and reads(ROLE_LAYOUT["spec"]) == {LEADER_WORKER_SET}
    _, body = service_status({**spec, "metadata": {**spec["metadata"], "generation": 1}}, [pod("prefill", 0)], "T")
    assert [c["type"] for c in body["conditions"]] == ["Ready"]


# Layout disaggregated: pods carry their revision and group index; the set's LeaderWorkerSets, one per
# role and revision, say how far a rollout is; an autoscaled role's count is its role scaler's.
DISAGGREGATED = service(role("prefill", "prefiller"),
                        {**role("decode", nodes=2, **REQUESTS_CPU), "autoscaling": {"maxReplicas": 4}},
                        layout="disaggregated")
del DISAGGREGATED["spec"]["roles"][1]["replicas"]
DISAGGREGATED["metadata"]["generation"] = 2
SET = render(DISAGGREGATED)["DisaggregatedSet/svc"]


def revision_pod(role_name: str, revision: str, group: int, worker: int = 0, ready: bool = True) -> dict[str, Any]:
    made = group_pod(role_name, group, worker, ready=ready)
    made["metadata"]["name"] = f"svc-0-{revision}-{role_name}-{group}-{worker}"
    made["metadata"]["labels"]["disaggregatedset.x-k8s.io/revision"] = revision
    return made


def revision_lws(role_name: str, revision: str, replicas: int, ready: int, current: bool = True) -> dict[str, Any]:
    """A LeaderWorkerSet the set's controller made: the role's labels (and spec hash, the set's now or an
    older one) and the revision's."""
    role_spec = next(r for r in SET["spec"]["roles"] if r["name"] == role_name)
    labels = {**role_spec["metadata"]["labels"], "disaggregatedset.x-k8s.io/revision": revision,
              "disaggregatedset.x-k8s.io/role": role_name, "disaggregatedset.x-k8s.io/name": "svc"}
    if not current:
        labels["fusioninfer.io/spec-hash"] = "0123456789abcdef"
    return {"metadata": {"name": f"svc-0-{revision}-{role_name}", "labels": labels},
            "spec": {**role_spec["spec"], "replicas": replicas},
            "status": {"replicas": replicas, "readyReplicas": ready}}


def scaler(role_name: str, replicas: int) -> dict[str, Any]:
    return {"metadata": {"name": f"svc-{role_name}", "labels": {"disaggregatedset.x-k8s.io/name": "svc",
                                                                  "disaggregatedset.x-k8s.io/role": role_name}},
            "spec": {"replicas": replicas}}


def test_the_disaggregated_layout_reads_its_set_its_leader_worker_sets_and_role_scalers() -> None:
    assert {kind.kind for kind in reads(DISAGGREGATED["spec"])} == {
        "LeaderWorkerSet", "DisaggregatedSet", "DisaggregatedSetRoleScaler"}


def test_two_revisions_groups_of_one_index_are_two_replicas_and_the_rollout_is_progressing() -> None:
    """Mid-rollout: old revision a1 still has both decode groups, new revision b2 one of two; the role
    scaler says decode wants 2. Every group serves, so the role is ready; Progressing says how far b2 is."""
    pods = [revision_pod("prefill", "b2", 0)]
    pods += [revision_pod("decode", revision, g, w) for revision, groups in (("a1", 2), ("b2", 1))
             for g in range(groups) for w in range(2)]
    found = Workloads(leader_worker_sets=(
        revision_lws("prefill", "a1", 0, 0, current=False), revision_lws("prefill", "b2", 1, 1),
        revision_lws("decode", "a1", 2, 2, current=False), revision_lws("decode", "b2", 1, 1)),
        disaggregated_set=SET, role_scalers=(scaler("decode", 2),))
    statuses, body = service_status(DISAGGREGATED, pods, "T", found)
    assert statuses["decode"].to_manifest() == {"desiredReplicas": 2, "readyReplicas": 2, "nodesPerReplica": 2,
                                                "totalPods": 4, "readyPods": 4, "phase": "Running"}
    ready, progressing = body["conditions"]
    assert ready["status"] == "True"
    assert (progressing["status"], progressing["message"]) == (
        "True", "prefill: 1/1 groups ready on revision b2; decode: 1/2 groups ready on revision b2")
    # Done: only b2 has groups left.
    done = Workloads(leader_worker_sets=(revision_lws("prefill", "b2", 1, 1), revision_lws("decode", "b2", 2, 2)),
                     disaggregated_set=SET, role_scalers=(scaler("decode", 2),))
    assert rolling(DISAGGREGATED["spec"], done) == {}
    _, body = service_status(DISAGGREGATED, pods, "T", done)
    assert body["conditions"][1]["reason"] == "NoRollout"


def test_a_change_the_set_s_controller_has_not_acted_on_yet_is_progressing() -> None:
    """The set writes no status: until a LeaderWorkerSet carries a role's new spec hash, it has not seen it."""
    stale = Workloads(leader_worker_sets=(revision_lws("prefill", "a1", 1, 1, current=False),
                                          revision_lws("decode", "a1", 2, 2)), disaggregated_set=SET)
    assert rolling(DISAGGREGATED["spec"], stale) == {"prefill": "not yet seen by the DisaggregatedSet controller"}


def test_an_autoscaled_role_wants_what_its_scaler_says() -> None:
    pods = [revision_pod("prefill", "a1", 0)] + [revision_pod("decode", "a1", g, w) for g in range(3) for w in range(2)]
    found = Workloads(disaggregated_set=SET, role_scalers=(scaler("decode", 3),))
    statuses, _ = service_status(DISAGGREGATED, pods, "T", found)
    assert (statuses["decode"].desired_replicas, statuses["decode"].ready_replicas) == (3, 3)
    # Without a scaler yet (the controller makes it): the autoscaler's minimum.
    statuses, _ = service_status(DISAGGREGATED, pods, "T", Workloads(disaggregated_set=SET))
    assert (statuses["decode"].desired_replicas, statuses["decode"].ready_replicas) == (1, 1)


def test_the_status_patch_removes_a_top_level_observed_generation() -> None:
    """No controller keeps one up to date: Helm 4's `--wait` would wait for it until it times out."""
    from fusion_helm.programs.status import as_patch

    assert as_patch({"conditions": []}) == {"status": {"conditions": [], "observedGeneration": None}}


def test_pods_taken_out_of_the_service_s_pod_group_are_named_in_a_gang_scheduling_condition() -> None:
    """LWS's own gang scheduling rewrites scheduling.k8s.io/group-name: those pods leave the PodGroup."""
    obj = {**service(role("prefill", "prefiller")), "status": {"conditions": [
        {"type": "GangScheduling", "status": "False", "lastTransitionTime": "EARLIER"}]}}
    obj["metadata"]["generation"] = 3
    ours, theirs = pod("prefill", 0), pod("prefill", 1)
    ours["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": "svc"}
    theirs["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": "svc-prefill-1-abcde"}
    _, body = service_status(obj, [ours, theirs], "NOW")
    assert body["conditions"][1:] == [{
        "type": "GangScheduling", "status": "False", "reason": "GroupNameOverridden",
        "message": "pods not in PodGroup svc (is LWS gangSchedulingManagement on?): svc-prefill-1-0-0",
        "observedGeneration": 3, "lastTransitionTime": "EARLIER"}]
    _, body = service_status(obj, [ours], "NOW")
    assert [c["type"] for c in body["conditions"]] == ["Ready"]


def test_a_taken_over_leader_worker_set_reports_as_lws_does() -> None:
    def replica(index: int) -> dict[str, Any]:
        return {"metadata": {"name": f"svc-{index}", "labels": {"fusioninfer.io/role-name": "prefill"}},
                "spec": {"leaderWorkerTemplate": {"size": 1}}}
    result = taken_over_status("svc", [replica(0), replica(1)],
                               lambda: [pod("prefill", 0), pod("prefill", 1, ready=False)], "NOW")
    assert (result["replicas"], result["readyReplicas"]) == (2, 1)
    assert [(c["type"], c["status"]) for c in result["conditions"]] == [("Available", "False"), ("Progressing", "True")]
    assert taken_over_table("svc", [replica(0)], result).splitlines()[0] == (
        "LeaderWorkerSet svc (taken over): 1/2 replicas ready, 1 pod(s) each")
    # Layout role: the LeaderWorkerSet kept its name, and LWS reports on it itself.
    whole = {**replica(0), "metadata": {"name": "svc"}, "status": {"replicas": 3, "readyReplicas": 3, "conditions": []}}
    def unread() -> list[dict[str, Any]]:
        raise AssertionError("the pods of a LeaderWorkerSet LWS reports on are not read")
    assert taken_over_status("svc", [whole], unread, "NOW") == {"replicas": 3, "readyReplicas": 3, "conditions": []}


CACHED = {"model": {"source": "hf://Qwen/Qwen3-8B", "revision": "b968826d9c46dd6066d109eabc6255188de91218"},
          "modelCache": {"size": "200Gi"}}


def fetch_job(name: str, condition: str | None = None, failed: int = 0) -> dict[str, Any]:
    conditions = [{"type": condition, "status": "True", "reason": "BackoffLimitExceeded",
                   "message": "Job has reached the specified backoff limit"}] if condition else []
    return {"metadata": {"name": name}, "status": {"startTime": "2026-11-27T10:00:00Z", "failed": failed,
                                                   "conditions": conditions}}


def fetch_pod(job: str, finished: str, message: str) -> dict[str, Any]:
    return {"metadata": {"labels": {"job-name": job}}, "status": {"containerStatuses": [{"state": {"terminated": {
        "exitCode": 1, "finishedAt": finished, "message": message}}}]}}


def test_the_weights_condition_follows_the_fetch_jobs_and_says_why_one_failed() -> None:
    obj = service(role("chat", "worker"), **CACHED)
    assert reads(obj["spec"]) == {JOB}
    said = [fetch_pod("svc-fetch-1", "2026-11-27T10:01:00Z", "cannot fetch hf://Qwen/Qwen3-8B at 9c92…: first"),
            fetch_pod("svc-fetch-1", "2026-11-27T10:02:00Z", "cannot fetch hf://Qwen/Qwen3-8B at 9c92…: no space")]
    cases = [
        (Workloads(), ("False", "FetchJobMissing")),
        (Workloads(fetch_jobs=(fetch_job("svc-fetch-1", failed=1),)), ("False", "Fetching")),
        (Workloads(fetch_jobs=(fetch_job("svc-fetch-1", "Failed", 2),), fetch_pods=tuple(said)),
         ("False", "FetchFailed")),
        (Workloads(fetch_jobs=(fetch_job("svc-fetch-1", "Complete"),)), ("True", "WeightsFetched")),
    ]
    for workloads, expected in cases:
        found = weights(obj["spec"], workloads)
        assert found is not None and found[:2] == expected, found
        _, body = service_status(obj, [], "NOW", workloads)
        assert body["conditions"][-1]["type"] == "WeightsReady" and body["conditions"][-1]["reason"] == expected[1]
    failed = weights(obj["spec"], cases[2][0])
    assert failed is not None and failed[2] == "svc-fetch-1: cannot fetch hf://Qwen/Qwen3-8B at 9c92…: no space"
    assert weights(obj["spec"], cases[1][0]) == (
        "False", "Fetching", "svc-fetch-1 fetching since 2026-11-27T10:00:00Z, 1 failed attempt(s)")
    assert to_table("svc", {}, None, failed).splitlines()[-1] == f"weights: FetchFailed: {failed[2]}"
    waiting = {"metadata": {"labels": {"job-name": "svc-fetch-1"}}, "status": {"containerStatuses": [{"state": {
        "waiting": {"reason": "CreateContainerConfigError", "message": 'secret "hf-token" not found'}}}]}}
    assert weights(obj["spec"], Workloads(fetch_jobs=(fetch_job("svc-fetch-1"),), fetch_pods=(waiting,))) == (
        "False", "FetchFailed", 'svc-fetch-1: CreateContainerConfigError: secret "hf-token" not found')


def test_weights_on_a_claim_or_fetched_by_the_engine_have_no_condition() -> None:
    for spec in ({"model": {"source": "pvc://models/qwen"}, "modelCache": {"size": "1Gi"}},
                 {"model": CACHED["model"]}, {}):
        obj = service(role("chat", "worker"), **spec)
        assert weights(obj["spec"], Workloads()) is None and JOB not in reads(obj["spec"])
        _, body = service_status(obj, [], "NOW")
        assert "WeightsReady" not in [c["type"] for c in body["conditions"]]


def test_the_signals_condition_names_each_trigger_keda_cannot_read() -> None:
    """From the ScaledObjects' health as KEDA writes it (its metric names are the triggers' indices)."""
    scaled = {**role("chat", "worker"), "autoscaling": {"maxReplicas": 2, "prometheus": {
        "serverAddress": "http://prometheus.monitoring:9090"}}}
    del scaled["replicas"]
    obj = service(scaled, layout="role")
    assert SCALED_OBJECT in reads(obj["spec"])
    triggers = [{"name": "engine-queue", "metadata": {"serverAddress": "http://prometheus.monitoring:9090"}}]
    found = {"metadata": {"name": "svc-chat", "labels": {"fusioninfer.io/role-name": "chat"}},
             "spec": {"triggers": triggers}, "status": {"health": {
                 "s0-prometheus": {"numberOfFailures": 7, "status": "Failing"}}}}
    status, reason, message = signals_read("svc", obj["spec"], Workloads(scaled_objects=(found,))) or ("", "", "")
    assert (status, reason) == ("False", "SignalsUnread")
    assert message.startswith("KEDA cannot read chat: engine-queue from http://prometheus.monitoring:9090 (7 polls "
                              "failed): none of the service's pods is scraped there (does that Prometheus select the "
                              "PodMonitors labelled fusioninfer.io/service=svc?")
    happy = {**found, "status": {"health": {"s0-prometheus": {"numberOfFailures": 0, "status": "Happy"}}}}
    _, body = service_status(obj, [], "NOW", Workloads(scaled_objects=(happy,)))
    assert [(c["type"], c["status"]) for c in body["conditions"]][-1] == ("SignalsRead", "True")
    # No role queries Prometheus: nothing read, no condition.
    plain = service(role("chat", "worker"), layout="role")
    assert SCALED_OBJECT not in reads(plain["spec"]) and signals_read("svc", plain["spec"], Workloads()) is None
