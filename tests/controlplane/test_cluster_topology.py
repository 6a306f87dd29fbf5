"""Topology-aware placement, queues and priority on the real Volcano v1.15.1 scheduler, its
network-topology-aware plugin on, over the control plane's HyperNodes (docs/hypernodes-racks-of-four.yaml:
ten 8-GPU nodes in racks of four, 00-03, 04-07 and 08-09, under one spine): a replica bound to a rack
is bound within one, or waits whole; a soft one spans racks when no rack has room; `fusion-helm plan
--topology` says the same replica by replica. A closed or full queue holds the whole service until it
opens; the check hook refuses a missing queue or PriorityClass by name."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml

from tests.controlplane.cluster import (
    VOLCANO_SETTLE,
    Cluster,
    bound_replicas,
    eventually,
    holds_to_plan,
    outcomes,
    planned,
    ready,
    release,
    tasks,
    volcano_decided,
)
from tests.controlplane.components import HYPER_NODES
from tests.controlplane.hook_kubelet import hook_runner, run_check
from tests.helm import VALUES, Helm

QUEUES = ("scheduling.volcano.sh", "v1beta1", "queues")
COMMANDS = ("bus.volcano.sh", "v1alpha1", "commands")
RACK = {"mode": "hard", "highestTierName": "rack"}
STORY3, STORY4 = VALUES / "story3-multinode-deepseek-r1.yaml", VALUES / "story4-pd-multinode-deepseek-r1.yaml"


def racks() -> dict[str, str]:
    """Node → its rack, as the control plane's HyperNodes say."""
    out = {}
    for hyper_node in yaml.safe_load_all(HYPER_NODES.read_text()):
        if hyper_node["spec"]["tier"] == 1:
            for member in hyper_node["spec"]["members"]:
                out[member["selector"]["exactMatch"]["name"]] = hyper_node["metadata"]["name"]
    return out


def values(into: Path, story: Path, **changes: Any) -> Path:
    spec = yaml.safe_load(story.read_text())
    for key, value in changes.items():
        if key == "roles":
            for role, fields in zip(spec["roles"], value, strict=False):
                role.update(fields)
        else:
            spec[key] = value
    into.write_text(yaml.safe_dump(spec))
    return into


RACKS = VALUES / "topology-racks-deepseek-r1.yaml"
"""Three replicas of three 8-GPU pods, each bound to a rack: two fill three nodes of a rack each, the
third fits in no rack's free nodes (racks of 4, 4 and 2), only across them."""


def three_by_three(into: Path, topology: dict[str, Any]) -> Path:
    return values(into, RACKS, gangSchedule={"networkTopology": topology})


def placement(cluster: Cluster, namespace: str) -> dict[str, set[str]]:
    """Replica → the racks its bound pods are on (empty: not bound)."""
    rack_of = racks()
    return {task: {rack_of[p.spec.node_name] for p in pods if p.spec.node_name}
            for task, pods in tasks(cluster.pods(namespace)).items()}


def within(service: dict[str, Any]) -> dict[str, str]:
    """Replica → the HyperNode the plan places it within ("" where no bound applies), for those it
    places in every order."""
    return {r["name"]: r.get("within") or "" for role in service["roles"] for r in role["replicas"]
            if r["outcome"] == "placed"}


def settled(cluster: Cluster, namespace: str, pods: int) -> None:
    eventually(f"{pods} pods", lambda: len(cluster.pods(namespace)) == pods)
    eventually("Volcano's verdict on the PodGroup", lambda: volcano_decided(cluster, namespace))
    time.sleep(VOLCANO_SETTLE)  # a few more scheduling cycles: nothing else may be placed


CASES = {
    # story, its changes, pods, the replicas bound, and whether each bound replica is in one rack
    "story3 hard rack": (STORY3, {"gangSchedule": {"networkTopology": RACK}}, 8, {"inference-0", "inference-1"}),
    "story4 hard tier 1": (STORY4, {"gangSchedule": {"networkTopology": {"highestTierAllowed": 1}}}, 10,
                           {"prefill-0", "decode-0", "decode-1"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_replica_is_bound_within_one_rack(cluster: Cluster, helm: Helm, tmp_path: Path, case: str) -> None:
    story, changes, pods, expected = CASES[case]
    namespace = f"topology-{case.replace(' ', '-')}-helm{helm.major}"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(values(tmp_path / "values.yaml", story, **changes))
        settled(cluster, namespace, pods)
        where = placement(cluster, namespace)
        print(f"\n{case} (helm {helm.major}): {where}")
        bound = {task for task, found in where.items() if found}
        assert bound == expected
        assert all(len(found) == 1 for found in where.values()), where
        plan = planned(installed.manifest(), "--topology", HYPER_NODES)
        assert outcomes(plan) == dict.fromkeys(expected, "placed")
        holds_to_plan(plan, bound)
        assert all(rack.startswith("rack-") for rack in within(plan).values()), plan


@pytest.mark.parametrize("mode", ["hard", "soft"])
def test_a_replica_no_rack_can_take_waits_whole_or_spans_racks_when_soft(
        cluster: Cluster, helm4: Helm, tmp_path: Path, mode: str) -> None:
    namespace = f"topology-three-{mode}"
    topology = RACK if mode == "hard" else {"mode": "soft"}
    with release(cluster, helm4, "svc", namespace) as installed:
        installed.install(three_by_three(tmp_path / "values.yaml", topology))
        settled(cluster, namespace, 9)
        where = placement(cluster, namespace)
        print(f"\nthree replicas of three pods, {mode}: {where}")
        for task, pods in tasks(cluster.pods(namespace)).items():
            assert len({bool(p.spec.node_name) for p in pods}) == 1, f"replica {task} partly bound"
        bound = {task for task, found in where.items() if found}
        plan = planned(installed.manifest(), "--topology", HYPER_NODES)
        holds_to_plan(plan, bound)
        if mode == "hard":
            # The minimum runs in a rack; of the other two, one more fits in a rack, which one is the
            # order's choice: the plan names neither, and the one that waits waits whole.
            assert outcomes(plan) == {"inference-0": "placed", "inference-1": "undecided",
                                      "inference-2": "undecided"}
            assert [role["placed"] for role in plan["roles"]] == [{"min": 2, "max": 2}]
            first, second = sorted(bound)  # inference-0 and one other (holds_to_plan)
            assert len(where[first]) == len(where[second]) == 1 and where[first] != where[second], where
        else:
            assert outcomes(plan) == dict.fromkeys(where, "placed")
            assert all(where.values()), where
            # Nine one-node pods in racks of 4, 4 and 2 nodes: replicas of three cannot all keep to one
            # rack, so one spans racks; which one depends on the order Volcano's session meets them.
            assert any(len(racks) > 1 for racks in where.values()), "a replica spans racks"


def test_a_role_s_own_topology_and_one_opting_out_are_each_placed_as_they_say(
        cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    """Story 4 with decode bound to a rack (the service's default) and prefill opting out: each decode
    replica lies within one rack; prefill's pods go wherever there is room. Decode replicas of two
    8-GPU nodes serve at tensor parallelism 16, which they have GPUs for."""
    namespace = f"topology-override-helm{helm.major}"
    decode_template = yaml.safe_load(STORY4.read_text())["roles"][1]["template"]
    engine_args = decode_template["spec"]["containers"][0]["args"]
    engine_args[engine_args.index("--tensor-parallel-size") + 1] = "16"
    path = values(tmp_path / "values.yaml", STORY4, roles=[
        {"multinode": {"nodeCount": 3}, "networkTopology": {"mode": "none"}},
        {"multinode": {"nodeCount": 2}, "template": decode_template}],
        gangSchedule={"networkTopology": RACK})
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(path)
        [podgroup] = cluster.custom(("scheduling.volcano.sh", "v1beta1", "podgroups"), namespace)
        assert {p["name"]: p.get("networkTopology") for p in podgroup["spec"]["subGroupPolicy"]} == {
            "prefill/minimum": None, "prefill/more": None, "decode/minimum": RACK, "decode/more": RACK}
        settled(cluster, namespace, 7)
        where = placement(cluster, namespace)
        print(f"\nper-role (helm {helm.major}): {where}")
        assert all(where.values()), where
        assert len(where["decode-0"]) == len(where["decode-1"]) == 1
        plan = planned(installed.manifest(), "--topology", HYPER_NODES)
        holds_to_plan(plan, set(where))
        assert outcomes(plan) == dict.fromkeys(where, "placed")
        assert within(plan)["prefill-0"] == ""
        assert all(within(plan)[d].startswith("rack-") for d in ("decode-0", "decode-1")), plan


def custom_api(cluster: Cluster) -> kubernetes.client.CustomObjectsApi:
    return kubernetes.client.CustomObjectsApi(cluster.api)


def create_queue(cluster: Cluster, name: str, gpus: int | None = None) -> None:
    spec: dict[str, Any] = {"weight": 1, "reclaimable": True}
    if gpus is not None:
        spec["capability"] = {"nvidia.com/gpu": str(gpus)}
    custom_api(cluster).create_cluster_custom_object(*QUEUES, {
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": spec})
    eventually(f"queue {name} Open", lambda: queue_state(cluster, name) == "Open")


def queue_state(cluster: Cluster, name: str) -> str | None:
    queue = custom_api(cluster).get_cluster_custom_object(*QUEUES, name)
    state: str | None = (queue.get("status") or {}).get("state")
    return state


def command(cluster: Cluster, queue: str, action: str) -> None:
    """Open or close a queue as `vcctl queue operate` does: a bus.volcano.sh Command the queue
    controller carries out."""
    custom_api(cluster).create_namespaced_custom_object(*COMMANDS[:2], "default", COMMANDS[2], {
        "apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command",
        "metadata": {"generateName": f"{queue}-{action.lower()}-"}, "action": action,
        "target": {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "name": queue,
                   "uid": custom_api(cluster).get_cluster_custom_object(*QUEUES, queue)["metadata"]["uid"]}})


def delete_queue(cluster: Cluster, name: str) -> None:
    custom_api(cluster).delete_cluster_custom_object(*QUEUES, name)


def bound_pods(cluster: Cluster, namespace: str) -> int:
    return sum(1 for pod in cluster.pods(namespace) if pod.spec.node_name)


def test_a_service_in_a_full_queue_waits_whole_and_starts_when_the_queue_grows(
        cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    """Story 4's atomic minimum needs 48 GPUs; its queue allows 16, then 80."""
    namespace, queue = f"queue-full-helm{helm.major}", f"small-helm{helm.major}"
    create_queue(cluster, queue, gpus=16)
    try:
        with release(cluster, helm, "svc", namespace) as installed:
            installed.install(values(tmp_path / "values.yaml", STORY4, schedulingStrategy={"queue": queue}))
            [podgroup] = cluster.custom(("scheduling.volcano.sh", "v1beta1", "podgroups"), namespace)
            assert podgroup["spec"]["queue"] == queue
            eventually("10 pods", lambda: len(cluster.pods(namespace)) == 10)
            time.sleep(VOLCANO_SETTLE * 2)
            assert bound_pods(cluster, namespace) == 0, "nothing of the service placed while its queue is full"
            custom_api(cluster).patch_cluster_custom_object(*QUEUES, queue, {"spec": {"capability": {
                "nvidia.com/gpu": "80"}}})
            eventually("every replica bound", lambda: bound_replicas(cluster, namespace) == {
                "prefill-0", "decode-0", "decode-1"}, timeout=60)
    finally:
        delete_queue(cluster, queue)


def test_a_service_in_a_closed_queue_waits_whole_and_starts_when_it_opens(cluster: Cluster, helm4: Helm,
                                                                           tmp_path: Path) -> None:
    """Installed past the check (hooks off: the check refuses a closed queue, below), it waits."""
    namespace, queue = "queue-closed", "closed-queue"
    create_queue(cluster, queue)
    command(cluster, queue, "CloseQueue")
    try:
        eventually(f"queue {queue} Closed", lambda: queue_state(cluster, queue) == "Closed")
        with release(cluster, helm4, "svc", namespace) as installed:
            off = tmp_path / "hooks-off.yaml"
            off.write_text(yaml.safe_dump({"hooks": {"enabled": False}}))
            installed.install(values(tmp_path / "values.yaml", STORY4, schedulingStrategy={"queue": queue}), off)
            eventually("10 pods", lambda: len(cluster.pods(namespace)) == 10)
            time.sleep(VOLCANO_SETTLE * 2)
            assert bound_pods(cluster, namespace) == 0, "nothing of the service placed while its queue is closed"
            command(cluster, queue, "OpenQueue")
            eventually("every pod bound and Ready", lambda: all(
                ready(p) for p in cluster.pods(namespace)) and bound_pods(cluster, namespace) == 10, timeout=60)
    finally:
        delete_queue(cluster, queue)


def test_the_check_refuses_a_missing_or_closed_queue_a_missing_priority_class_and_an_unknown_tier(
        cluster: Cluster, tmp_path: Path) -> None:
    create_queue(cluster, "check-open")
    create_queue(cluster, "check-closed")
    command(cluster, "check-closed", "CloseQueue")
    try:
        eventually("queue check-closed Closed", lambda: queue_state(cluster, "check-closed") == "Closed")
        def placed(queue: str, priority_class: str | None = None, *tiers: dict[str, Any]) -> dict[str, Any]:
            """A gang-scheduled service in QUEUE, of PRIORITY_CLASS, its replicas bounded by TIERS."""
            roles = [{"name": f"w{i}", "componentType": "worker", "replicas": 1, "multinode": {"nodeCount": 2},
                      "networkTopology": tier} for i, tier in enumerate(tiers or [None])]
            strategy = {"queue": queue, **({"priorityClassName": priority_class} if priority_class else {})}
            return {"roles": [{key: value for key, value in role.items() if value} for role in roles],
                    "schedulingStrategy": strategy}

        ok = run_check(cluster, tmp_path / "ok", placed("check-open", "system-node-critical",
                                                         {"highestTierName": "rack"}, {"highestTierAllowed": 2}))
        assert ok.returncode == 0, ok.stderr
        refused = run_check(cluster, tmp_path / "refused", placed("absent", "absent-class", {"highestTierName": "row"}))
        assert refused.returncode == 1
        assert [line.split(": ", 1)[1] for line in refused.stderr.splitlines()] == [
            "queue absent does not exist (a Volcano Queue, scheduling.volcano.sh/v1beta1): Volcano would never "
            "schedule the service's PodGroup; create it, or set schedulingStrategy.queue to an Open queue",
            "PriorityClass absent-class does not exist: Kubernetes refuses every serving pod that names it; create "
            "it, or change schedulingStrategy.priorityClassName",
            "no HyperNode has tierName row (tier names: rack, spine): Volcano would place the pods with no bound at "
            "all; fix highestTierName"]
        closed = run_check(cluster, tmp_path / "closed", placed("check-closed"))
        assert "queue check-closed is Closed, not Open" in closed.stderr and closed.returncode == 1
    finally:
        delete_queue(cluster, "check-open")
        delete_queue(cluster, "check-closed")


def test_the_check_reads_them_with_the_hooks_own_rights_and_the_pods_carry_the_priority(
        cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    """Installed with a queue, a PriorityClass and a tier: the check Job, run as its ServiceAccount with
    the chart's ClusterRole, passes; every serving pod has the PriorityClass's priority."""
    namespace, queue = f"placement-rbac-helm{helm.major}", f"team-helm{helm.major}"
    priority_class = f"inference-high-helm{helm.major}"
    create_queue(cluster, queue)
    kubernetes.client.SchedulingV1Api(cluster.api).create_priority_class(kubernetes.client.V1PriorityClass(
        metadata=kubernetes.client.V1ObjectMeta(name=priority_class), value=100000))
    try:
        with release(cluster, helm, "svc", namespace) as installed:
            installed.install(values(tmp_path / "values.yaml", STORY4, schedulingStrategy={
                "queue": queue, "priorityClassName": priority_class}, gangSchedule={"networkTopology": RACK}))
            checked = hook_runner(cluster, installed, "deepseek-r1-disagg", tmp_path)("check")
            assert checked.returncode == 0, checked.stderr
            eventually("every pod bound", lambda: bound_pods(cluster, namespace) == 10, timeout=60)
            assert {(p.spec.priority_class_name, p.spec.priority) for p in cluster.pods(namespace)} == {
                (priority_class, 100000)}
    finally:
        delete_queue(cluster, queue)
        kubernetes.client.SchedulingV1Api(cluster.api).delete_priority_class(priority_class)
