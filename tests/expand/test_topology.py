"""Topology-aware placement, queues and priority: what the PodGroup and the pods carry, and what is
refused by field before anything is applied."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import refusal, render, role, service

RACK = {"mode": "hard", "highestTierName": "rack"}
TIER_1 = {"highestTierAllowed": 1}


def story4(**spec: Any) -> dict[str, Any]:
    return service(role("prefill", "prefiller", nodes=2), role("decode", "decoder", replicas=2, nodes=4), **spec)


def podgroup(spec: dict[str, Any]) -> dict[str, Any]:
    pod_group: dict[str, Any] = render(spec)["PodGroup/svc"]["spec"]
    return pod_group


def topologies(pod_group: dict[str, Any]) -> dict[str, Any]:
    return {policy["name"]: policy.get("networkTopology") for policy in pod_group["subGroupPolicy"]}


def test_the_service_default_bounds_every_replica_and_a_role_overrides_or_opts_out() -> None:
    spec = service(role("prefill", "prefiller", nodes=2), {**role("decode", "decoder", 2, nodes=4), "networkTopology":
                                                           RACK},
                   {**role("decode-b", "decoder", nodes=2), "networkTopology": {"mode": "none"}},
                   gangSchedule={"networkTopology": TIER_1})
    assert topologies(podgroup(spec)) == {
        "prefill/minimum": {"mode": "hard", "highestTierAllowed": 1}, "prefill/more": {"mode": "hard",
                                                                                       "highestTierAllowed": 1},
        "decode/minimum": RACK, "decode/more": RACK, "decode-b/minimum": None, "decode-b/more": None}
    assert "networkTopology" not in podgroup(spec)


def test_the_whole_service_s_topology_is_the_podgroup_s_own() -> None:
    pod_group = podgroup(story4(gangSchedule={"serviceNetworkTopology": {"mode": "soft"}}))
    assert pod_group["networkTopology"] == {"mode": "soft"}
    assert all(bound is None for bound in topologies(pod_group).values())


@pytest.mark.parametrize("layout", ["replica", "role", "disaggregated"])
def test_every_layout_bounds_its_replicas_alike(layout: str) -> None:
    bounds = topologies(podgroup(story4(layout=layout, gangSchedule={"networkTopology": RACK}))).values()
    assert list(bounds) and all(bound == RACK for bound in bounds)


def test_queue_and_priority_on_the_podgroup_and_the_priority_on_every_serving_pod() -> None:
    objects = render(story4(schedulingStrategy={"queue": "team-a", "priorityClassName": "inference-high"}))
    pod_group = objects["PodGroup/svc"]["spec"]
    assert (pod_group["queue"], pod_group["priorityClassName"]) == ("team-a", "inference-high")
    templates = [t for o in objects.values() if o["kind"] == "LeaderWorkerSet"
                 for t in (o["spec"]["leaderWorkerTemplate"]["workerTemplate"],
                           o["spec"]["leaderWorkerTemplate"].get("leaderTemplate")) if t]
    assert len(templates) == 6 and {t["spec"]["priorityClassName"] for t in templates} == {"inference-high"}


def test_a_priority_class_without_a_gang_is_on_the_pods_alone() -> None:
    objects = render(service(role("w", "worker", 2), schedulingStrategy={"priorityClassName": "batch"}))
    assert not [o for o in objects.values() if o["kind"] == "PodGroup"]
    assert {o["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["priorityClassName"]
            for o in objects.values() if o["kind"] == "LeaderWorkerSet"} == {"batch"}


def test_without_any_of_it_the_podgroup_is_as_before() -> None:
    """(The builder's containers request nothing: no minResources.)"""
    pod_group = podgroup(story4())
    assert set(pod_group) == {"minMember", "subGroupPolicy"}
    assert all(bound is None for bound in topologies(pod_group).values())


@pytest.mark.parametrize(("spec", "path", "words"), [
    (story4(gangSchedule={"networkTopology": {"mode": "hard"}}), "spec.gangSchedule.networkTopology",
     "mode hard needs highestTierAllowed"),
    (story4(gangSchedule={"networkTopology": {"highestTierAllowed": 1, "highestTierName": "rack"}}),
     "spec.gangSchedule.networkTopology.highestTierName", "not both"),
    (story4(gangSchedule={"networkTopology": {"mode": "soft", "highestTierAllowed": 2}}),
     "spec.gangSchedule.networkTopology.highestTierAllowed", "mode soft tries the lowest tier first"),
    (story4(gangSchedule={"serviceNetworkTopology": {"mode": "none"}}), "spec.gangSchedule.serviceNetworkTopology.mode",
     "none opts a role out"),
    (story4(gangSchedule={"networkTopology": {"highestTierAllowed": 0}}),
     "spec.gangSchedule.networkTopology.highestTierAllowed", "must be >= 1"),
    (service({**role("prefill", "prefiller"), "networkTopology": {"mode": "none", "highestTierAllowed": 1}},
             role("decode")), "spec.roles[0].networkTopology.highestTierAllowed", "mode none has no tier"),
    (story4(gangSchedule={"networkTopology": {"highestTierAllowed": 3}, "serviceNetworkTopology": TIER_1}),
     "spec.gangSchedule.networkTopology.highestTierAllowed", "above gangSchedule.serviceNetworkTopology's 1"),
    (story4(gangSchedule={"enable": False, "networkTopology": TIER_1}), "spec.gangSchedule.networkTopology",
     "gangSchedule.enable is false"),
    (service({**role("w", "worker", 2), "networkTopology": TIER_1}), "spec.roles[0].networkTopology",
     "gang-scheduled only with spec.gangSchedule"),
    (service(role("w", "worker", 2), schedulingStrategy={"queue": "team-a"}), "spec.schedulingStrategy.queue",
     "is a Volcano PodGroup's, and the service has none"),
    (story4(schedulingStrategy={"queue": "Team_A"}), "spec.schedulingStrategy.queue", "must match"),
    (service(role("w", "worker", 2, nodes=2), {"name": "r", "componentType": "router", "networkTopology": TIER_1,
                                                "httproute": {"parentRefs": [{"name": "gw"}]}}),
     "spec.roles[1].networkTopology", "only allowed on componentType worker, prefiller or decoder, not router"),
    (service(role("w", "worker", 2, nodes=2, **{}), schedulingStrategy={"priorityClassName": "high"})
     | {"spec": {"roles": [{**role("w", "worker", 2, nodes=2), "template": {"spec": {
         "priorityClassName": "low", "containers": [{"name": "c", "image": "vllm/vllm-openai:v0.11.0"}]}}}],
        "schedulingStrategy": {"priorityClassName": "high"}}},
     "spec.roles[0].template.spec.priorityClassName", "is set by the expansion to 'high', not 'low'"),
])
def test_what_volcano_or_kubernetes_would_not_honour_is_refused_by_field(spec: dict[str, Any], path: str,
                                                                         words: str) -> None:
    refused = refusal(spec)
    assert refused.path == path, str(refused)
    assert words in str(refused)


def test_the_podgroup_validates_strictly_against_volcano_s_crd(validators: Any) -> None:
    from tests.schemas import errors

    spec = story4(gangSchedule={"networkTopology": RACK, "serviceNetworkTopology": {"mode": "hard",
                                                                                   "highestTierAllowed": 2}},
                  schedulingStrategy={"queue": "team-a", "priorityClassName": "high"})
    spec["spec"]["roles"][0]["networkTopology"] = {"mode": "soft"}
    objects = render(spec)
    for obj in objects.values():
        if obj["kind"] not in ("PodDisruptionBudget", "NetworkPolicy"):  # Kubernetes' own: the API server validates
            assert errors(validators(obj["apiVersion"], obj["kind"]), obj) == [], obj["kind"]
    # The validator catches a field Volcano's schema lacks: the check above can fail.
    broken = {**objects["PodGroup/svc"], "spec": {**objects["PodGroup/svc"]["spec"], "networkTopology": {
        "mode": "hard", "highestTier": 1}}}
    assert errors(validators(broken["apiVersion"], broken["kind"]), broken)
