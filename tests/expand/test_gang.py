"""spec.gangSchedule → the PodGroup: levels, minRoleReplicas, and the errors for what cannot work."""

from __future__ import annotations

from typing import Any

import pytest

from fusion_helm import InvalidSpec
from fusion_helm.expand.gang import GangPlan
from tests.builders import policies, render, role, service
from tests.expand import alone

GPU = {"limits": {"nvidia.com/gpu": "8"}}


def podgroup(*roles: dict[str, Any], **spec: Any) -> dict[str, Any] | None:
    return render(service(*roles, **spec)).get("PodGroup/svc")


def story4(**gang: Any) -> dict[str, Any] | None:
    return podgroup(role("prefill", "prefiller", replicas=1, nodes=2, resources=GPU),
                    role("decode", replicas=2, nodes=4, resources=GPU), **gang)


def test_level_role_is_the_default_one_replica_of_each_role() -> None:
    group = story4()
    assert group is not None
    assert policies(group) == {"prefill/minimum": (2, 1, "In 0"), "prefill/more": (2, 0, "NotIn 0"),
                               "decode/minimum": (4, 1, "In 0"), "decode/more": (4, 0, "NotIn 0")}
    assert group["spec"]["minMember"] == 6
    assert group["spec"]["minResources"] == {"nvidia.com/gpu": "48"}
    assert story4(gangSchedule={"level": "role"}) == group


def test_level_group_requires_every_replica() -> None:
    group = story4(gangSchedule={"level": "group"})
    assert group is not None
    assert policies(group) == {"prefill/minimum": (2, 1, "In 0"), "decode/minimum": (4, 2, "In 0,1")}
    assert group["spec"]["minMember"] == 10
    assert group["spec"]["minResources"] == {"nvidia.com/gpu": "80"}


def test_min_role_replicas_grows_the_atomic_minimum() -> None:
    group = story4(gangSchedule={"minRoleReplicas": {"decode": 2}})
    assert group is not None
    assert policies(group) == {"prefill/minimum": (2, 1, "In 0"), "prefill/more": (2, 0, "NotIn 0"),
                               "decode/minimum": (4, 2, "In 0,1"), "decode/more": (4, 0, "NotIn 0,1")}
    assert group["spec"]["minMember"] == 10


def test_a_role_without_replicas_keeps_a_policy_for_the_ones_to_come() -> None:
    group = podgroup(role("p", "prefiller", replicas=0), role("d", nodes=2))
    assert group is not None
    assert policies(group) == {"p/more": (1, 0, "all"), "d/minimum": (2, 1, "In 0"), "d/more": (2, 0, "NotIn 0")}


def test_single_node_workers_get_a_gang_when_asked_for_one() -> None:
    assert podgroup(role("a", "worker", replicas=3)) is None
    group = podgroup(role("a", "worker", replicas=3), gangSchedule={"level": "group"})
    assert group is not None
    assert policies(group) == {"a/minimum": (1, 3, "In 0,1,2")}


def test_disabled_gang_makes_no_podgroup_and_keeps_the_scheduler() -> None:
    objects = render(service(role("p", "prefiller"), role("d", nodes=2), gangSchedule={"enable": False},
                             schedulingStrategy={"schedulerName": "custom"}))
    assert "PodGroup/svc" not in objects
    template = objects["LeaderWorkerSet/svc-d-0"]["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    assert template["spec"]["schedulerName"] == "custom"
    assert "annotations" not in template["metadata"]


def test_scaling_changes_the_podgroup_only_where_the_minimum_does() -> None:
    def decode(replicas: int, **gang: Any) -> dict[str, Any] | None:
        return podgroup(role("prefill", "prefiller", nodes=2), role("decode", replicas=replicas, nodes=4), **gang)
    assert decode(2) == decode(5)
    grouped = decode(5, gangSchedule={"level": "group"})
    assert grouped is not None
    assert policies(grouped)["decode/minimum"] == (4, 5, "In 0,1,2,3,4")


@pytest.mark.parametrize("roles,spec,path,message", [
    ([role("p", "prefiller"), role("d")], {"gangSchedule": {"minRoleReplicas": {"x": 1}}},
     "spec.gangSchedule.minRoleReplicas.x", "names no serving role (serving roles: p, d)"),
    ([role("p", "prefiller"), role("d", replicas=2)], {"gangSchedule": {"minRoleReplicas": {"d": 3}}},
     "spec.gangSchedule.minRoleReplicas.d", "must be at most the role's replicas (2), got 3"),
    ([role("p", "prefiller"), role("d")], {"gangSchedule": {"level": "group", "minRoleReplicas": {"d": 1}}},
     "spec.gangSchedule.minRoleReplicas.d", "only applies to level role; level group requires every replica"),
    ([role("a", "worker")], {"gangSchedule": {"enable": True}},
     "spec.gangSchedule", "no gang is possible: the atomic minimum is a single pod and every replica is one "
     "pod; remove gangSchedule, or raise replicas or minRoleReplicas"),
    ([role("a", "worker", replicas=4)], {"gangSchedule": {"level": "role"}},
     "spec.gangSchedule", "no gang is possible: the atomic minimum is a single pod and every replica is one "
     "pod; remove gangSchedule, or raise replicas or minRoleReplicas"),
    ([role("a", "worker", nodes=2)], {"schedulingStrategy": {"schedulerName": "default-scheduler"}},
     "spec.schedulingStrategy.schedulerName", "must be volcano for a gang-scheduled service (only Volcano "
     "reads its PodGroup), got 'default-scheduler'; or set spec.gangSchedule.enable: false"),
])
def test_what_cannot_work_is_one_clear_error(roles: list[dict[str, Any]], spec: dict[str, Any], path: str,
                                               message: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        render(service(*roles, **spec))
    assert str(error.value) == f"InferenceService svc: {path}: {message}"


def test_schema_errors_name_the_field() -> None:
    with pytest.raises(InvalidSpec) as error:
        render(service(role("a", nodes=2), gangSchedule={"level": "instance"}))
    assert str(error.value) == ("InferenceService svc: spec.gangSchedule.level: "
                                "must be one of group, role, got 'instance'")
    with pytest.raises(InvalidSpec) as error:
        render(service(role("a", nodes=2), gangSchedule={"minRoleReplicas": {"a": 0}}))
    assert "spec.gangSchedule.minRoleReplicas.a: must be >= 1, got 0" in str(error.value)


def test_the_stage_alone_writes_the_plan_it_is_given() -> None:
    """The PodGroup follows the gang plan the facts hold (here made by hand), each replica a subgroup placed
    whole; a service the plan leaves ungrouped gets none."""
    service_model = alone.model(service(role("p", "prefiller", replicas=2), role("d", "decoder", replicas=3, nodes=2)))
    plan = GangPlan(group_name="svc", scheduler_name="volcano", minimum={"p": 1, "d": 2})
    [group] = alone.objects("gang", alone.facts(service_model, gang=plan))
    assert group["spec"]["minMember"] == 1 * 1 + 2 * 2
    assert policies(group) == {"p/minimum": (1, 1, "In 0"), "p/more": (1, 0, "NotIn 0"),
                               "d/minimum": (2, 2, "In 0,1"), "d/more": (2, 0, "NotIn 0,1")}
    assert alone.objects("gang", alone.facts(service_model)) == []
