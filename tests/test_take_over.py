"""Taking over plain LeaderWorkerSets: a chart that emits them, rendered by real helm 3 and 4 through
the post-renderer; the conversion's mapping, what it refuses, and the names it makes."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from fusion_helm import InvalidSpec, render
from fusion_helm.convert.leader_worker_set import UNSUPPORTED as REFUSED
from tests.helm import ROOT, Helm, fusion_helm
from tests.schemas import Validators, errors
from tests.test_stories import of_kind

LWS_CHART = ROOT / "tests" / "fixtures" / "lws-chart"
LWS = ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")


def rendered(helm: Helm, *extra: str) -> tuple[str, list[dict[str, Any]]]:
    text = helm.template(chart=LWS_CHART, extra=extra).stdout
    return text, [doc for doc in yaml.safe_load_all(text) if doc]


def chart_objects(helm: Helm) -> dict[str, dict[str, Any]]:
    """The fixture chart's own LeaderWorkerSets, as helm renders them without the post-renderer."""
    out = helm.template(chart=LWS_CHART, post_render=False).stdout
    return {doc["metadata"]["name"]: doc for doc in yaml.safe_load_all(out) if doc and doc["kind"] == LWS[1]}


def test_an_annotated_leader_worker_set_is_taken_over_and_the_rest_pass_through(
        helm: Helm, validators: Validators) -> None:
    text, objects = rendered(helm)
    original = chart_objects(helm)["release-big"]
    lws = of_kind(objects, "LeaderWorkerSet")
    assert [o["metadata"]["name"] for o in lws] == ["release-big-group-0", "release-big-group-1", "release-small"]
    assert [o["metadata"]["name"] for o in of_kind(objects, "PodGroup")] == ["release-big"]
    assert of_kind(objects, "Service")[0]["spec"]["selector"] == {"app": "big-leader"}
    for obj in lws + of_kind(objects, "PodGroup"):
        assert errors(validators(obj["apiVersion"], obj["kind"]), obj) == []

    for index, replica in enumerate(lws[:2]):
        spec = replica["spec"]
        template = spec["leaderWorkerTemplate"]
        assert (spec["replicas"], spec["startupPolicy"]) == (1, "LeaderCreated")
        assert (template["size"], template["restartPolicy"]) == (4, "RecreateGroupOnPodRestart")
        # The user's own commands, no Ray bootstrap added; our labels and the gang's annotations added.
        for key in ("leaderTemplate", "workerTemplate"):
            theirs = original["spec"]["leaderWorkerTemplate"][key]
            ours = template[key]
            assert ours["spec"]["containers"] == theirs["spec"]["containers"]
            assert ours["spec"]["schedulerName"] == "volcano"
            assert ours["metadata"]["labels"]["fusioninfer.io/replica-index"] == str(index)
            assert ours["metadata"]["annotations"]["volcano.sh/task-spec"] == f"group-{index}"
        assert template["leaderTemplate"]["metadata"]["labels"]["app"] == "big-leader"
        assert replica["metadata"]["labels"]["app"] == "big"
        assert replica["metadata"]["annotations"]["team"] == "inference"
        assert "fusioninfer.io/take-over" not in replica["metadata"]["annotations"]

    # What is not taken over comes out unchanged.
    small = text[text.index("name: release-small") - 200:]
    assert yaml.safe_load(small[small.index("apiVersion"):small.index("\n---") if "\n---" in small else None]) \
        == chart_objects(helm)["release-small"]


def test_every_leader_worker_set_on_request(helm: Helm, validators: Validators) -> None:
    _, objects = rendered(helm, "--post-renderer-args", "--take-over-lws")
    lws = {o["metadata"]["name"]: o for o in of_kind(objects, "LeaderWorkerSet")}
    assert sorted(lws) == ["release-big-group-0", "release-big-group-1", "release-small-group-0"]
    small = lws["release-small-group-0"]
    assert errors(validators(*LWS), small) == []
    template = small["spec"]["leaderWorkerTemplate"]
    # No leaderTemplate: the workerTemplate serves as leader, as in LWS; restartPolicy None carried over.
    assert "leaderTemplate" not in template and template["size"] == 1 and template["restartPolicy"] == "None"
    assert template["workerTemplate"]["spec"]["containers"][0]["args"] == ["--model", "Qwen/Qwen3-8B"]
    assert "schedulerName" not in template["workerTemplate"]["spec"]  # one pod per replica: no gang
    assert [o["metadata"]["name"] for o in of_kind(objects, "PodGroup")] == ["release-big"]


def test_taken_over_output_is_stable_when_post_rendered_again(helm: Helm) -> None:
    text, _ = rendered(helm, "--post-renderer-args", "--take-over-lws")
    assert render(text, True) == text


def leader_worker_set(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": {"name": "vllm", "annotations": {"fusioninfer.io/take-over": "true"}},
            "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": {"containers": [
                {"name": "vllm", "image": "vllm/vllm-openai:v0.11.0"}]}}}, **spec}}


def with_template(**fields: Any) -> dict[str, Any]:
    obj = leader_worker_set()
    obj["spec"]["leaderWorkerTemplate"].update(fields)
    return obj


UNSUPPORTED = {
    "rollout partition": (
        leader_worker_set(rolloutStrategy={"type": "RollingUpdate", "rollingUpdateConfiguration": {"partition": 1}}),
        "spec.rolloutStrategy.rollingUpdateConfiguration", "rolls out across replicas"),
    "subGroupPolicy": (
        with_template(subGroupPolicy={"subGroupSize": 2}), "spec.leaderWorkerTemplate.subGroupPolicy",
        "splits a replica into subgroups"),
    "volumeClaimTemplates": (
        with_template(volumeClaimTemplates=[{"metadata": {"name": "cache"}}]),
        "spec.leaderWorkerTemplate.volumeClaimTemplates", "is not carried"),
    "persistentVolumeClaimRetentionPolicy": (
        with_template(persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete"}),
        "spec.leaderWorkerTemplate.persistentVolumeClaimRetentionPolicy", "goes with volumeClaimTemplates"),
    "a shared subdomain": (
        leader_worker_set(networkConfig={"subdomainPolicy": "Shared"}), "spec.networkConfig.subdomainPolicy",
        "Shared puts every replica under one subdomain"),
    "restart after start": (
        with_template(restartPolicy="RecreateGroupAfterStart"), "spec.leaderWorkerTemplate.restartPolicy",
        "'RecreateGroupAfterStart'"),
    "no containers": (
        with_template(workerTemplate={"spec": {}}), "spec.leaderWorkerTemplate.workerTemplate.spec.containers",
        "is required"),
    "a bad leader template": (
        with_template(leaderTemplate={"metadata": {"labels": {"a": 1}}, "spec": {"containers": [{"name": "l"}]}}),
        "spec.leaderWorkerTemplate.leaderTemplate.metadata.labels.a", "must be of type string"),
    "a multi-node leader that waits": (
        leader_worker_set(startupPolicy="LeaderReady"), "spec.startupPolicy",
        "the leader would wait for them forever"),
    "a leader template with the Ray bootstrap": (
        {**with_template(leaderTemplate={"spec": {"containers": [{"name": "l"}]}}),
         "metadata": {"name": "vllm", "annotations": {"fusioninfer.io/take-over": "true",
                                                      "fusioninfer.io/ray-bootstrap": "true"}}},
        "spec.leaderWorkerTemplate.leaderTemplate", "must be absent with fusioninfer.io/ray-bootstrap"),
    "size 0": (with_template(size=0), "spec.leaderWorkerTemplate.size", "must be a whole number >= 1, got 0"),
}


@pytest.mark.parametrize("case", sorted(UNSUPPORTED))
def test_what_cannot_be_honoured_is_an_error_naming_the_field(case: str) -> None:
    obj, path, message = UNSUPPORTED[case]
    with pytest.raises(InvalidSpec) as raised:
        render(yaml.safe_dump(obj))
    assert (raised.value.where, raised.value.path) == ("LeaderWorkerSet vllm", path)
    assert message in raised.value.message


def test_every_lws_field_is_either_carried_over_or_refused(upstream_crds: dict[tuple[str, str], Any]) -> None:
    """The conversion knows each field of the LWS v1 spec: a field new upstream fails this test."""
    spec = upstream_crds[LWS]["properties"]["spec"]["properties"]
    fields = {f"spec.{name}" for name in spec} | {f"spec.leaderWorkerTemplate.{name}"
                                                  for name in spec["leaderWorkerTemplate"]["properties"]}
    carried = {"spec.replicas", "spec.startupPolicy", "spec.leaderWorkerTemplate", "spec.leaderWorkerTemplate.size",
               "spec.leaderWorkerTemplate.leaderTemplate", "spec.leaderWorkerTemplate.workerTemplate",
               "spec.leaderWorkerTemplate.restartPolicy",
               "spec.rolloutStrategy",  # its type, RollingUpdate, is what each replica's LWS does
               "spec.networkConfig"}    # UniquePerReplica, what per-replica LeaderWorkerSets give
    refused = {".".join(path[:3]) for path in REFUSED if path[1] == "leaderWorkerTemplate"}
    assert fields - carried == refused
    assert {path for _, path, _ in UNSUPPORTED.values()} >= {".".join(path) for path in REFUSED}


def test_generated_names_never_replace_another_object() -> None:
    taken = leader_worker_set()
    clash = copy.deepcopy(taken)
    clash["metadata"] = {"name": "vllm-group-1"}
    stream = yaml.safe_dump(taken) + "---\n" + yaml.safe_dump(clash)
    with pytest.raises(InvalidSpec, match=r"LeaderWorkerSet vllm: metadata.name: makes LeaderWorkerSet vllm-group-1, "
                                          r"which the stream already has \(document 2\); rename one"):
        render(stream)


def test_a_service_selecting_a_taken_over_lws_by_name_is_an_error() -> None:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api"},
               "spec": {"selector": {"leaderworkerset.sigs.k8s.io/name": "vllm"}, "ports": [{"port": 80}]}}
    with pytest.raises(InvalidSpec) as raised:
        render(yaml.safe_dump(leader_worker_set()) + "---\n" + yaml.safe_dump(service))
    assert (raised.value.where, raised.value.path) == ("Service api",
                                                       "spec.selector.leaderworkerset.sigs.k8s.io/name")
    assert "select fusioninfer.io/service: vllm instead" in raised.value.message


def test_without_the_annotation_nothing_changes(tmp_path: Path) -> None:
    obj = leader_worker_set()
    del obj["metadata"]["annotations"]
    text = "---\n" + yaml.safe_dump(obj)
    assert render(text) == text


def test_fusion_helm_takes_over_too(helm: Helm) -> None:
    plain = helm.template(chart=LWS_CHART, post_render=False).stdout
    names = [doc["metadata"]["name"] for doc in yaml.safe_load_all(
        fusion_helm("render", "--take-over-lws", "-", stdin=plain).stdout) if doc and doc["kind"] == LWS[1]]
    assert names == ["release-big-group-0", "release-big-group-1", "release-small-group-0"]
    # Without the flag, the annotated one only: its PodGroup and two replicas.
    assert fusion_helm("validate", "-", stdin=plain).stdout == \
        "standard input: valid (0 InferenceService(s), 3 generated object(s))\n"


def test_any_single_mutation_is_taken_over_or_gives_one_clear_error() -> None:
    """Whatever shape a LeaderWorkerSet has, the take-over renders it or names what is wrong."""
    from tests.test_validation import mutations

    obj = leader_worker_set()
    obj["spec"]["leaderWorkerTemplate"]["leaderTemplate"] = {"metadata": {"labels": {"a": "b"}},
                                                             "spec": {"containers": [{"name": "l", "image": "x"}]}}
    tried = 0
    for variant in mutations(obj):
        tried += 1
        try:
            render(yaml.safe_dump(variant))
        except InvalidSpec as error:
            assert error.path or error.where.startswith("document"), error
    assert tried > 200


def test_the_ray_bootstrap_on_request() -> None:
    obj = leader_worker_set()
    obj["metadata"]["annotations"]["fusioninfer.io/ray-bootstrap"] = "true"
    obj["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["args"] = ["--model", "m"]
    lws = [doc for doc in yaml.safe_load_all(render(yaml.safe_dump(obj))) if doc and doc["kind"] == LWS[1]]
    assert [o["metadata"]["name"] for o in lws] == ["vllm-group-0", "vllm-group-1"]
    template = lws[0]["spec"]["leaderWorkerTemplate"]
    [leader] = template["leaderTemplate"]["spec"]["containers"]
    [worker] = template["workerTemplate"]["spec"]["containers"]
    assert leader["command"] == worker["command"] == ["/bin/sh", "-c"]
    assert "ray start --head" in leader["args"][0] and "vllm serve --model m" in leader["args"][0]
    assert "ray start --address" in worker["args"][0]
    assert "fusioninfer.io/ray-bootstrap" not in lws[0]["metadata"].get("annotations", {})
