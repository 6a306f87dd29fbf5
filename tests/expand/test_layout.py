"""The role layout: one LeaderWorkerSet per role, its groups the replicas; rollouts and autoscaling."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fusion_helm import InvalidSpec
from fusion_helm.kio.write import dump
from tests.builders import policies, render, requesting_cpu, role, service
from tests.expand import alone

GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"


def story4(prefill: int = 1, decode: int = 2, **spec: Any) -> dict[str, Any]:
    return service(role("prefill", "prefiller", prefill, nodes=2), role("decode", "decoder", decode, nodes=4),
                   layout="role", **spec)


def test_one_leader_worker_set_per_role_with_its_replicas_as_groups() -> None:
    objects = render(story4())
    assert sorted(key for key in objects if not key.startswith("NetworkPolicy/")) == [
        "LeaderWorkerSet/svc-decode", "LeaderWorkerSet/svc-prefill", "PodDisruptionBudget/svc-decode",
        "PodDisruptionBudget/svc-prefill", "PodGroup/svc"]
    decode = objects["LeaderWorkerSet/svc-decode"]
    assert decode["spec"]["replicas"] == 2
    assert decode["spec"]["leaderWorkerTemplate"]["size"] == 4
    assert "rolloutStrategy" not in decode["spec"]
    for template in ("leaderTemplate", "workerTemplate"):
        pod = decode["spec"]["leaderWorkerTemplate"][template]["metadata"]
        assert "fusioninfer.io/replica-index" not in pod["labels"]  # LWS's group-index says it
        assert pod["annotations"]["volcano.sh/task-spec"] == "decode"


def test_the_same_templates_and_hash_as_the_replica_layout_but_for_the_index() -> None:
    by_role = render(story4())["LeaderWorkerSet/svc-decode"]
    by_replica = render({**story4(), "spec": {**story4()["spec"], "layout": "replica"}})["LeaderWorkerSet/svc-decode-1"]
    role_template = by_role["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    replica_template = copy.deepcopy(by_replica["spec"]["leaderWorkerTemplate"]["workerTemplate"])
    del replica_template["metadata"]["labels"]["fusioninfer.io/replica-index"]
    replica_template["metadata"]["annotations"]["volcano.sh/task-spec"] = "decode"
    assert role_template == replica_template


def test_the_podgroup_makes_each_group_a_subgroup_by_its_group_index() -> None:
    podgroup = render(story4())["PodGroup/svc"]
    assert policies(podgroup) == {"prefill/minimum": (2, 1, "In 0"), "prefill/more": (2, 0, "NotIn 0"),
                                  "decode/minimum": (4, 1, "In 0"), "decode/more": (4, 0, "NotIn 0")}
    for policy in podgroup["spec"]["subGroupPolicy"]:
        assert policy["matchLabelKeys"] == [GROUP_INDEX]
        assert {e["key"] for e in policy["labelSelector"]["matchExpressions"]} == {GROUP_INDEX}
    assert podgroup["spec"]["minMember"] == 6


def test_level_group_keeps_a_more_policy_for_the_groups_a_surge_adds() -> None:
    podgroup = render(story4(gangSchedule={"level": "group"}))["PodGroup/svc"]
    assert policies(podgroup)["decode/minimum"] == (4, 2, "In 0,1")
    assert policies(podgroup)["decode/more"] == (4, 0, "NotIn 0,1")
    assert podgroup["spec"]["minMember"] == 10


def test_scaling_a_role_leaves_the_podgroup_byte_identical_at_level_role() -> None:
    before, after = render(story4(decode=2)), render(story4(decode=5))
    assert dump(before["PodGroup/svc"]) == dump(after["PodGroup/svc"])
    assert dump(before["LeaderWorkerSet/svc-prefill"]) == dump(after["LeaderWorkerSet/svc-prefill"])
    assert after["LeaderWorkerSet/svc-decode"]["spec"]["replicas"] == 5


def test_rollout_becomes_the_rolling_update_configuration() -> None:
    spec = story4()
    spec["spec"]["roles"][1]["rollout"] = {"maxUnavailable": "50%", "maxSurge": 1, "partition": 1}
    lws = render(spec)["LeaderWorkerSet/svc-decode"]
    assert lws["spec"]["rolloutStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdateConfiguration": {"maxUnavailable": "50%", "maxSurge": 1, "partition": 1}}


def test_autoscaling_makes_an_hpa_and_leaves_replicas_out_of_the_lws() -> None:
    spec = story4()
    metrics = [{"type": "Pods", "pods": {"metric": {"name": "vllm:num_requests_waiting"},
                                         "target": {"type": "AverageValue", "averageValue": "10"}}}]
    decode = spec["spec"]["roles"][1]
    del decode["replicas"]
    decode["autoscaling"] = {"minReplicas": 2, "maxReplicas": 6, "metrics": metrics}
    objects = render(spec)
    assert "replicas" not in objects["LeaderWorkerSet/svc-decode"]["spec"]
    hpa = objects["HorizontalPodAutoscaler/svc-decode"]
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"] == {
        "scaleTargetRef": {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                           "name": "svc-decode"},
        "minReplicas": 2, "maxReplicas": 6, "metrics": metrics}
    assert hpa["metadata"]["labels"]["fusioninfer.io/role-name"] == "decode"
    # The gang plans for the autoscaler's minimum: one decode group required, as without it.
    assert policies(objects["PodGroup/svc"])["decode/minimum"] == (4, 1, "In 0")


def test_the_router_pool_selects_leaders_in_either_layout() -> None:
    from tests.support import router

    for layout in ("replica", "role"):
        objects = render(service(role("decode", "worker", 2), router(), layout=layout))
        pool = next(o for key, o in objects.items() if key.startswith("InferencePool/"))
        assert pool["spec"]["selector"]["matchLabels"]["leaderworkerset.sigs.k8s.io/worker-index"] == "0"


def with_decode(**fields: Any) -> dict[str, Any]:
    spec = story4()
    spec["spec"]["roles"][1].update(fields)
    return spec


@pytest.mark.parametrize(("spec", "path", "words"), [
    ({**service(role("decode", replicas=2, nodes=2)), "spec": {"roles": [
        {**role("decode", replicas=2, nodes=2), "rollout": {"maxSurge": 1}}]}},
     "spec.roles[0].rollout", "needs spec.layout: role"),
    ({**service(role("decode")), "spec": {"roles": [{**role("decode"), "autoscaling": {"maxReplicas": 3}}]}},
     "spec.roles[0].autoscaling", "needs spec.layout: role"),
    (with_decode(autoscaling={"maxReplicas": 3}), "spec.roles[1].replicas", "is the autoscaler's"),
    (with_decode(rollout={"maxSurge": "150%"}), "spec.roles[1].rollout.maxSurge", "percentage up to 100%"),
    (with_decode(rollout={"maxUnavailable": "1"}), "spec.roles[1].rollout.maxUnavailable", "got '1'"),
    (with_decode(rollout={"maxUnavailable": 0}), "spec.roles[1].rollout.maxUnavailable", "both 0 at 2"),
    (with_decode(rollout={"maxUnavailable": "10%"}), "spec.roles[1].rollout.maxUnavailable", "both 0 at 2"),
    ({**story4(), "spec": {**story4()["spec"], "gangSchedule": {"level": "group"}, "roles": [
        story4()["spec"]["roles"][0], {**role("decode", "decoder", nodes=4), "autoscaling": {"maxReplicas": 3}}]}},
     "spec.roles[1].autoscaling", "level group"),
])
def test_what_the_layout_cannot_do_is_refused_naming_the_field(spec: dict[str, Any], path: str, words: str) -> None:
    for raw in spec["spec"]["roles"]:
        if "autoscaling" in raw and "replicas" in raw and path != "spec.roles[1].replicas":
            del raw["replicas"]
    with pytest.raises(InvalidSpec) as error:
        render(spec)
    assert error.value.path == path
    assert words in str(error.value)


def test_autoscaling_bounds_and_metrics_are_checked() -> None:
    spec = story4()
    del spec["spec"]["roles"][1]["replicas"]
    spec["spec"]["roles"][1]["autoscaling"] = {"minReplicas": 4, "maxReplicas": 2}
    with pytest.raises(InvalidSpec, match="must be at least minReplicas") as error:
        render(spec)
    assert error.value.path == "spec.roles[1].autoscaling.maxReplicas"
    spec["spec"]["roles"][1]["autoscaling"] = {"maxReplicas": 2, "metrics": [{"type": "Pods", "resource": {}}]}
    with pytest.raises(InvalidSpec, match="is required") as error:
        render(spec)
    assert error.value.path == "spec.roles[1].autoscaling.metrics[0].pods"


def test_a_multinode_role_s_groups_would_share_names_with_a_role_named_after_them() -> None:
    spec = service(role("decode", nodes=2), role("decode-1", nodes=1), layout="role")
    with pytest.raises(InvalidSpec, match="worker StatefulSet of group 1") as error:
        render(spec)
    assert error.value.path == "spec.roles[1].name"
    assert render(service(role("decode", nodes=1), role("decode-1", nodes=1), layout="role"))


def test_name_lengths_count_the_autoscaler_s_maximum_and_the_surge() -> None:
    name = "r" * 40
    spec = service({**role(name, nodes=2), "rollout": {"maxSurge": 1}}, layout="role")
    spec["metadata"]["name"] = "s" * 5
    del spec["spec"]["roles"][0]["replicas"]
    spec["spec"]["roles"][0]["autoscaling"] = {"maxReplicas": 999}
    requesting_cpu(spec["spec"]["roles"][0])
    # The LWS (50 characters) fits; its worker StatefulSet for group 999 (maximum + surge - 1) does not.
    with pytest.raises(InvalidSpec, match=r"worker StatefulSet name '.*-999' would be 54"):
        render({**spec, "metadata": {**spec["metadata"], "name": "s" * 9}})
    assert render(spec)


def test_the_stage_alone_writes_a_role_s_leader_worker_sets_or_the_disaggregated_set() -> None:
    by_role = alone.model(service(role("w", "worker", replicas=3), layout="role"))
    assert [(o["kind"], o["metadata"]["name"]) for o in alone.objects("layout", alone.facts(by_role))] == [
        ("LeaderWorkerSet", "svc-w")]
    by_replica = alone.model(service(role("w", "worker", replicas=3)))
    assert [o["metadata"]["name"] for o in alone.objects("layout", alone.facts(by_replica))] == [
        "svc-w-0", "svc-w-1", "svc-w-2"]
    disaggregated = alone.model(service(role("p", "prefiller"), role("d", "decoder"), layout="disaggregated"))
    assert [o["kind"] for o in alone.objects("layout", alone.facts(disaggregated))] == ["DisaggregatedSet"]
