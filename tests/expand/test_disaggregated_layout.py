"""Layout disaggregated: one DisaggregatedSet, its roles the serving roles, rolled together as one
revision by LWS's controller; what it cannot honour is refused by field before anything is applied."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from fusion_helm import InvalidSpec
from fusion_helm.kio.write import dump
from fusion_helm.model import Layout
from tests.builders import policies, refusal, render, requesting_cpu, role, service
from tests.support import router

GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
REVISION = "disaggregatedset.x-k8s.io/revision"


def story4(prefill: int = 1, decode: int = 2, layout: str = "disaggregated", **spec: Any) -> dict[str, Any]:
    return service(role("prefill", "prefiller", prefill, nodes=2), role("decode", "decoder", decode, nodes=4),
                   layout=layout, **spec)


def set_role(objects: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(r for r in objects["DisaggregatedSet/svc"]["spec"]["roles"] if r["name"] == name)
    return found


def test_one_disaggregated_set_whose_roles_are_the_serving_roles() -> None:
    objects = render(story4())
    assert sorted(key for key in objects if not key.startswith("NetworkPolicy/")) == [
        "DisaggregatedSet/svc", "PodDisruptionBudget/svc-decode", "PodDisruptionBudget/svc-prefill", "PodGroup/svc"]
    dset = objects["DisaggregatedSet/svc"]
    assert dset["apiVersion"] == "disaggregatedset.x-k8s.io/v1"
    assert dset["metadata"] == {"name": "svc", "namespace": "llm",
                                "labels": {"team": "a", "fusioninfer.io/service": "svc"}}
    assert [r["name"] for r in dset["spec"]["roles"]] == ["prefill", "decode"]
    assert "slices" not in dset["spec"]  # one slice: the role's replicas are the service's
    decode = set_role(objects, "decode")
    assert decode["spec"]["replicas"] == 2
    assert decode["spec"]["leaderWorkerTemplate"]["size"] == 4
    assert decode["spec"]["leaderWorkerTemplate"]["restartPolicy"] == "RecreateGroupOnPodRestart"
    # Each rolls with the DisaggregatedSet's own bounds unless the role gives others.
    assert decode["spec"]["rolloutStrategy"] == {
        "type": "RollingUpdate", "rollingUpdateConfiguration": {"maxUnavailable": 0, "maxSurge": 1}}
    # What the controller copies to its LeaderWorkerSets: our labels and the spec hash.
    assert decode["metadata"]["labels"] == {
        "team": "a", "fusioninfer.io/service": "svc", "fusioninfer.io/component-type": "decoder",
        "fusioninfer.io/role-name": "decode",
        "fusioninfer.io/spec-hash": render(story4(layout="role"))["LeaderWorkerSet/svc-decode"]["metadata"]["labels"][
            "fusioninfer.io/spec-hash"]}


@pytest.mark.parametrize("name", ["prefill", "decode"])
def test_the_same_templates_as_the_role_layout(name: str) -> None:
    """Stamped templates, Ray bootstrap, probes rule, spec hash and restart policy: as in layout role."""
    by_set = set_role(render(story4()), name)["spec"]["leaderWorkerTemplate"]
    by_role = render(story4(layout="role"))[f"LeaderWorkerSet/svc-{name}"]["spec"]["leaderWorkerTemplate"]
    assert by_set == by_role
    assert by_set["leaderTemplate"]["spec"]["containers"][0]["command"][3] == "ray-leader"
    assert "readinessProbe" not in by_set["workerTemplate"]["spec"]["containers"][0]


def test_recovery_policy_none_is_lws_restart_policy_none() -> None:
    spec = story4()
    spec["spec"]["roles"][0]["recoveryPolicy"] = "None"
    assert set_role(render(spec), "prefill")["spec"]["leaderWorkerTemplate"]["restartPolicy"] == "None"


def test_each_group_of_each_revision_is_its_own_subgroup() -> None:
    podgroup = render(story4())["PodGroup/svc"]
    assert policies(podgroup) == {"prefill/minimum": (2, 1, "In 0"), "prefill/more": (2, 0, "NotIn 0"),
                                  "decode/minimum": (4, 1, "In 0"), "decode/more": (4, 0, "NotIn 0")}
    for policy in podgroup["spec"]["subGroupPolicy"]:
        # A rollout's two revisions both have a group 0: the revision keeps them two subgroups, and the
        # index comes first, as Volcano orders subgroups by the first key's value.
        assert policy["matchLabelKeys"] == [GROUP_INDEX, REVISION]
    # Otherwise the role layout's PodGroup: the same minimum, the same policies.
    by_role = render(story4(layout="role"))["PodGroup/svc"]
    for policy in by_role["spec"]["subGroupPolicy"]:
        policy["matchLabelKeys"].append(REVISION)
    assert podgroup["spec"] == by_role["spec"]
    template = set_role(render(story4()), "decode")["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    assert template["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "svc",
                                                   "volcano.sh/task-spec": "decode"}


def test_level_group_requires_every_replica_and_keeps_a_more_policy() -> None:
    podgroup = render(story4(gangSchedule={"level": "group"}))["PodGroup/svc"]
    assert policies(podgroup)["decode/minimum"] == (4, 2, "In 0,1")
    assert policies(podgroup)["decode/more"] == (4, 0, "NotIn 0,1")
    assert podgroup["spec"]["minMember"] == 10


def test_scaling_a_role_changes_only_its_replicas() -> None:
    before, after = render(story4(decode=2)), render(story4(decode=5))
    assert dump(before["PodGroup/svc"]) == dump(after["PodGroup/svc"])
    assert set_role(before, "prefill") == set_role(after, "prefill")
    changed = set_role(after, "decode")
    assert changed["spec"]["replicas"] == 5
    assert {**changed, "spec": {**changed["spec"], "replicas": 2}} == set_role(before, "decode")


def test_rollout_becomes_the_role_s_rolling_update_with_the_set_s_defaults() -> None:
    spec = story4()
    spec["spec"]["roles"][1]["rollout"] = {"maxUnavailable": "50%"}
    assert set_role(render(spec), "decode")["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] == {
        "maxUnavailable": "50%", "maxSurge": 1}
    spec["spec"]["roles"][1]["rollout"] = {"maxUnavailable": 1, "maxSurge": 0}
    assert set_role(render(spec), "decode")["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] == {
        "maxUnavailable": 1, "maxSurge": 0}


def test_autoscaling_is_external_scaling_and_an_hpa_on_the_role_scaler() -> None:
    spec = story4()
    decode = spec["spec"]["roles"][1]
    del decode["replicas"]
    decode["autoscaling"] = {"minReplicas": 2, "maxReplicas": 6}
    requesting_cpu(decode)
    objects = render(spec)
    scaled = set_role(objects, "decode")
    assert scaled["scaling"] == {"mode": "External"}
    assert "replicas" not in scaled["spec"]  # the role scaler's: helm upgrade never resets it
    assert "scaling" not in set_role(objects, "prefill")
    assert objects["HorizontalPodAutoscaler/svc-decode"]["spec"] == {
        "scaleTargetRef": {"apiVersion": "disaggregatedset.x-k8s.io/v1", "kind": "DisaggregatedSetRoleScaler",
                           "name": "svc-decode"},
        "minReplicas": 2, "maxReplicas": 6}
    # The gang plans for the autoscaler's minimum.
    assert policies(objects["PodGroup/svc"])["decode/minimum"] == (4, 1, "In 0")


def with_decode(**fields: Any) -> dict[str, Any]:
    spec = story4()
    spec["spec"]["roles"][1].update(fields)
    return spec


@pytest.mark.parametrize(("spec", "path", "words"), [
    (with_decode(rollout={"partition": 1}), "spec.roles[1].rollout.partition", "a DisaggregatedSet has no partition"),
    (with_decode(rollout={"partition": 0}), "spec.roles[1].rollout.partition", "a DisaggregatedSet has no partition"),
    # The set's own default maxUnavailable is 0: maxSurge 0 alone can never replace a group.
    (with_decode(rollout={"maxSurge": 0}), "spec.roles[1].rollout.maxUnavailable", "both 0 at 2"),
    (with_decode(rollout={"maxSurge": "150%"}), "spec.roles[1].rollout.maxSurge", "percentage up to 100%"),
    (service(role("w", "worker"), role("d", "decoder"), layout="disaggregated"), "spec.layout",
     "no prefiller role; use layout replica or role"),
    (service(role("w", "worker"), layout="disaggregated"), "spec.layout", "no decoder and prefiller role"),
    (service(role("p", "prefiller"), *(role(f"d{i}", "decoder") for i in range(10)), layout="disaggregated"),
     "spec.roles[10]", "at most 10 roles"),
    (service(role("p", "prefiller", 0), role("d", "decoder", 2), layout="disaggregated"), "spec.roles[0].replicas",
     "scales its roles to zero together"),
])
def test_what_a_disaggregated_set_cannot_honour_is_refused_naming_the_field(
        spec: dict[str, Any], path: str, words: str) -> None:
    error = refusal(spec)
    assert error.path == path
    assert words in str(error)


def test_every_role_at_zero_is_a_set_at_rest() -> None:
    objects = render(service(role("p", "prefiller", 0), role("d", "decoder", 0), layout="disaggregated"))
    assert [r["spec"]["replicas"] for r in objects["DisaggregatedSet/svc"]["spec"]["roles"]] == [0, 0]
    # Autoscaled roles are out of the all-or-none rule: their count is their scaler's.
    spec = service(role("p", "prefiller", 0), role("d", "decoder"), layout="disaggregated")
    del spec["spec"]["roles"][1]["replicas"]
    spec["spec"]["roles"][1]["autoscaling"] = {"maxReplicas": 2}
    requesting_cpu(spec["spec"]["roles"][1])
    assert render(spec)


def test_name_lengths_count_the_revision_the_controller_names_with() -> None:
    """``<set>-0-<8-digit revision>-<role>`` is a StatefulSet name (52 characters at most), and its
    worker StatefulSets and pods add the group index."""
    def named(name: str, decode_nodes: int = 1) -> dict[str, Any]:
        spec = service(role("p", "prefiller"), role("d", "decoder", 2, nodes=decode_nodes), layout="disaggregated")
        spec["metadata"]["name"] = name
        return spec

    assert render(named("s" * 39))  # s…s-0-12345678-d: 52 characters
    with pytest.raises(InvalidSpec, match=r"StatefulSet name 's+-0-0{8}-p' would be 53") as error:
        render(named("s" * 40))
    assert error.value.path == "spec.roles[0].name"
    # A multi-node role's worker StatefulSet of its last group, s…s-0-12345678-d-1.
    with pytest.raises(InvalidSpec, match=r"worker StatefulSet name 's+-0-0{8}-d-1' would be 54"):
        render(named("s" * 39, decode_nodes=2))


def test_a_service_name_starting_with_a_digit_is_refused_in_every_layout() -> None:
    """The LWS controller names a Service after each LeaderWorkerSet, and Service names start with a letter."""
    for layout in Layout:
        spec = story4(layout=str(layout))
        spec["metadata"]["name"] = "1svc"
        error = refusal(spec)
        assert error.path == "metadata.name"
        assert "must start with a letter" in str(error)


def test_role_names_that_meet_the_controller_s_names_are_refused() -> None:
    spec = service(role("p", "prefiller", nodes=2), role("p-1", "decoder"), layout="disaggregated")
    assert refusal(spec).path == "spec.roles[1].name"
    spec = service(role("p", "prefiller"), role("p-prv", "decoder"), layout="disaggregated")
    error = refusal(spec)
    assert error.path == "spec.roles[1].name"
    assert "headless Service" in str(error)


def test_a_disaggregated_set_too_large_for_the_api_server_is_refused() -> None:
    spec = story4()
    big = [{"name": f"E{i}", "value": "x" * 1000} for i in range(450)]  # 0.9 MB a role: one fits, two do not
    for raw in spec["spec"]["roles"]:
        raw["template"]["spec"]["containers"][0]["env"] = big
    error = refusal(spec)
    assert error.path == "spec.roles[1].template"
    assert "DisaggregatedSet" in str(error)


def test_it_validates_strictly_against_the_upstream_crd(validators: Any) -> None:
    from tests.schemas import errors

    spec = story4()
    del spec["spec"]["roles"][1]["replicas"]
    spec["spec"]["roles"][1]["autoscaling"] = {"maxReplicas": 4}
    requesting_cpu(spec["spec"]["roles"][1])
    spec["spec"]["roles"][0]["rollout"] = {"maxUnavailable": 1}
    for obj in render(spec).values():
        # Kubernetes' own kinds: the API server validates them.
        if obj["kind"] not in ("HorizontalPodAutoscaler", "PodDisruptionBudget", "NetworkPolicy"):
            assert errors(validators(obj["apiVersion"], obj["kind"]), obj) == [], obj["kind"]


# -- Routing --------------------------------------------------------------------------------------------

def routed(layout: str = "disaggregated", **fields: Any) -> dict[str, Any]:
    return service(role("prefill", "prefiller", ports=[{"containerPort": 8000, "name": "http"}]),
                   role("decode", "decoder", 2, ports=[{"containerPort": 8000, "name": "http"}]),
                   router(**fields), layout=layout)


def test_the_router_runs_llm_d_router_with_the_rollout_screener() -> None:
    objects = render(routed(models=[{"name": "m", "criticality": "Critical"}]))
    picker = objects["Deployment/svc-router-epp"]["spec"]["template"]["spec"]["containers"][0]
    assert picker["image"] == "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0"
    assert "--allow-experimental-plugins=true" in picker["args"]  # the screener is an Alpha plugin
    config = yaml.safe_load(objects["ConfigMap/svc-router-epp"]["data"]["config.yaml"])
    assert config["plugins"][0] == {"type": "disaggregatedset-rollout-screener", "parameters": {
        "scope": {"labelSelector": "disaggregatedset.x-k8s.io/name=svc,leaderworkerset.sigs.k8s.io/worker-index=0"},
        "revisionGating": {"mode": "sum", "revisionLabelKey": REVISION,
                           "roleLabelKey": "disaggregatedset.x-k8s.io/role",
                           "requireRoles": {"values": ["prefill", "decode"]}}}}
    # It runs before every profile, in none of them.
    assert all(ref["pluginRef"] != "disaggregatedset-rollout-screener"
               for profile in config["schedulingProfiles"] for ref in profile["plugins"])
    # The pool selects the serving leaders of every revision: no revision in its selector.
    assert objects["InferencePool/svc-router"]["spec"]["selector"]["matchLabels"] == {
        "fusioninfer.io/service": "svc", "leaderworkerset.sigs.k8s.io/worker-index": "0"}
    assert objects["InferenceObjective/svc-m"]["apiVersion"] == "llm-d.ai/v1alpha2"
    # Other layouts run the same picker (prefill/decode needs its sidecar), without the screener.
    replica = render(routed("replica"))
    assert "disaggregatedset" not in replica["ConfigMap/svc-router-epp"]["data"]["config.yaml"]
    assert "--allow-experimental-plugins=true" not in replica["Deployment/svc-router-epp"]["spec"]["template"][
        "spec"]["containers"][0]["args"]


def test_the_screener_comes_with_a_chosen_llm_d_router_too() -> None:
    objects = render(routed(endpointPicker={"generation": "llm-d-router"}))
    assert "disaggregatedset-rollout-screener" in objects["ConfigMap/svc-router-epp"]["data"]["config.yaml"]


@pytest.mark.parametrize(("fields", "path", "words"), [
    ({"endpointPicker": {"generation": "gie-v1.0"}}, "spec.roles[2].endpointPicker.generation",
     "layout disaggregated needs the llm-d-router picker"),
    ({"poolAPIVersion": "inference.networking.x-k8s.io/v1alpha2"}, "spec.roles[2].poolAPIVersion",
     "layout disaggregated needs the llm-d-router picker, which reads inference.networking.k8s.io/v1"),
    ({"endpointPickerConfig": "apiVersion: llm-d.ai/v1alpha1\nkind: EndpointPickerConfig\nplugins: []\n"},
     "spec.roles[2].endpointPickerConfig", "needs a disaggregatedset-rollout-screener plugin"),
    ({"endpointPicker": {"flags": {"allow-experimental-plugins": "false"}}},
     "spec.roles[2].endpointPicker.flags.allow-experimental-plugins", "is set by the router to 'true'"),
])
def test_a_router_that_could_pair_revisions_is_refused(fields: dict[str, Any], path: str, words: str) -> None:
    error = refusal(routed(**fields))
    assert error.path == path
    assert words in str(error)


def test_a_verbatim_configuration_with_the_screener_is_kept() -> None:
    text = ("apiVersion: llm-d.ai/v1alpha1\nkind: EndpointPickerConfig\nplugins:\n"
            "- type: disaggregatedset-rollout-screener\n  parameters: {}\n")
    assert render(routed(endpointPickerConfig=text))["ConfigMap/svc-router-epp"]["data"]["config.yaml"] == text


def test_the_role_layout_refuses_a_router_pairing_prefill_and_decode() -> None:
    """It rolls each role on its own: a prefill and a decode of different revisions would serve one request."""
    error = refusal(routed("role"))
    assert error.path == "spec.layout"
    assert "use layout disaggregated" in str(error)
    # Without a router, or without prefill/decode, the role layout stays as it was.
    assert render(service(role("p", "prefiller"), role("d", "decoder"), layout="role"))
    assert render(service(role("w", "worker"), router(), layout="role"))


def test_the_story_values_render_in_the_layout_as_they_are(tmp_path: Any) -> None:
    """The design's prefill/decode stories need nothing but `layout: disaggregated`."""
    from tests.helm import VALUES

    for story in ("story2-pd-qwen3-8b.yaml", "story4-pd-multinode-deepseek-r1.yaml", "router-pd-qwen3-8b.yaml"):
        values = yaml.safe_load((VALUES / story).read_text())
        spec = service(*copy.deepcopy(values["roles"]), layout="disaggregated")
        assert "DisaggregatedSet/svc" in render(spec), story
