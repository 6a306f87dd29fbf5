"""Scaling roles with `helm upgrade`: only the scaled role's replicas come or go, highest index first;
every other LeaderWorkerSet is left alone (same generation, same pods); a template change rolls only
its role; an upgrade that changes nothing changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster import LWS, PODGROUP, Cluster, eventually, expected_pods, pods_by_lws, ready_pods, release, scaled
from tests.helm import VALUES, Helm

pytestmark = pytest.mark.cluster

STORY2 = VALUES / "story2-pd-qwen3-8b.yaml"
SERVICE = "qwen-inference-service"
# 2P4D → 2P6D → 1P6D → 1P2D
STEPS = [{"prefill": 2, "decode": 6}, {"prefill": 1, "decode": 6}, {"prefill": 1, "decode": 2}]


def lws_names(replicas: dict[str, int]) -> set[str]:
    return {f"{SERVICE}-{role}-{index}" for role, count in replicas.items() for index in range(count)}


def generations(cluster: Cluster, namespace: str) -> dict[str, int]:
    return {o["metadata"]["name"]: o["metadata"]["generation"] for o in cluster.custom(LWS, namespace)}


def podgroup_spec(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [group] = [o for o in objects if o["kind"] == "PodGroup"]
    return {key: group["spec"][key] for key in ("minMember", "minResources", "subGroupPolicy")}


def test_scaling_roles_touches_only_their_replicas(cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    namespace = f"lifecycle-helm{helm.major}"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(STORY2)
        pods = pods_by_lws(ready_pods(cluster, namespace, expected_pods(STORY2)))
        generation = generations(cluster, namespace)

        for step, replicas in enumerate(STEPS):
            values = scaled(STORY2, replicas, tmp_path / f"step{step}.yaml")
            installed.install(values, verb="upgrade")
            wanted = lws_names(replicas)
            after = pods_by_lws(ready_pods(cluster, namespace, expected_pods(values), owners=wanted))
            assert set(generations(cluster, namespace)) == wanted
            kept = wanted & pods.keys()
            for lws in kept:
                assert after[lws] == pods[lws], f"step {step}: pods of {lws} were replaced"
                assert generations(cluster, namespace)[lws] == generation[lws], f"step {step}: {lws} was changed"
            [live] = cluster.custom(PODGROUP, namespace)
            assert podgroup_spec([live]) == podgroup_spec(installed.manifest())
            pods, generation = after, {**generation, **generations(cluster, namespace)}

        # An upgrade with the same values changes nothing.
        installed.install(values, verb="upgrade")
        assert generations(cluster, namespace) == {k: generation[k] for k in wanted}
        assert pods_by_lws(cluster.pods(namespace)) == pods

        # A template change rolls the decode replicas only.
        spec = yaml.safe_load(values.read_text())
        decode = next(role for role in spec["roles"] if role["name"] == "decode")
        decode["template"]["spec"]["containers"][0]["image"] = "vllm/vllm-openai:v0.11.1"
        changed = tmp_path / "new-decode-image.yaml"
        changed.write_text(yaml.safe_dump(spec))
        installed.install(changed, verb="upgrade")
        old_decode_uids = {uid for lws, named in pods.items() if "-decode-" in lws for uid in named.values()}

        def rolled() -> dict[str, dict[str, str]] | None:
            now = pods_by_lws(ready_pods(cluster, namespace, expected_pods(changed), owners=wanted))
            decode_uids = {uid for lws, named in now.items() if "-decode-" in lws for uid in named.values()}
            return now if not decode_uids & old_decode_uids else None
        rolled_pods = eventually("the decode pods replaced", rolled)
        for lws in (name for name in wanted if "-prefill-" in name):
            assert rolled_pods[lws] == pods[lws], f"{lws} restarted on a decode-only change"
