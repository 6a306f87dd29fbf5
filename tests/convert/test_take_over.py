"""Taking over plain LeaderWorkerSets: a chart that emits them, rendered by real helm 3 and 4 through
the post-renderer; the conversion's mapping, what it refuses, and the names it makes."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from fusion_helm import InvalidSpec, render
from fusion_helm.convert.leader_worker_set import ROLE_LAYOUT_UNSUPPORTED as REFUSED_WHOLE
from fusion_helm.convert.leader_worker_set import UNSUPPORTED as REFUSED
from fusion_helm.options import Options
from tests.helm import Helm, fusion_helm, postrender
from tests.schemas import Validators, errors
from tests.support import LWS_CHART, ROLLOUT_CHART, of_kind

LWS = ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")


def rendered(helm: Helm, *extra: str, chart: Path = LWS_CHART) -> tuple[str, list[dict[str, Any]]]:
    text = helm.template(chart=chart, extra=extra).stdout
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
    assert render(text, Options(take_over_every_leader_worker_set=True)) == text


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
        {**with_template(leaderTemplate={"spec": {"containers": [{"name": "l", "image": "i"}]}}),
         "metadata": {"name": "vllm", "annotations": {"fusioninfer.io/take-over": "true",
                                                      "fusioninfer.io/ray-bootstrap": "true"}}},
        "spec.leaderWorkerTemplate.leaderTemplate", "must be absent with fusioninfer.io/ray-bootstrap"),
    "size 0": (with_template(size=0), "spec.leaderWorkerTemplate.size", "must be a whole number >= 1, got 0"),
    "a leader container without an image": (
        with_template(leaderTemplate={"spec": {"containers": [{"name": "l"}]}}),
        "spec.leaderWorkerTemplate.leaderTemplate.spec.containers[0].image", "Kubernetes runs no container without"),
    "a pod label Kubernetes refuses": (
        with_template(leaderTemplate={"metadata": {"labels": {"app": "a b"}}, "spec": {"containers": [
            {"name": "l", "image": "i"}]}}),
        "spec.leaderWorkerTemplate.leaderTemplate.metadata.labels.app", "must be a label value"),
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


LEADER_SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "vllm-leader"},
                  "spec": {"selector": {"leaderworkerset.sigs.k8s.io/name": "vllm", "role": "leader"},
                           "ports": [{"name": "http", "port": 8080, "targetPort": 8080}]}}
"""LWS's vLLM example's Service: the leaders, by their LeaderWorkerSet's name and a label its leader
template sets."""


def test_a_service_selecting_a_taken_over_lws_by_name_is_carried_through() -> None:
    """LWS labels the taken-over pods with the per-replica LeaderWorkerSets' names: the Service selects
    them by the service label every one of them carries instead, the rest of its selector kept."""
    lws = leader_worker_set()
    lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"] = copy.deepcopy(
        lws["spec"]["leaderWorkerTemplate"]["workerTemplate"])
    lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["metadata"] = {"labels": {"role": "leader"}}
    text = render(yaml.safe_dump(lws) + "---\n" + yaml.safe_dump(LEADER_SERVICE))
    objects = list(yaml.safe_load_all(text))
    [service] = [o for o in objects if o["kind"] == "Service"]
    assert service == {**LEADER_SERVICE, "spec": {**LEADER_SERVICE["spec"], "selector": {
        "fusioninfer.io/service": "vllm", "role": "leader"}}}
    for replica in (o for o in objects if o["kind"] == "LeaderWorkerSet"):  # what its pods carry
        leader = replica["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["metadata"]["labels"]
        assert {"fusioninfer.io/service": "vllm", "role": "leader"}.items() <= leader.items()
    assert render(text) == text  # post-rendered again: nothing changes


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
        "standard input: valid (0 InferenceService(s), 4 generated object(s))\n"  # the Service carried through


def test_any_single_mutation_is_taken_over_or_gives_one_clear_error() -> None:
    """Whatever shape a LeaderWorkerSet has, the take-over renders it or names what is wrong."""
    obj = leader_worker_set()
    obj["spec"]["leaderWorkerTemplate"]["leaderTemplate"] = {"metadata": {"labels": {"a": "b"}},
                                                             "spec": {"containers": [{"name": "l", "image": "x"}]}}
    every_mutation_renders_or_names_a_field(obj)


def every_mutation_renders_or_names_a_field(obj: dict[str, Any]) -> None:
    from tests.support import mutations

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
    assert leader["command"][:2] == worker["command"][:2] == ["/bin/sh", "-c"]
    assert leader["command"][2].startswith("ray start --head") and leader["command"][3] == "ray-leader"
    assert leader["args"] == ["vllm", "serve", "--model", "m", "--distributed-executor-backend", "ray"]
    assert "ray start --address" in worker["command"][2] and worker["args"] == []
    assert "fusioninfer.io/ray-bootstrap" not in lws[0]["metadata"].get("annotations", {})


# The role layout: the LeaderWorkerSet kept whole, under its own name.

ROLE_LAYOUT_CHOICES = {
    "by its annotation": (),
    "by the flag": ("--set", "layout=", "--post-renderer-args", "--take-over-layout=role"),
    "by the flag, taking over every one": ("--set", "layout=", "--set", "takeOver=", "--post-renderer-args",
                                           "--take-over-lws", "--post-renderer-args", "--take-over-layout=role"),
}


@pytest.mark.parametrize("chosen", sorted(ROLE_LAYOUT_CHOICES))
def test_the_role_layout_keeps_the_upstream_sample_whole(helm: Helm, validators: Validators, chosen: str) -> None:
    text, objects = rendered(helm, *ROLE_LAYOUT_CHOICES[chosen], chart=ROLLOUT_CHART)
    original = next(doc for doc in yaml.safe_load_all(helm.template(chart=ROLLOUT_CHART, post_render=False).stdout)
                    if doc and doc["kind"] == LWS[1])
    [lws] = of_kind(objects, "LeaderWorkerSet")
    [pod_group] = of_kind(objects, "PodGroup")
    for obj in (lws, pod_group):
        assert errors(validators(obj["apiVersion"], obj["kind"]), obj) == []
    assert lws["metadata"]["name"] == pod_group["metadata"]["name"] == "release"
    labels = lws["metadata"]["labels"]
    assert labels == {"app.kubernetes.io/name": "leaderworkerset", "fusioninfer.io/service": "release",
                      "fusioninfer.io/component-type": "worker", "fusioninfer.io/role-name": "group",
                      "fusioninfer.io/spec-hash": labels["fusioninfer.io/spec-hash"]}
    assert "annotations" not in lws["metadata"]  # neither the take-over nor the layout annotation is carried
    spec, theirs = lws["spec"], original["spec"]
    assert (spec["replicas"], spec["startupPolicy"], spec["rolloutStrategy"]) == (3, "LeaderCreated", {
        "type": "RollingUpdate", "rollingUpdateConfiguration": {"maxUnavailable": 2, "maxSurge": 2}})
    assert spec["rolloutStrategy"] == theirs["rolloutStrategy"]
    template = spec["leaderWorkerTemplate"]
    assert (template["size"], template["restartPolicy"]) == (4, "RecreateGroupOnPodRestart")
    for key in ("leaderTemplate", "workerTemplate"):
        ours = template[key]
        assert ours["spec"]["containers"] == theirs["leaderWorkerTemplate"][key]["spec"]["containers"]
        assert ours["spec"]["schedulerName"] == "volcano"
        assert ours["metadata"]["labels"]["fusioninfer.io/service"] == "release"
        assert "fusioninfer.io/replica-index" not in ours["metadata"]["labels"]  # LWS's group index says it
        assert ours["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "release",
                                                   "volcano.sh/task-spec": "group"}
    assert template["leaderTemplate"]["metadata"]["labels"]["role"] == "leader"
    # The first group is the gang's minimum; the others, and the rollout's surge, are placed as capacity allows.
    assert pod_group["spec"]["minMember"] == 4
    assert [p["labelSelector"]["matchExpressions"][0]["key"] for p in pod_group["spec"]["subGroupPolicy"]] == \
        ["leaderworkerset.sigs.k8s.io/group-index"] * 2
    # The Service selecting the leaders by the LeaderWorkerSet's name passes as it is: the name is kept.
    [service] = of_kind(objects, "Service")
    assert service["spec"]["selector"] == {"leaderworkerset.sigs.k8s.io/name": "release", "role": "leader"}
    assert render(text) == text  # post-rendering again changes nothing


@pytest.mark.parametrize("extra", [("--set", "layout=replica"),
                                   ("--set", "layout=replica", "--post-renderer-args", "--take-over-layout=role"),
                                   ("--set", "layout=")], ids=["annotated", "annotation over the flag", "default"])
def test_the_replica_layout_still_refuses_the_sample(helm: Helm, extra: tuple[str, ...]) -> None:
    message = ("LeaderWorkerSet release: spec.rolloutStrategy.rollingUpdateConfiguration: cannot be taken over: it "
               "rolls out across replicas, but each replica becomes its own LeaderWorkerSet and `helm upgrade` updates "
               "them together; remove it")
    result = helm.template(chart=ROLLOUT_CHART, extra=extra, check=False)
    assert result.returncode != 0 and result.stdout == ""
    if helm.major == 3:
        assert message in result.stderr
        return
    # Helm 4.1 drops a post-renderer plugin's standard error: the same arguments, outside helm.
    assert 'plugin "fusion-postrender" exited with error' in result.stderr
    values, args = extra[:2], extra[3::2]
    raw = helm.template(chart=ROLLOUT_CHART, post_render=False, extra=values).stdout
    direct = postrender(*args, stdin=raw)
    assert (direct.returncode, direct.stderr) == (1, f"fusion-postrender: {message}\n")


def whole(**spec: Any) -> dict[str, Any]:
    """A LeaderWorkerSet annotated to be taken over in the role layout."""
    obj = leader_worker_set(**spec)
    obj["metadata"]["annotations"]["fusioninfer.io/layout"] = "role"
    return obj


def rendered_whole(obj: dict[str, Any], every_one: bool = False, layout: str = "replica"
                   ) -> dict[str, dict[str, Any]]:
    options = Options(take_over_every_leader_worker_set=every_one, take_over_layout=layout)
    return {f"{doc['kind']}/{doc['metadata']['name']}": doc
            for doc in yaml.safe_load_all(render(yaml.safe_dump(obj), options)) if doc}


ROLE_LAYOUT_REFUSED = {
    "maxSurge over 100%": (
        whole(rolloutStrategy={"type": "RollingUpdate", "rollingUpdateConfiguration": {"maxSurge": "150%"}}),
        "spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge",
        "must be a count (>= 0) or a percentage up to 100% such as \"25%\", got '150%'"),
    "maxSurge not a number": (
        whole(rolloutStrategy={"type": "RollingUpdate", "rollingUpdateConfiguration": {"maxSurge": "two"}}),
        "spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge", "got 'two'"),
    "no group could ever be replaced": (
        whole(rolloutStrategy={"type": "RollingUpdate", "rollingUpdateConfiguration": {
            "maxUnavailable": "10%", "maxSurge": 0}}),
        "spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable", "and maxSurge are both 0 at 2 replica(s)"),
    "subGroupPolicy": (
        {**whole(), "spec": {**whole()["spec"], "leaderWorkerTemplate": {
            **whole()["spec"]["leaderWorkerTemplate"], "subGroupPolicy": {"subGroupSize": 2}}}},
        "spec.leaderWorkerTemplate.subGroupPolicy", "cannot be taken over in layout role: it splits each group"),
    "a layout of neither kind": (
        {**whole(), "metadata": {"name": "vllm", "annotations": {"fusioninfer.io/take-over": "true",
                                                                  "fusioninfer.io/layout": "Role"}}},
        "metadata.annotations.fusioninfer.io/layout", "must be replica or role, got 'Role'"),
    "a multi-node leader that waits": (
        whole(startupPolicy="LeaderReady"), "spec.startupPolicy", "the leader would wait for them forever"),
}


@pytest.mark.parametrize("case", sorted(ROLE_LAYOUT_REFUSED))
def test_what_the_role_layout_cannot_honour_is_an_error_naming_the_field(case: str) -> None:
    obj, path, message = ROLE_LAYOUT_REFUSED[case]
    with pytest.raises(InvalidSpec) as raised:
        render(yaml.safe_dump(obj))
    assert (raised.value.where, raised.value.path) == ("LeaderWorkerSet vllm", path)
    assert message in raised.value.message


def test_the_role_layout_carries_what_the_replica_layout_refuses(validators: Validators) -> None:
    claims = {"volumeClaimTemplates": [{"metadata": {"name": "cache"}, "spec": {
                  "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}}],
              "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"}}
    obj = whole(networkConfig={"subdomainPolicy": "Shared"}, replicas=20_000,
                rolloutStrategy={"type": "RollingUpdate", "rollingUpdateConfiguration": {"partition": 1}})
    obj["spec"]["leaderWorkerTemplate"].update(claims)
    lws = rendered_whole(obj)["LeaderWorkerSet/vllm"]
    assert errors(validators(*LWS), lws) == []
    assert lws["spec"]["networkConfig"] == {"subdomainPolicy": "Shared"}
    assert lws["spec"]["rolloutStrategy"] == {"type": "RollingUpdate", "rollingUpdateConfiguration": {"partition": 1}}
    assert lws["spec"]["replicas"] == 20_000  # one LeaderWorkerSet whatever the count
    assert {key: lws["spec"]["leaderWorkerTemplate"][key] for key in claims} == claims
    refused = []
    obj["metadata"]["annotations"]["fusioninfer.io/layout"] = "replica"
    for _ in range(len(claims) + 4):
        try:
            render(yaml.safe_dump(obj))
            break
        except InvalidSpec as error:
            refused.append(error.path)
            obj = _without(obj, error.path)
    assert refused == ["spec.rolloutStrategy.rollingUpdateConfiguration",
                       "spec.leaderWorkerTemplate.volumeClaimTemplates",
                       "spec.leaderWorkerTemplate.persistentVolumeClaimRetentionPolicy", "spec.replicas",
                       "spec.networkConfig.subdomainPolicy"]


ACCEPTED = {"spec.replicas": 2, "spec.networkConfig.subdomainPolicy": "UniquePerReplica"}
"""What the replica layout takes instead of a refused value; other refused fields it takes only absent."""


def _without(obj: dict[str, Any], path: str) -> dict[str, Any]:
    """OBJ with the field at PATH (a key on a dotted path) accepted or removed."""
    obj = copy.deepcopy(obj)
    *parents, last = path.split(".")
    node = obj
    for key in parents:
        node = node[key]
    if path in ACCEPTED:
        node[last] = ACCEPTED[path]
    else:
        del node[last]
    return obj


def test_a_role_layout_without_a_rollout_is_lws_s_default() -> None:
    lws = rendered_whole(whole(rolloutStrategy={"type": "RollingUpdate"}))["LeaderWorkerSet/vllm"]
    assert "rolloutStrategy" not in lws["spec"] and "networkConfig" not in lws["spec"]
    assert list(lws["spec"]["leaderWorkerTemplate"]) == ["size", "restartPolicy", "workerTemplate"]


def test_the_flag_sets_the_layout_of_those_without_the_annotation() -> None:
    plain = leader_worker_set()
    assert sorted(rendered_whole(plain, False, "role")) == ["LeaderWorkerSet/vllm", "PodGroup/vllm"]
    assert sorted(rendered_whole(plain)) == ["LeaderWorkerSet/vllm-group-0", "LeaderWorkerSet/vllm-group-1",
                                            "PodGroup/vllm"]
    annotated = copy.deepcopy(plain)
    annotated["metadata"]["annotations"]["fusioninfer.io/layout"] = "replica"
    assert sorted(rendered_whole(annotated, False, "role")) == sorted(rendered_whole(plain))


def test_a_service_selecting_an_lws_kept_whole_by_name_keeps_working() -> None:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api"},
               "spec": {"selector": {"leaderworkerset.sigs.k8s.io/name": "vllm"}, "ports": [{"port": 80}]}}
    stream = yaml.safe_dump(whole()) + "---\n" + yaml.safe_dump(service)
    assert rendered_whole(whole())["LeaderWorkerSet/vllm"]["metadata"]["name"] == "vllm"
    assert yaml.safe_dump(service) in render(stream)
    replicas = render(stream.replace("fusioninfer.io/layout: role", "fusioninfer.io/layout: replica"))
    assert yaml.safe_dump(service) not in replicas and "fusioninfer.io/service: vllm\n" in replicas


def test_every_lws_field_is_either_carried_over_or_refused_in_the_role_layout(
        upstream_crds: dict[tuple[str, str], Any]) -> None:
    spec = upstream_crds[LWS]["properties"]["spec"]["properties"]
    fields = {f"spec.{name}" for name in spec} | {f"spec.leaderWorkerTemplate.{name}"
                                                  for name in spec["leaderWorkerTemplate"]["properties"]}
    carried = {"spec.replicas", "spec.startupPolicy", "spec.rolloutStrategy", "spec.networkConfig",
               "spec.leaderWorkerTemplate", "spec.leaderWorkerTemplate.size",
               "spec.leaderWorkerTemplate.leaderTemplate", "spec.leaderWorkerTemplate.workerTemplate",
               "spec.leaderWorkerTemplate.restartPolicy",
               "spec.leaderWorkerTemplate.volumeClaimTemplates",
               "spec.leaderWorkerTemplate.persistentVolumeClaimRetentionPolicy"}
    assert fields - carried == {".".join(path) for path in REFUSED_WHOLE}
    assert {path for _, path, _ in ROLE_LAYOUT_REFUSED.values()} >= {".".join(path) for path in REFUSED_WHOLE}


def test_any_single_mutation_in_the_role_layout_is_taken_over_or_gives_one_clear_error() -> None:
    obj = whole(rolloutStrategy={"type": "RollingUpdate", "rollingUpdateConfiguration": {
        "maxUnavailable": 1, "maxSurge": "50%", "partition": 1}}, networkConfig={"subdomainPolicy": "Shared"})
    every_mutation_renders_or_names_a_field(obj)


def test_the_layout_names_are_the_models() -> None:
    from fusion_helm.base import kinds
    from fusion_helm.model import Layout

    # Every layout but disaggregated, whose DisaggregatedSet needs a prefill and a decode role.
    assert tuple(layout for layout in Layout if layout is not Layout.DISAGGREGATED) == kinds.TAKE_OVER_LAYOUTS
    assert Layout(kinds.TAKE_OVER_LAYOUTS[0]) is Layout.REPLICA  # the default


def test_the_commands_take_the_layout(helm: Helm) -> None:
    plain = helm.template(chart=ROLLOUT_CHART, post_render=False, extra=("--set", "layout=")).stdout
    post = postrender("--take-over-layout", "role", stdin=plain)
    assert post.returncode == 0, post.stderr
    assert post.stdout == fusion_helm("render", "--take-over-layout=role", "-", stdin=plain).stdout
    assert "name: release-group-0" not in post.stdout and "rollingUpdateConfiguration" in post.stdout
    assert fusion_helm("validate", "--take-over-layout", "role", "-", stdin=plain).stdout == \
        "standard input: valid (0 InferenceService(s), 2 generated object(s))\n"
    for wrong, message in ((["--take-over-layout=Role"], "argument --take-over-layout: invalid choice: 'Role' "
                                                         "(choose from 'replica', 'role')"),
                           (["--take-over-layout"], "argument --take-over-layout: expected one argument")):
        refused = postrender(*wrong, stdin=plain)
        assert (refused.returncode, refused.stdout) == (2, "")
        assert refused.stderr.endswith(f"fusion-postrender: error: {message}\n"), refused.stderr
        assert fusion_helm("render", *wrong, "-", stdin=plain, check=False).returncode == 2
