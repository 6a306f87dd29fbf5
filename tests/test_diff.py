"""`fusion-helm diff`: what an upgrade does to each LeaderWorkerSet and PodGroup."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fusion_helm.changes import changes
from tests.builders import render, role, service
from tests.helm import VALUES, Helm, fusion_helm


def objects(*roles: dict[str, Any], **spec: Any) -> list[dict[str, Any]]:
    return list(render(service(*roles, **spec)).values())


def table(current: list[dict[str, Any]], new: list[dict[str, Any]]) -> dict[str, str]:
    return {f"{c.kind}/{c.name}": c.change.value for c in changes(current, new)}


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


def test_cli_on_helm_output(helm: Helm, tmp_path: Path) -> None:
    story = VALUES / "story2-pd-qwen3-8b.yaml"
    current = tmp_path / "current.yaml"
    current.write_text(helm.template(story).stdout)  # as `helm get manifest` stores it: post-rendered
    new = helm.template(story, post_render=False, extra=("--set", "roles[1].replicas=5")).stdout
    result = fusion_helm("diff", current, "-", "-o", "json", stdin=new)
    found = {(c["kind"], c["name"]): c["change"] for c in json.loads(result.stdout)}
    assert found.pop(("LeaderWorkerSet", "qwen-inference-service-decode-4")) == "created"
    assert set(found.values()) == {"unchanged"} and len(found) == 7
    text = fusion_helm("diff", current, "-", stdin=new).stdout
    assert text.endswith("1 created, 0 deleted, 0 restarted, 0 updated, 7 unchanged\n")
