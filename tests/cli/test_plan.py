"""The capacity preview on the chart's real helm output: the design's scheduling table, row by row, in
process (fusion_helm.plan on the post-rendered objects); `fusion-helm plan` itself on helm's output once."""

from __future__ import annotations

import itertools
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from fusion_helm.cli.main import main
from fusion_helm.plan import place_all, place_replica
from fusion_helm.plan.nodes import Nodes, PlanError, Pod, TopologyError, cluster_of
from fusion_helm.plan.report import to_json, to_tree
from fusion_helm.plan.services import Outcome, State, read_services
from tests.builders import requesting_cpu
from tests.helm import VALUES, Helm, fusion_helm
from tests.scheduling_table import STORY4, TABLES
from tests.support import Renders

STORY1 = VALUES / "story1-monolithic-qwen3-8b.yaml"
TOPOLOGY = VALUES.parent / "docs" / "hypernodes-racks-of-four.yaml"


def plan(stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return fusion_helm("plan", "-", *args, stdin=stdin)


def preview(objects: list[dict[str, Any]], gpus_per_node: int = 8, **size: Any) -> dict[str, Any]:
    """What `fusion-helm plan -o json` prints for OBJECTS, read back; SIZE: hyper_nodes, gpus or nodes."""
    cluster, nodes = cluster_of(gpus_per_node, **size)
    return json.loads(json.dumps(to_json(place_all(objects, cluster), nodes, gpus_per_node)))


def tree(objects: list[dict[str, Any]], gpus_per_node: int = 8, **size: Any) -> str:
    """What `fusion-helm plan` prints for OBJECTS; SIZE: hyper_nodes, gpus or nodes."""
    cluster, nodes = cluster_of(gpus_per_node, **size)
    return to_tree(place_all(objects, cluster), nodes, gpus_per_node)


def hyper_nodes(path: Path = TOPOLOGY) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def exit_status(argv: list[str]) -> int | str | None:
    """`fusion-helm ARGV` run in process: what main returns, or the status argparse exits with."""
    try:
        return main(argv)
    except SystemExit as exited:
        return exited.code


def placed(report: dict[str, Any]) -> tuple[str, set[str]]:
    """The service's state and the replicas placed in every order."""
    [service] = report["services"]
    replicas = [r for role in service["roles"] for r in role["replicas"]]
    for r in replicas:
        assert {bool(p["node"]) for p in r["pods"]} == {r["outcome"] == "placed"}, f"{r['name']}: nodes and outcome"
    return service["state"], {r["name"] for r in replicas if r["outcome"] == "placed"}


def story4_previews(renders: Renders, level: str, layout: str) -> dict[int, dict[str, Any]]:
    """GPUs → the preview of story 4, for each row of the scheduling table."""
    objects = renders(STORY4, "--set", f"gangSchedule.level={level}", "--set", f"layout={layout}")
    return {gpus: preview(objects, gpus=gpus) for gpus in TABLES[level]}


def without_pod_names(report: dict[str, Any]) -> list[Any]:
    """What the layouts share: per replica whether it is placed, required, its GPUs and pod count."""
    return [(service["name"], service["state"], [(role["name"], [
        (r["name"], r["outcome"], r["required"], r["gpus"], len(r["pods"])) for r in role["replicas"]])
        for role in service["roles"]]) for service in report["services"]]


def test_the_plan_command_previews_helm_s_output_raw_or_post_rendered(helm: Helm, renders: Renders) -> None:
    """`fusion-helm plan` expands the InferenceService helm printed (again, to the same objects, where the
    post-renderer has already) and prints the plan package's preview of them, as JSON or as a tree."""
    raw = helm.template(STORY4, post_render=False).stdout
    post_rendered = helm.template(STORY4).stdout
    plans = place_all(renders(STORY4), Nodes.of(8, 8))
    printed = plan(raw, "--nodes", "8", "-o", "json").stdout
    assert printed == json.dumps(to_json(plans, 8, 8), indent=2) + "\n"
    assert placed(json.loads(printed)) == TABLES["role"][64]
    assert plan(post_rendered, "--nodes", "8", "-o", "json").stdout == printed
    assert plan(raw, "--gpus", "64").stdout == to_tree(plans, 8, 8)


@pytest.mark.parametrize("level", sorted(TABLES))
def test_plan_gives_the_table_row_by_row_in_every_layout(renders: Renders, level: str) -> None:
    """A replica is one LeaderWorkerSet (layout replica), one group of the role's (layout role) or of
    its revision's (layout disaggregated): the same plan, only the pods' names differ."""
    by_layout = {layout: story4_previews(renders, level, layout) for layout in ("replica", "role", "disaggregated")}
    for gpus, expected in TABLES[level].items():
        for layout, reports in by_layout.items():
            assert reports[gpus]["cluster"] == {"nodes": gpus // 8, "gpusPerNode": 8, "gpus": gpus}
            assert placed(reports[gpus]) == expected, f"{gpus} GPUs, level {level}, layout {layout}"
            assert without_pod_names(reports[gpus]) == without_pod_names(by_layout["replica"][gpus])


def test_the_disaggregated_layout_plans_the_pods_of_one_revision(renders: Renders) -> None:
    """The controller names each revision's LeaderWorkerSets with a hash it computes: the plan says where."""
    [service] = preview(renders(STORY4, "--set", "layout=disaggregated"), gpus=80)["services"]
    pods = {r["name"]: [p["name"] for p in r["pods"]] for role in service["roles"] for r in role["replicas"]}
    assert pods["prefill-0"] == ["deepseek-r1-disagg-0-<revision>-prefill-0",
                                 "deepseek-r1-disagg-0-<revision>-prefill-0-1"]
    assert pods["decode-1"][0] == "deepseek-r1-disagg-0-<revision>-decode-1"


def test_the_role_layout_plans_the_pods_lws_makes_for_each_group(renders: Renders) -> None:
    [service] = preview(renders(STORY4, "--set", "layout=role"), gpus=80)["services"]
    pods = {r["name"]: [p["name"] for p in r["pods"]] for role in service["roles"] for r in role["replicas"]}
    decode = "deepseek-r1-disagg-decode"
    assert pods == {"prefill-0": ["deepseek-r1-disagg-prefill-0", "deepseek-r1-disagg-prefill-0-1"],
                    "decode-0": [f"{decode}-0"] + [f"{decode}-0-{w}" for w in (1, 2, 3)],
                    "decode-1": [f"{decode}-1"] + [f"{decode}-1-{w}" for w in (1, 2, 3)]}


def test_an_autoscaled_role_is_planned_at_its_autoscaler_s_minimum(renders: Renders, tmp_path: Path) -> None:
    spec = yaml.safe_load(STORY4.read_text())
    decode = spec["roles"][1]
    del decode["replicas"]
    decode["autoscaling"] = {"minReplicas": 2, "maxReplicas": 5}
    requesting_cpu(decode)
    values = tmp_path / "autoscaled.yaml"
    values.write_text(yaml.safe_dump({**spec, "layout": "role"}))
    objects = renders(values)
    report = preview(objects, gpus=80)
    assert placed(report) == TABLES["role"][80]
    assert [role.get("autoscaled") for role in report["services"][0]["roles"]] == [
        None, {"minReplicas": 2, "maxReplicas": 5, "planned": 2}]
    assert "└── decode (decoder; autoscaled 2-5: planned at its minimum)" in tree(objects, gpus=80)
    # Without its autoscaler the LeaderWorkerSet has LWS's default count, 1, and the tree says so.
    alone = tree([obj for obj in objects if obj["kind"] != "HorizontalPodAutoscaler"], gpus=80)
    assert "└── decode (decoder; autoscaled, no autoscaler read: planned at LWS's default of 1)" in alone
    assert "decode-1" not in alone


@pytest.mark.parametrize("keda", [False, True])
def test_at_its_maximum_an_autoscaled_role_s_peak_is_planned(renders: Renders, tmp_path: Path, keda: bool) -> None:
    """Whether the cluster holds the peak: 16 GPUs of prefill and five 32-GPU decode replicas need 176."""
    spec = yaml.safe_load(STORY4.read_text())
    decode = spec["roles"][1]
    del decode["replicas"]
    decode["autoscaling"] = {"minReplicas": 1, "maxReplicas": 5}
    if keda:  # KEDA scales on the engines' own signals
        decode["autoscaling"]["prometheus"] = {"serverAddress": "http://prometheus.monitoring:9090"}
        spec["monitoring"] = {"podMonitor": {"enabled": True}}
    else:
        requesting_cpu(decode)
    values = tmp_path / "autoscaled.yaml"
    values.write_text(yaml.safe_dump({**spec, "layout": "role"}))
    stream = yaml.safe_dump_all(renders(values))
    for gpus, state, placed_decode in ((176, "full", 5), (144, "partial", 4)):
        result = plan(stream, "--gpus", str(gpus), "--autoscaled", "maximum", "-o", "json")
        [service] = json.loads(result.stdout)["services"]
        roles = {role["name"]: role for role in service["roles"]}
        assert roles["decode"]["autoscaled"] == {"minReplicas": 1, "maxReplicas": 5, "planned": 5}
        assert (service["state"], roles["decode"]["placed"]) == (state, {"min": placed_decode, "max": placed_decode})
    assert "autoscaled 1-5: planned at its maximum" in plan(stream, "--gpus", "176", "--autoscaled", "maximum").stdout


def test_the_tree(renders: Renders) -> None:
    out = tree(renders(STORY4), nodes=6)
    assert out.splitlines()[:6] == [
        "cluster: 6 nodes x 8 GPUs = 48 GPUs",
        "deepseek-r1-disagg: partial (1 prefill + 1 decode of 1 prefill + 2 decode; 48 of 80 GPUs)",
        "├── prefill (prefiller)",
        "│   └── prefill-0: placed (2 pods, 16 GPUs, atomic minimum)",
        "│       ├── deepseek-r1-disagg-prefill-0-0  8 GPUs  on node-0",
        "│       └── deepseek-r1-disagg-prefill-0-0-1  8 GPUs  on node-1",
    ]
    assert "    └── decode-1: waits for capacity (4 pods, 32 GPUs)" in out.splitlines()


def test_a_service_without_gang_places_what_fits_in_the_scheduler_s_order(renders: Renders) -> None:
    """Three one-pod replicas on two one-GPU nodes: two run, none of them named, as kube-scheduler
    promises no order."""
    report = preview(renders(STORY1, "--set", "roles[0].replicas=3"), gpus_per_node=1, nodes=2)
    [service] = report["services"]
    assert service["gang"] is False
    assert placed(report) == ("partial", set())
    assert [(r["outcome"], r["required"]) for r in service["roles"][0]["replicas"]] == [("undecided", False)] * 3
    assert service["roles"][0]["placed"] == {"min": 2, "max": 2}
    assert service["placedGPUs"] == {"min": 2, "max": 2}


def test_the_cluster_is_the_hyper_nodes_nodes_or_whole_nodes_of_the_gpus() -> None:
    racks, nodes = cluster_of(8, hyper_nodes=hyper_nodes())
    assert (nodes, sorted(racks.free)) == (10, [f"gpu-node-{n:02d}" for n in range(10)])
    assert {domain.name for domain in racks.domains} == {"rack-0", "rack-1", "rack-2", "spine-0"}
    counted, nodes = cluster_of(8, gpus=80)
    assert (nodes, counted.free) == (10, {f"node-{n}": 8 for n in range(10)})
    named, nodes = cluster_of(1, nodes=3)
    assert (nodes, named.free, named.domains) == (3, {"node-0": 1, "node-1": 1, "node-2": 1}, ())
    with pytest.raises(PlanError, match=r"^--gpus 12 is not a whole number of 8-GPU nodes \(set --gpus-per-node\)$"):
        cluster_of(8, gpus=12)
    with pytest.raises(TopologyError, match=r"^holds no HyperNode \(topology.volcano.sh/v1alpha1\)$"):
        cluster_of(8, hyper_nodes=[])


@pytest.mark.parametrize("args,status,message", [
    (["--gpus", "12"], 1, "fusion-helm: --gpus 12 is not a whole number of 8-GPU nodes (set --gpus-per-node)\n"),
    (["--gpus", "0"], 2, "argument --gpus: must be a whole number >= 1, got '0'"),
    (["--gpus", "8", "--nodes", "1"], 2, "argument --nodes: not allowed with argument --gpus"),
    ([], 2, "one of the arguments --gpus --nodes --topology is required"),
])
def test_bad_sizes_are_one_clear_error(renders: Renders, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       args: list[str], status: int, message: str) -> None:
    story = tmp_path / "story4.yaml"
    story.write_text(renders.text(STORY4))
    assert exit_status(["plan", str(story), *args]) == status
    out, err = capsys.readouterr()
    assert out == ""
    assert message in err


def test_the_gang_scheduling_doc_shows_what_plan_topology_prints(renders: Renders, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """docs/gang-scheduling.md's topology preview is the one the command it shows prints."""
    doc = (VALUES.parent / "docs" / "gang-scheduling.md").read_text()
    story = tmp_path / "racks.yaml"
    story.write_text(renders.text(VALUES / "topology-racks-deepseek-r1.yaml"))
    assert main(["plan", str(story), "--topology", str(TOPOLOGY)]) == 0
    shown = capsys.readouterr().out
    assert ("inference-2: placed or waits: 1 of inference-1, inference-2 placed, in the scheduler's order"
            in shown)
    assert shown in doc


def topology_plan(renders: Renders, values: Path, *settings: str) -> dict[str, Any]:
    """Replica → the HyperNode it lies within where placed in every order ("" where unbound), None where
    it waits, "undecided"; and the service's HyperNode."""
    [service] = preview(renders(values, *settings), hyper_nodes=hyper_nodes())["services"]
    return {r["name"]: {"placed": r.get("within", ""), "waits": None}.get(r["outcome"], r["outcome"])
            for role in service["roles"] for r in role["replicas"]} | {"service": service.get("within")}


def test_plan_topology_binpacks_hard_bounds_and_falls_back_when_soft(renders: Renders, tmp_path: Path) -> None:
    racks = VALUES / "topology-racks-deepseek-r1.yaml"
    assert topology_plan(renders, racks) == {"inference-0": "rack-0", "inference-1": "undecided",
                                             "inference-2": "undecided", "service": None}
    values = yaml.safe_load(racks.read_text())
    values["gangSchedule"]["networkTopology"] = {"mode": "soft"}
    (tmp_path / "soft.yaml").write_text(yaml.safe_dump(values))
    soft = topology_plan(renders, tmp_path / "soft.yaml")
    assert soft == {"inference-0": "rack-0", "inference-1": "rack-1", "inference-2": "spine-0", "service": None}
    # The prefill replica takes the two-node rack, the one it leaves fullest: both decodes fit.
    assert topology_plan(renders, STORY4, "--set", "gangSchedule.networkTopology.highestTierAllowed=1") == {
        "prefill-0": "rack-2", "decode-0": "rack-0", "decode-1": "rack-1", "service": None}


def test_plan_topology_keeps_the_whole_service_within_its_bound(renders: Renders) -> None:
    """The service bound to one rack: its minimum (prefill-0 + decode-0, 48 GPUs) fits in none."""
    bound = topology_plan(renders, STORY4, "--set", "gangSchedule.serviceNetworkTopology.highestTierAllowed=1")
    assert bound == {"prefill-0": None, "decode-0": None, "decode-1": None, "service": None}
    spine = topology_plan(renders, STORY4, "--set", "gangSchedule.serviceNetworkTopology.highestTierName=spine")
    assert spine["service"] == "spine-0" and None not in spine.values()


@pytest.mark.parametrize(("content", "message"), [
    ("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n", "holds no HyperNode (topology.volcano.sh/v1alpha1)"),
    ("apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: r}\nspec:\n  tier: 1\n"
     "  members: [{type: Node, selector: {regexMatch: {pattern: '^n'}}}]\n",
     "HyperNode r: spec.members[0]: the preview reads members by selector.exactMatch.name only"),
    ("apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: r}\nspec:\n  tier: 1\n"
     "  tierName: rack\n  members: [{type: Node, selector: {exactMatch: {name: node-a}}}]\n",
     "no HyperNode has tierName row (tier names: rack); Volcano would place the pods with no bound at all"),
])
def test_plan_topology_says_what_it_cannot_read(renders: Renders, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                content: str, message: str) -> None:
    """One line naming the --topology file, nothing on standard output, exit status 1."""
    topology = tmp_path / "topology.yaml"
    topology.write_text(content)
    story = tmp_path / "story4.yaml"
    story.write_text(renders.text(STORY4, "--set", "gangSchedule.networkTopology.highestTierName=row"))
    assert main(["plan", str(story), "--topology", str(topology)]) == 1
    assert capsys.readouterr() == ("", f"fusion-helm: {topology}: {message}\n")


# In process, at the plan module's seams: the nodes, the services read back, the placement.

def story4_objects() -> list[dict[str, Any]]:
    from tests.builders import render as expand_spec

    values = yaml.safe_load((VALUES / "story4-pd-multinode-deepseek-r1.yaml").read_text())
    return list(expand_spec({"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
                             "metadata": {"name": values["name"]}, "spec": {"roles": values["roles"]}}).values())


@pytest.mark.parametrize(("gpus", "state", "placed"), [
    (80, State.FULL, {"prefill-0", "decode-0", "decode-1"}),
    (48, State.PARTIAL, {"prefill-0", "decode-0"}),
    (40, State.BLOCKED, set()),
])
def test_the_placement_in_process(gpus: int, state: State, placed: set[str]) -> None:
    [service] = place_all(story4_objects(), Nodes.of(gpus // 8, 8))
    assert service.state is state
    assert {replica.name for replica in service.replicas if replica.placed} == placed


def test_the_services_read_back_keep_the_atomic_minimum() -> None:
    [service] = read_services(story4_objects())
    assert service.gang
    assert {replica.name: replica.required for replica in service.replicas} == {
        "prefill-0": True, "decode-0": True, "decode-1": False}
    assert [len(replica.pods) for replica in service.replicas] == [2, 4, 4]


def test_nodes_place_best_fit_and_all_or_nothing() -> None:
    nodes = Nodes.of(2, 8)
    first = nodes.place([Pod("a", 6)])
    assert first is not None and first[0].node == "node-0"
    assert [pod.node for pod in nodes.place([Pod("b", 2)]) or []] == ["node-0"]  # the fullest with room
    before = dict(nodes.free)
    assert nodes.place([Pod("c", 8), Pod("d", 8)]) is None
    assert nodes.free == before, "a group that does not fit takes nothing"


# What every order places: the scheduler tries the replicas beyond the minimum in an order it does not
# promise; the plan must say exactly what holds in all of them.

def expanded(values: dict[str, Any]) -> list[dict[str, Any]]:
    from tests.builders import render as expand_spec

    spec = {key: value for key, value in values.items() if key != "name"}
    return list(expand_spec({"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
                             "metadata": {"name": values.get("name", "svc")}, "spec": spec}).values())


def every_order(objects: list[dict[str, Any]], cluster: Callable[[], Nodes]) -> tuple[
        dict[str, tuple[int, int]], dict[str, str]]:
    """Each role's fewest and most replicas placed, and each replica's outcome, found by playing every
    permutation of the replicas beyond the minimum (each tried once, placed whole where it fits)."""
    [service] = read_services(objects)
    counts: dict[str, list[int]] = {role.name: [] for role in service.roles}
    placed_in: dict[str, int] = {replica.name: 0 for replica in service.replicas}
    orders = list(itertools.permutations([r for r in service.replicas if not r.required]))
    for order in orders:
        nodes = cluster()
        for replica in [r for r in service.replicas if r.required]:
            assert place_replica(nodes, replica, None) is not None, "these cases' minimum fits"
        placed = {r.name for r in service.replicas if r.required} | {
            replica.name for replica in order if place_replica(nodes, replica, None) is not None}
        for role in counts:
            counts[role].append(sum(r.role == role and r.name in placed for r in service.replicas))
        for name in placed:
            placed_in[name] += 1
    outcomes = {name: "placed" if times == len(orders) else "waits" if times == 0 else "undecided"
                for name, times in placed_in.items()}
    return {role: (min(found), max(found)) for role, found in counts.items()}, outcomes


def competing_roles() -> list[dict[str, Any]]:
    """Story 4 with three replicas a role: beyond the minimum (48 GPUs), 32 GPUs take both prefills or
    one decode, as the order falls."""
    values = yaml.safe_load(STORY4.read_text())
    for role in values["roles"]:
        role["replicas"] = 3
    return expanded(values)


def uneven_pods() -> list[dict[str, Any]]:
    """Replicas of 3-GPU pods and of two 2-GPU pods on three 8-GPU nodes: best fit, fragments."""
    from tests.builders import role
    return expanded({"roles": [
        role("prefill", "prefiller", replicas=4, resources={"limits": {"nvidia.com/gpu": "3"}}),
        role("decode", "decoder", replicas=3, nodes=2, resources={"limits": {"nvidia.com/gpu": "2"}})]})


def racks() -> list[dict[str, Any]]:
    """The topology example: three replicas of three pods a rack each, on racks of 4, 4 and 2 nodes."""
    return expanded(yaml.safe_load((VALUES / "topology-racks-deepseek-r1.yaml").read_text()))


CASES = {
    "competing roles": (competing_roles, lambda: Nodes.of(10, 8)),
    "uneven pods": (uneven_pods, lambda: Nodes.of(3, 8)),
    "racks": (racks, lambda: Nodes.of_hyper_nodes(yaml.safe_load_all(TOPOLOGY.read_text()), 8)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_plan_says_what_holds_in_every_order(case: str) -> None:
    objects, cluster = CASES[case]
    counts, outcomes = every_order(objects(), cluster)
    [service] = place_all(objects(), cluster())
    assert {role.name: role.placed for role in service.roles} == counts
    assert {replica.name: replica.outcome.value for replica in service.replicas} == outcomes
    assert "undecided" in outcomes.values(), "each case leaves the scheduler's order a choice"


def test_roles_competing_for_room_each_get_a_range() -> None:
    [service] = place_all(competing_roles(), Nodes.of(10, 8))
    assert {role.name: role.placed for role in service.roles} == {"prefill": (1, 3), "decode": (1, 2)}
    assert service.placed_gpus == (80, 80)
    assert service.state is State.PARTIAL
    tree = to_tree([service], 10, 8)
    assert "deepseek-r1-disagg: partial (1-3 prefill + 1-2 decode of 3 prefill + 3 decode; 80 of 144 GPUs)" in tree
    assert ("prefill-2: placed or waits: 0-2 of prefill-1, prefill-2 placed, in the scheduler's order "
            "(2 pods, 16 GPUs)") in tree


def test_beyond_the_orders_it_plays_the_plan_says_from_the_minimum_to_everything(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("fusion_helm.plan.ORDERS_EXPLORED", 2)
    [service] = place_all(competing_roles(), Nodes.of(10, 8))
    assert {role.name: role.placed for role in service.roles} == {"prefill": (1, 3), "decode": (1, 3)}
    assert service.placed_gpus == (48, 144)
    assert {r.name for r in service.replicas if r.outcome is Outcome.UNDECIDED} == {
        "prefill-1", "prefill-2", "decode-1", "decode-2"}
