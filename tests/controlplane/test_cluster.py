"""The stories installed, scaled and uninstalled with real helm on a real control plane: kube-apiserver,
the LWS controller and its webhooks, kube-scheduler, Volcano's scheduler and kwok's GPU nodes."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.controlplane import set_gpu_nodes
from tests.controlplane.builds import SHARED_CRDS
from tests.controlplane.cluster import (
    GPU_NODES,
    LWS,
    PODGROUP,
    VOLCANO_SETTLE,
    Cluster,
    bound_replicas,
    eventually,
    expected_pods,
    holds_to_plan,
    outcomes,
    owner,
    planned,
    pods_by_lws,
    ready_pods,
    release,
    scaled,
    tasks,
    volcano_decided,
)
from tests.helm import CHART, VALUES, Helm
from tests.scheduling_table import STORY4, TABLES

STORIES = sorted(VALUES.glob("story*.yaml"))


@pytest.mark.parametrize("story", STORIES, ids=[p.stem.split("-")[0] for p in STORIES])
def test_story_installs_runs_and_uninstalls(cluster: Cluster, helm: Helm, story: Path) -> None:
    namespace = f"{story.stem.split('-')[0]}-helm{helm.major}"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(story)

        manifest = installed.manifest()
        on_server = cluster.on_server(namespace, manifest)
        assert len(on_server) == len(manifest) == len(set(on_server))
        lws_names = {o["metadata"]["name"] for o in manifest if o["kind"] == "LeaderWorkerSet"}
        assert lws_names

        pods = ready_pods(cluster, namespace, expected_pods(story))
        # Every pod belongs to one of our LeaderWorkerSets, through the StatefulSets the LWS controller made.
        assert {owner(p) for p in pods} == lws_names
        statefulsets = {s.metadata.name for s in cluster.apps.list_namespaced_stateful_set(namespace).items}
        assert lws_names <= statefulsets
        for pod in pods:
            assert cluster.core.read_node(pod.spec.node_name).metadata.annotations["kwok.x-k8s.io/node"] == "fake"

        installed.uninstall()
        eventually(f"nothing of the release left in {namespace}", lambda: not cluster.leftovers(namespace))


@pytest.mark.parametrize(("story", "replicas"), [
    ("story2", {"prefill": 3, "decode": 2}),   # one role up, one down
    ("story3", {"inference": 1}),              # a multi-node role down
])
def test_upgrade_scales_roles_and_leaves_other_replicas_alone(
        cluster: Cluster, helm: Helm, tmp_path: Path, story: str, replicas: dict[str, int]) -> None:
    values = next(p for p in STORIES if p.stem.startswith(story))
    namespace = f"scale-{story}-helm{helm.major}"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(values)
        before = pods_by_lws(ready_pods(cluster, namespace, expected_pods(values)))

        new_values = scaled(values, replicas, tmp_path / "scaled.yaml")
        installed.install(new_values, verb="upgrade")
        after_lws = {o["metadata"]["name"] for o in installed.manifest() if o["kind"] == "LeaderWorkerSet"}
        want = expected_pods(new_values)
        after = pods_by_lws(ready_pods(cluster, namespace, want, owners=after_lws))

        kept, removed = before.keys() & after_lws, before.keys() - after_lws
        assert kept and removed, "the scenario must keep some replicas and remove others"
        for lws in kept:
            assert after[lws] == before[lws], f"pods of untouched replica {lws} were replaced"
        live_lws = {o["metadata"]["name"] for o in cluster.custom(LWS, namespace)}
        live_sts = {s.metadata.name for s in cluster.apps.list_namespaced_stateful_set(namespace).items}
        for lws in removed:
            assert lws not in live_lws
            assert not {s for s in live_sts if s == lws or s.startswith(f"{lws}-")}, f"{lws}'s StatefulSets remain"
        [rendered] = [o for o in installed.manifest() if o["kind"] == "PodGroup"]
        live = cluster.custom(PODGROUP, namespace)
        assert [pg["spec"]["subGroupPolicy"] for pg in live] == [rendered["spec"]["subGroupPolicy"]]


@pytest.mark.parametrize("level", sorted(TABLES))
@pytest.mark.parametrize("layout", ["replica", "role", "disaggregated"])
def test_gang_scheduling_delivers_the_table_as_the_cluster_grows(cluster: Cluster, helm4: Helm, tmp_path: Path,
                                                                  layout: str, level: str,
                                                                  record_property: Any) -> None:
    """Installed on the table's smallest cluster, which then grows row by row as nodes join: at each
    row Volcano places exactly the replicas the table names, and the plan's preview says so. Each
    replica is a LeaderWorkerSet of its own, a group of the role's, or a group of the one a
    DisaggregatedSet makes: the same table. (The objects are the post-renderer's whichever helm applies
    them, and helm takes no part in placement: one helm here, both in the installs of the other tests.)"""
    rows = sorted(TABLES[level])
    namespace = f"gang-{layout}-{level}"
    level_values = tmp_path / "level.yaml"
    level_values.write_text(yaml.safe_dump({"gangSchedule": {"level": level}, "layout": layout}))
    set_gpu_nodes(cluster.control_plane, rows[0] // 8)
    try:
        with release(cluster, helm4, "svc", namespace) as installed:
            installed.install(STORY4, level_values)
            want = expected_pods(STORY4)
            eventually(f"{want} pods", lambda: len(cluster.pods(namespace)) == want)
            eventually("Volcano's verdict on the PodGroup", lambda: volcano_decided(cluster, namespace))
            manifest = installed.manifest()
            for gpus in rows:
                holds_to_the_row(cluster, manifest, namespace, gpus, TABLES[level][gpus], record_property)
    finally:
        set_gpu_nodes(cluster.control_plane, GPU_NODES)


def holds_to_the_row(cluster: Cluster, manifest: list[dict[str, Any]], namespace: str, gpus: int,
                     row: tuple[str, set[str]], record_property: Any) -> None:
    """The cluster grown to GPUS: Volcano binds the row's replicas, whole, and after a few more
    scheduling periods nothing else; the plan on that many GPUs says the row's state and outcomes."""
    state, expected = row
    set_gpu_nodes(cluster.control_plane, gpus // 8)
    eventually(f"replicas {sorted(expected)} bound on {gpus} GPUs",
               lambda: bound_replicas(cluster, namespace) == expected,
               timeout=30, describe=lambda: f"bound: {sorted(bound_replicas(cluster, namespace))}")
    time.sleep(VOLCANO_SETTLE)  # a few more scheduling cycles: nothing else may be placed
    pods = cluster.pods(namespace)
    by_replica = tasks(pods)
    bound = {task for task, members in by_replica.items() if any(p.spec.node_name for p in members)}
    bound_pods = sorted(f"{p.metadata.name}@{p.spec.node_name}" for p in pods if p.spec.node_name)
    record_property(f"bound_pods_{gpus}", bound_pods)
    print(f"\n{namespace}, {gpus} GPUs: bound {sorted(bound)}; pods {bound_pods}")
    for task, members in by_replica.items():
        assert len({bool(p.spec.node_name) for p in members}) == 1, f"replica {task} partly bound on {gpus} GPUs"
    assert bound == expected, gpus
    plan = planned(manifest, "--gpus", str(gpus))
    assert plan["state"] == state, gpus
    assert outcomes(plan) == {task: "placed" if task in expected else "waits" for task in outcomes(plan)}, gpus
    holds_to_plan(plan, bound)


def test_a_volcano_without_subgrouppolicy_is_refused_not_silently_degraded(cluster: Cluster, helm: Helm) -> None:
    """An API server serving an older PodGroup CRD would prune subGroupPolicy; the chart looks first."""
    crd = SHARED_CRDS / "scheduling.volcano.sh_podgroups.yaml"
    field = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/subGroupPolicy"
    cluster.control_plane.kubectl("patch", "crd", "podgroups.scheduling.volcano.sh", "--type", "json",
                                  "-p", json.dumps([{"op": "remove", "path": field}]))
    try:
        def dry_run(values: Path) -> subprocess.CompletedProcess[str]:
            return helm.run("install", "old", CHART, "-f", values, "--dry-run=server", "--namespace", "default",
                            "--kubeconfig", cluster.kubeconfig, check=False)
        refused = dry_run(STORY4)
        assert refused.returncode != 0
        assert ("the cluster's Volcano PodGroup CRD (scheduling.volcano.sh/v1beta1) has no spec.subGroupPolicy: "
                "gang scheduling needs Volcano v1.14 or later; upgrade Volcano, or set gangSchedule.enable=false"
                ) in refused.stderr
        assert dry_run(next(p for p in STORIES if p.stem.startswith("story1"))).returncode == 0  # no gang
    finally:
        cluster.control_plane.apply(crd.read_text())
    assert dry_run(STORY4).returncode == 0
