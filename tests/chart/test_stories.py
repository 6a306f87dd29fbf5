"""The design's four user stories through real `helm template --post-renderer`, helm 3 and 4."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.builders import policies
from tests.helm import VALUES, Helm
from tests.support import of_kind, render

LWS = "LeaderWorkerSet"

# story file → (service, [(LWS name, size)],
#               PodGroup subgroups {role: (subGroupSize, minSubGroups)} or None, GPUs of the atomic minimum)
STORIES: dict[str, tuple[str, list[tuple[str, int]], dict[str, tuple[int, int]] | None, str]] = {
    "story1-monolithic-qwen3-8b.yaml": (
        "qwen-inference", [("qwen-inference-inference-0", 1)], None, "1"),
    "story2-pd-qwen3-8b.yaml": (
        "qwen-inference-service",
        [(f"qwen-inference-service-prefill-{i}", 1) for i in range(2)]
        + [(f"qwen-inference-service-decode-{i}", 1) for i in range(4)],
        {"prefill": (1, 1), "decode": (1, 1)}, "2"),
    "story3-multinode-deepseek-r1.yaml": (
        "deepseek-r1-inference",
        [("deepseek-r1-inference-inference-0", 4), ("deepseek-r1-inference-inference-1", 4)],
        {"inference": (4, 1)}, "32"),
    "story4-pd-multinode-deepseek-r1.yaml": (
        "deepseek-r1-disagg",
        [("deepseek-r1-disagg-prefill-0", 2), ("deepseek-r1-disagg-decode-0", 4),
         ("deepseek-r1-disagg-decode-1", 4)],
        {"prefill": (2, 1), "decode": (4, 1)}, "48"),
}


def pod_templates(lws: dict[str, Any]) -> list[dict[str, Any]]:
    template = lws["spec"]["leaderWorkerTemplate"]
    return [template[key] for key in ("leaderTemplate", "workerTemplate") if key in template]


@pytest.mark.parametrize("story", sorted(STORIES))
def test_story_objects(helm: Helm, story: str) -> None:
    service, expected_lws, subgroups, gpus = STORIES[story]
    objects = render(helm, story)

    assert [o["metadata"]["name"] for o in of_kind(objects, "InferenceService")] == [service]
    lws = of_kind(objects, LWS)
    assert [(o["metadata"]["name"], o["spec"]["leaderWorkerTemplate"]["size"]) for o in lws] \
        == expected_lws
    assert all(o["spec"]["replicas"] == 1 for o in lws)
    assert {o["kind"] for o in objects} <= {"InferenceService", LWS, "PodGroup", "PodDisruptionBudget",
                                            "NetworkPolicy"}
    # A multi-node role's drain budget, in whole replicas (docs/autoscaling.md).
    multinode = {name.rsplit("-", 1)[0] for name, size in expected_lws if size > 1}
    assert {o["metadata"]["name"] for o in of_kind(objects, "PodDisruptionBudget")} == multinode

    groups = of_kind(objects, "PodGroup")
    if subgroups is None:
        assert groups == []
        for obj in lws:
            for template in pod_templates(obj):
                assert "schedulerName" not in template["spec"]
                assert "annotations" not in template["metadata"]
        return
    [group] = groups
    assert group["metadata"]["name"] == service
    # level role: per role the first replica is required, the others each as capacity allows
    assert policies(group) == {
        name: policy for role, (size, minimum) in subgroups.items() for name, policy in (
            (f"{role}/minimum", (size, minimum, "In 0")), (f"{role}/more", (size, 0, "NotIn 0")))}
    for policy in group["spec"]["subGroupPolicy"]:
        assert policy["labelSelector"]["matchLabels"] == {
            "fusioninfer.io/service": service, "fusioninfer.io/role-name": policy["name"].split("/")[0]}
        assert policy["matchLabelKeys"] == ["fusioninfer.io/replica-index"]
    assert "minTaskMember" not in group["spec"]
    assert group["spec"]["minMember"] == sum(size * minimum for size, minimum in subgroups.values())
    assert group["spec"]["minResources"] == {"nvidia.com/gpu": gpus}
    for obj in lws:
        role, index = obj["metadata"]["labels"]["fusioninfer.io/role-name"], \
            obj["metadata"]["labels"]["fusioninfer.io/replica-index"]
        for template in pod_templates(obj):
            assert template["spec"]["schedulerName"] == "volcano"
            assert template["metadata"]["annotations"] == {
                "scheduling.k8s.io/group-name": service, "volcano.sh/task-spec": f"{role}-{index}"}


@pytest.mark.parametrize("story", sorted(STORIES))
def test_labels_and_spec_hash(helm: Helm, story: str) -> None:
    service = STORIES[story][0]
    hashes: dict[str, set[str]] = {}
    for obj in of_kind(render(helm, story), LWS):
        labels = obj["metadata"]["labels"]
        role, index = labels["fusioninfer.io/role-name"], labels["fusioninfer.io/replica-index"]
        assert obj["metadata"]["name"] == f"{service}-{role}-{index}"
        ours = {"fusioninfer.io/service": service,
                "fusioninfer.io/component-type": labels["fusioninfer.io/component-type"],
                "fusioninfer.io/role-name": role, "fusioninfer.io/replica-index": index}
        assert ours.items() <= labels.items()
        assert labels["fusioninfer.io/component-type"] in ("worker", "prefiller", "decoder")
        hashes.setdefault(role, set()).add(labels["fusioninfer.io/spec-hash"])
        for template in pod_templates(obj):
            assert template["metadata"]["labels"] == ours
    # One hash per role: the index and the replica count are not part of it.
    assert all(len(role_hashes) == 1 for role_hashes in hashes.values())


@pytest.mark.parametrize("story", ["story3-multinode-deepseek-r1.yaml", "story4-pd-multinode-deepseek-r1.yaml"])
def test_ray_leader_and_worker_commands(helm: Helm, story: str) -> None:
    """The design's vLLM v0.11.0 images have Ray: their multi-node roles keep the Ray bootstrap, the
    server's words passed to the leader's script as its arguments."""
    values = yaml.safe_load((VALUES / story).read_text())
    args_by_role = {role["name"]: role["template"]["spec"]["containers"][0]["args"] for role in values["roles"]}
    for obj in of_kind(render(helm, story), LWS):
        role = obj["metadata"]["labels"]["fusioninfer.io/role-name"]
        template = obj["spec"]["leaderWorkerTemplate"]
        [leader] = template["leaderTemplate"]["spec"]["containers"]
        [worker] = template["workerTemplate"]["spec"]["containers"]
        assert leader["command"][:2] == worker["command"][:2] == ["/bin/sh", "-c"]
        assert leader["command"][2].startswith("ray start --head --port=6379 || exit 1\n")
        assert leader["command"][3:] == ["ray-leader"]
        assert leader["args"] == ["vllm", "serve", *args_by_role[role], "--distributed-executor-backend", "ray"]
        assert 'until ray start --address="$LWS_LEADER_ADDRESS:6379" --block; do' in worker["command"][2]
        assert worker["command"][3:] == ["ray-worker"] and worker["args"] == []
        assert {"containerPort": 6379} in leader["ports"]
        assert {"containerPort": 8000, "name": "http"} in leader["ports"]
        assert not {"ports", "readinessProbe", "livenessProbe", "startupProbe"} & worker.keys()
        assert leader["resources"] == worker["resources"] == {"limits": {"nvidia.com/gpu": "8"}}


def test_story4_as_the_design_with_its_table_s_gang(helm: Helm) -> None:
    """The design's objects for story 4, except the PodGroup: its minMember 10 would forbid the 1P + 1D
    partial service its own scheduling table promises; the atomic minimum is prefill-0 + one decode."""
    objects = render(helm, "story4-pd-multinode-deepseek-r1.yaml")
    [group] = of_kind(objects, "PodGroup")
    assert group["spec"]["minMember"] == 6
    leader = of_kind(objects, LWS)[0]["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    assert leader["spec"]["containers"][0]["args"] == [
        "vllm", "serve", "--model", "deepseek-ai/DeepSeek-R1", "--tensor-parallel-size", "16", "--kv-transfer-config",
        '{"kv_connector":"PyNcclConnector","kv_role":"kv_producer"}', "--distributed-executor-backend", "ray"]
