"""The pure expansion, through the public API: InferenceService object → generated objects."""

from __future__ import annotations

import copy

import pytest

from fusion_helm import InvalidSpec
from fusion_helm.kio.write import dump
from tests.builders import render, role, service


def test_scaling_one_role_leaves_every_other_replica_byte_identical() -> None:
    before = render(service(role("prefill", "prefiller", 2), role("decode", replicas=4, nodes=2)))
    after = render(service(role("prefill", "prefiller", 2), role("decode", replicas=6, nodes=2)))
    lws_before = {k: dump(v) for k, v in before.items() if k.startswith("LeaderWorkerSet/")}
    lws_after = {k: dump(v) for k, v in after.items() if k.startswith("LeaderWorkerSet/")}
    assert lws_after.keys() - lws_before.keys() == {"LeaderWorkerSet/svc-decode-4", "LeaderWorkerSet/svc-decode-5"}
    assert all(lws_after[name] == text for name, text in lws_before.items())
    assert after["PodGroup/svc"] == before["PodGroup/svc"], "at level role scaling leaves the atomic minimum alone"
    down = render(service(role("prefill", "prefiller", 1), role("decode", replicas=4, nodes=2)))
    assert "LeaderWorkerSet/svc-prefill-1" not in down
    assert dump(down["LeaderWorkerSet/svc-prefill-0"]) == lws_before["LeaderWorkerSet/svc-prefill-0"]


def test_a_template_change_rehashes_only_that_role() -> None:
    def hashes(decode_image: str) -> dict[str, str]:
        objects = render(service(role("prefill", "prefiller"), role("decode", image=decode_image)))
        return {k: v["metadata"]["labels"]["fusioninfer.io/spec-hash"]
                for k, v in objects.items() if k.startswith("LeaderWorkerSet/")}
    old, new = hashes("a:1"), hashes("a:2")
    assert old["LeaderWorkerSet/svc-prefill-0"] == new["LeaderWorkerSet/svc-prefill-0"]
    assert old["LeaderWorkerSet/svc-decode-0"] != new["LeaderWorkerSet/svc-decode-0"]


def test_min_resources_are_exact_sums_over_every_pod() -> None:
    resources = {"requests": {"cpu": "500m", "memory": "16Gi"}, "limits": {"nvidia.com/gpu": "1"}}
    objects = render(service(role("prefill", "prefiller", replicas=3, resources=resources),
                             gangSchedule={"level": "group"}))
    assert objects["PodGroup/svc"]["spec"]["minResources"] == {
        "cpu": "1500m", "memory": "48Gi", "nvidia.com/gpu": "3"}


def test_init_containers_and_sidecars_count_as_the_scheduler_counts_them() -> None:
    decode = role("decode", replicas=2, resources={"requests": {"cpu": "1"}})
    decode["template"]["spec"]["initContainers"] = [
        {"name": "proxy", "image": "p", "restartPolicy": "Always", "resources": {"requests": {"cpu": "250m"}}},
        {"name": "fetch", "image": "f", "resources": {"requests": {"cpu": "2"}}},
    ]
    objects = render(service(decode, gangSchedule={"level": "group"}))
    # 2 replicas * max(app 1 + sidecar 0.25, init 2 + sidecar 0.25) = 2 * 2.25 CPUs
    assert objects["PodGroup/svc"]["spec"]["minResources"] == {"cpu": "4500m"}


@pytest.mark.parametrize("roles,gang", [
    ([role("a", "worker")], False),
    ([role("a", "worker", replicas=3), role("b", "worker")], False),
    ([role("a", "worker", nodes=2)], True),
    ([role("p", "prefiller"), role("d", "decoder")], True),
])
def test_gang_only_where_the_design_asks_for_it(roles, gang: bool) -> None:
    objects = render(service(*roles))
    assert ("PodGroup/svc" in objects) is gang
    for obj in objects.values():
        if obj["kind"] == "LeaderWorkerSet":
            spec = obj["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
            assert spec.get("schedulerName") == ("volcano" if gang else None)


def test_scheduling_strategy_names_the_scheduler() -> None:
    objects = render(service(role("a", "worker"), schedulingStrategy={"schedulerName": "custom"}))
    spec = objects["LeaderWorkerSet/svc-a-0"]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    assert spec["schedulerName"] == "custom"


def test_metadata_labels_go_on_objects_never_on_pod_templates() -> None:
    decode = role("decode")
    decode["template"]["metadata"] = {"labels": {"app": "x"}, "annotations": {"note": "y"}}
    lws = render(service(decode, role("prefill", "prefiller")))["LeaderWorkerSet/svc-decode-0"]
    assert lws["metadata"]["namespace"] == "llm"
    assert lws["metadata"]["labels"]["team"] == "a"
    template = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    assert template["metadata"]["labels"] == {
        "app": "x", "fusioninfer.io/service": "svc", "fusioninfer.io/component-type": "decoder",
        "fusioninfer.io/role-name": "decode", "fusioninfer.io/replica-index": "0"}
    assert template["metadata"]["annotations"] == {
        "note": "y", "scheduling.k8s.io/group-name": "svc", "volcano.sh/task-spec": "decode-0"}


def test_a_user_label_we_would_overwrite_is_an_error() -> None:
    decode = role("decode")
    decode["template"]["metadata"] = {"labels": {"fusioninfer.io/role-name": "other"}}
    with pytest.raises(InvalidSpec) as error:
        render(service(decode))
    assert str(error.value) == (
        "InferenceService svc: spec.roles[0].template.metadata.labels.fusioninfer.io/role-name: is set by "
        "the expansion to 'decode', not 'other'; remove it from the template")


@pytest.mark.parametrize("metadata,field", [
    ({"labels": {"fusioninfer.io/replica-index": "0"}}, "labels.fusioninfer.io/replica-index"),
    ({"annotations": {"volcano.sh/task-spec": "mine"}}, "annotations.volcano.sh/task-spec"),
])
def test_a_per_replica_key_in_the_template_is_an_error(metadata, field: str) -> None:
    decode = role("decode")
    decode["template"]["metadata"] = metadata
    with pytest.raises(InvalidSpec) as error:
        render(service(decode, role("prefill", "prefiller")))
    assert str(error.value) == (f"InferenceService svc: spec.roles[0].template.metadata.{field}: is set for "
                                "each replica by the expansion; remove it from the template")


def test_zero_replicas_make_no_objects_for_the_role() -> None:
    objects = render(service(role("prefill", "prefiller", replicas=0), role("decode", replicas=1)))
    assert sorted(objects) == ["LeaderWorkerSet/svc-decode-0", "NetworkPolicy/svc-decode"]


def test_serving_command_comes_from_the_container_or_the_role() -> None:
    explicit = role("a", "worker", nodes=2, command=["python3", "-m", "vllm.entrypoints.openai.api_server"])
    custom = role("b", "worker", nodes=2)
    custom["multinode"]["servingCommand"] = ["my-vllm", "serve"]
    objects = render(service(explicit, custom))

    def leader_args(name: str) -> list[str]:
        template = objects[f"LeaderWorkerSet/{name}"]["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
        return template["spec"]["containers"][0]["args"]
    assert leader_args("svc-a-0") == ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m",
                                      "--distributed-executor-backend", "ray"]
    assert leader_args("svc-b-0") == ["my-vllm", "serve", "--model", "m", "--distributed-executor-backend", "ray"]


def test_expansion_does_not_modify_its_input() -> None:
    obj = service(role("a", "worker", nodes=3, readinessProbe={"httpGet": {"port": 8000}}))
    original = copy.deepcopy(obj)
    render(obj)
    assert obj == original


@pytest.mark.parametrize("policy,restart", [(None, "RecreateGroupOnPodRestart"),
                                            ("RoleRestart", "RecreateGroupOnPodRestart"), ("None", "None")])
def test_recovery_policy_is_the_lws_restart_policy(policy: str | None, restart: str) -> None:
    decode = role("decode", nodes=2)
    if policy is not None:
        decode["recoveryPolicy"] = policy
    lws = render(service(decode))["LeaderWorkerSet/svc-decode-0"]
    assert lws["spec"]["leaderWorkerTemplate"]["restartPolicy"] == restart


def test_a_recovery_policy_lws_cannot_give_is_refused() -> None:
    decode = role("decode", nodes=2)
    decode["recoveryPolicy"] = "InferGroupRestart"
    with pytest.raises(InvalidSpec) as error:
        render(service(decode))
    assert str(error.value) == ("InferenceService svc: spec.roles[0].recoveryPolicy: must be one of RoleRestart, "
                                "None, got 'InferGroupRestart'")
