"""What an upgrade does to each LeaderWorkerSet and PodGroup: fusion_helm.diff in process, on built
objects and on the chart's post-rendered output; `fusion-helm diff` itself on helm's output once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fusion_helm.diff import ObjectChange, changes, to_json, to_table
from tests.builders import render, role, service
from tests.helm import VALUES, Helm, fusion_helm
from tests.support import Renders


def objects(*roles: dict[str, Any], **spec: Any) -> list[dict[str, Any]]:
    return list(render(service(*roles, **spec)).values())


def table(current: list[dict[str, Any]], new: list[dict[str, Any]]) -> dict[str, str]:
    return {c.subject: c.change.value + (f" ({c.detail})" if c.detail else "") for c in changes(current, new)}


def test_each_kind_of_change() -> None:
    current = objects(role("prefill", "prefiller", replicas=2), role("decode", replicas=2, nodes=2))
    prefill = {**role("prefill", "prefiller", replicas=1), "recoveryPolicy": "None"}
    new = objects(prefill, role("decode", replicas=3, nodes=2, image="vllm/vllm-openai:v0.12.0"))
    assert table(current, new) == {
        "PodGroup/svc": "unchanged",
        "LeaderWorkerSet/svc-decode-0": "restarted",
        "LeaderWorkerSet/svc-decode-1": "restarted",
        "LeaderWorkerSet/svc-decode-2": "created",
        "LeaderWorkerSet/svc-prefill-0": "updated",
        "LeaderWorkerSet/svc-prefill-1": "deleted",
    }


def test_nothing_changes_nothing() -> None:
    current = objects(role("prefill", "prefiller"), role("decode", replicas=2, nodes=2))
    assert set(table(current, current).values()) == {"unchanged"}


def test_the_podgroup_follows_the_minimum() -> None:
    current = objects(role("p", "prefiller"), role("d", replicas=2), gangSchedule={"level": "group"})
    new = objects(role("p", "prefiller"), role("d", replicas=3), gangSchedule={"level": "group"})
    assert table(current, new)["PodGroup/svc"] == "updated"


def test_cli_on_helm_output(helm: Helm, renders: Renders, tmp_path: Path) -> None:
    """`fusion-helm diff` reads the release as stored (post-rendered) and the new render (expanded by
    it) and prints the diff package's changes, as JSON or as a table."""
    story = VALUES / "story2-pd-qwen3-8b.yaml"
    scaled = ("--set", "roles[1].replicas=5")
    current = tmp_path / "current.yaml"
    current.write_text(helm.template(story).stdout)  # as `helm get manifest` stores it: post-rendered
    new = helm.template(story, post_render=False, extra=scaled).stdout
    result = fusion_helm("diff", current, "-", "-o", "json", stdin=new)
    found = {(c["kind"], c["name"]): c["change"] for c in json.loads(result.stdout)}
    assert found.pop(("LeaderWorkerSet", "qwen-inference-service-decode-4")) == "created"
    assert set(found.values()) == {"unchanged"} and len(found) == 7
    in_process = changes(renders(story), renders(story, *scaled))
    assert result.stdout == json.dumps(to_json(in_process), indent=2) + "\n"
    text = fusion_helm("diff", current, "-", stdin=new).stdout
    assert text.endswith("1 created, 0 deleted, 0 restarted, 0 updated, 7 unchanged\n")
    assert text == to_table(in_process)


STORY4 = VALUES / "story4-pd-multinode-deepseek-r1.yaml"


NEW_IMAGE = ("--set", "roles[1].template.spec.containers[0].image=vllm/vllm-openai:v0.12.0")


def story4_changes(renders: Renders, *settings: str) -> list[ObjectChange]:
    """A new decode image on story 4, with SETTINGS on both sides."""
    return changes(renders(STORY4, *settings), renders(STORY4, *settings, *NEW_IMAGE))


def story4_diff(renders: Renders, *settings: str) -> str:
    """What `fusion-helm diff` prints for it."""
    return to_table(story4_changes(renders, *settings))


def story4_diff_json(renders: Renders, *settings: str) -> list[dict[str, Any]]:
    """What `fusion-helm diff -o json` prints for it, read back."""
    return json.loads(json.dumps(to_json(story4_changes(renders, *settings))))


def test_an_image_change_restarts_every_replica_in_the_replica_layout(renders: Renders) -> None:
    assert story4_diff(renders) == (
        "PodGroup/deepseek-r1-disagg                   unchanged\n"
        "LeaderWorkerSet/deepseek-r1-disagg-decode-0   restarted\n"
        "LeaderWorkerSet/deepseek-r1-disagg-decode-1   restarted\n"
        "LeaderWorkerSet/deepseek-r1-disagg-prefill-0  unchanged\n"
        "0 created, 0 deleted, 2 restarted, 0 updated, 2 unchanged\n")


def test_an_image_change_rolls_the_role_in_the_role_layout(renders: Renders) -> None:
    assert story4_diff(renders, "--set", "layout=role") == (
        "PodGroup/deepseek-r1-disagg                 unchanged\n"
        "LeaderWorkerSet/deepseek-r1-disagg-decode   rolling\n"
        "LeaderWorkerSet/deepseek-r1-disagg-prefill  unchanged\n"
        "0 created, 0 deleted, 0 restarted, 1 rolling, 0 updated, 2 unchanged\n")


def test_a_partition_says_which_groups_it_keeps(renders: Renders) -> None:
    canary = ("--set", "layout=role", "--set", "roles[1].rollout.partition=1")
    text = story4_diff(renders, *canary)
    assert "LeaderWorkerSet/deepseek-r1-disagg-decode   rolling (group 1; partition keeps 0)\n" in text
    assert {"kind": "LeaderWorkerSet", "namespace": "default", "name": "deepseek-r1-disagg-decode", "change": "rolling",
            "detail": "group 1; partition keeps 0"} in story4_diff_json(renders, *canary)
    decode = {**role("decode", replicas=4, nodes=2), "rollout": {"partition": 2}}
    current = objects(role("prefill", "prefiller"), decode, layout="role")
    new = objects(role("prefill", "prefiller"), {**decode, "template": {"spec": {"containers": [
        {"name": "vllm", "image": "vllm/vllm-openai:v0.12.0"}]}}}, layout="role")
    [rolling] = [c for c in changes(current, new) if c.change.value == "rolling"]
    assert (rolling.name, rolling.detail) == ("svc-decode", "groups 2-3; partition keeps 0-1")


def test_scaling_a_role_in_the_role_layout_is_an_update() -> None:
    current = objects(role("prefill", "prefiller"), role("decode", replicas=2, nodes=2), layout="role")
    new = objects(role("prefill", "prefiller"), role("decode", replicas=5, nodes=2), layout="role")
    assert table(current, new) == {"PodGroup/svc": "unchanged", "LeaderWorkerSet/svc-decode": "updated",
                                   "LeaderWorkerSet/svc-prefill": "unchanged"}


def test_the_layouts_doc_shows_what_diff_prints(renders: Renders) -> None:
    """docs/layouts.md's diff outputs are the ones the commands it shows print."""
    doc = (VALUES.parent / "docs" / "layouts.md").read_text()
    assert NEW_IMAGE[1] in doc
    for settings in ((), ("--set", "layout=role"), ("--set", "layout=disaggregated")):
        assert story4_diff(renders, *settings) in doc
    canary = story4_diff(renders, "--set", "layout=role", "--set", "roles[1].rollout.partition=1")
    assert next(line for line in canary.splitlines() if "rolling" in line) in doc


def test_a_change_to_any_role_rolls_every_role_of_a_disaggregated_set() -> None:
    """The set's revision hashes every role's template: one changes, all roll to the new revision."""
    current = objects(role("prefill", "prefiller"), role("decode", replicas=2, nodes=2), layout="disaggregated")
    new = objects(role("prefill", "prefiller"), role("decode", replicas=2, nodes=2, image="vllm/vllm-openai:v0.12.0"),
                  layout="disaggregated")
    assert table(current, new) == {
        "PodGroup/svc": "unchanged",
        "DisaggregatedSet/svc role decode": "rolling (a new revision of every role: decode changed)",
        "DisaggregatedSet/svc role prefill": "rolling (a new revision of every role: decode changed)"}
    scaled = objects(role("prefill", "prefiller"), role("decode", replicas=5, nodes=2), layout="disaggregated")
    assert table(current, scaled) == {"PodGroup/svc": "unchanged", "DisaggregatedSet/svc role decode": "updated",
                                      "DisaggregatedSet/svc role prefill": "unchanged"}
    assert set(table(current, current).values()) == {"unchanged"}


def test_switching_to_the_disaggregated_layout_and_rolling_it_in_table_and_json(renders: Renders) -> None:
    current = objects(role("prefill", "prefiller"), role("decode", nodes=2), layout="role")
    new = objects(role("prefill", "prefiller"), role("decode", nodes=2), layout="disaggregated")
    assert table(current, new) == {
        "PodGroup/svc": "updated",
        "DisaggregatedSet/svc role decode": "created", "DisaggregatedSet/svc role prefill": "created",
        "LeaderWorkerSet/svc-decode": "deleted", "LeaderWorkerSet/svc-prefill": "deleted"}
    text = story4_diff(renders, "--set", "layout=disaggregated")
    assert "DisaggregatedSet/deepseek-r1-disagg role decode   rolling (a new revision of every role: decode changed)" \
        in text
    assert {"kind": "DisaggregatedSet", "namespace": "default", "name": "deepseek-r1-disagg", "role": "prefill",
            "change": "rolling", "detail": "a new revision of every role: decode changed"} in story4_diff_json(
        renders, "--set", "layout=disaggregated")
