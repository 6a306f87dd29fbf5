"""Scaling roles with `helm upgrade`: only the scaled role's replicas come or go, highest index first;
every other LeaderWorkerSet is left alone (same generation, same pods); a template change rolls only
its role; an upgrade that changes nothing changes nothing; and `fusion-helm diff`, run before each
upgrade, says exactly what it then does."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.controlplane.cluster import (
    LWS,
    PODGROUP,
    Cluster,
    Release,
    eventually,
    expected_pods,
    install_crd_chart,
    pods_by_lws,
    ready_pods,
    release,
    scaled,
)
from tests.controlplane.hook_kubelet import hook_runner
from tests.helm import CHART, VALUES, Helm, fusion_helm

STORY2 = VALUES / "story2-pd-qwen3-8b.yaml"
SERVICE = "qwen-inference-service"
SETTLE = 2.0  # seconds for the LWS controller to act on a changed LeaderWorkerSet


@dataclass(frozen=True)
class State:
    generations: dict[str, int]
    pods: dict[str, dict[str, str]]
    podgroup: dict[str, Any]

    @classmethod
    def of(cls, cluster: Cluster, namespace: str) -> State:
        [group] = cluster.custom(PODGROUP, namespace)
        return cls({o["metadata"]["name"]: o["metadata"]["generation"] for o in cluster.custom(LWS, namespace)},
                   pods_by_lws(cluster.pods(namespace)), group["spec"])


def observed(before: State, after: State) -> dict[str, str]:
    """What the upgrade did, in `fusion-helm diff`'s words."""
    found = {f"PodGroup/{SERVICE}": "unchanged" if before.podgroup == after.podgroup else "updated"}
    for lws in before.generations.keys() | after.generations.keys():
        if lws not in before.generations:
            change = "created"
        elif lws not in after.generations:
            change = "deleted"
        elif after.pods[lws] != before.pods[lws]:
            change = "restarted"
        else:
            change = "unchanged" if after.generations[lws] == before.generations[lws] else "updated"
        found[f"LeaderWorkerSet/{lws}"] = change
    return found


def predicted(installed: Release, values: Path) -> dict[str, str]:
    """`fusion-helm diff` of the release as it stands (`helm get manifest`) against the render of VALUES."""
    current = values.with_suffix(".current.yaml")
    current.write_text(yaml.safe_dump_all(installed.manifest()))
    result = fusion_helm("diff", current, "-", "-o", "json", stdin=installed.render(values))
    return {f"{c['kind']}/{c['name']}": c["change"] for c in json.loads(result.stdout)}


def upgrade(cluster: Cluster, installed: Release, values: Path) -> dict[str, str]:
    """Upgrade to VALUES; assert `fusion-helm diff` foretold it; return the prediction."""
    prediction = predicted(installed, values)
    before = State.of(cluster, installed.namespace)
    installed.install(values, verb="upgrade")
    owners = {name.split("/", 1)[1] for name, change in prediction.items()
              if name.startswith("LeaderWorkerSet/") and change != "deleted"}
    restarted = {name.split("/", 1)[1] for name, change in prediction.items() if change == "restarted"}

    def settled() -> State | None:
        ready_pods(cluster, installed.namespace, expected_pods(values), owners=owners)
        state = State.of(cluster, installed.namespace)
        replaced = all(state.pods[lws] != before.pods[lws] for lws in restarted)
        return state if replaced else None
    eventually("the upgrade to settle", settled)
    time.sleep(SETTLE)
    assert observed(before, State.of(cluster, installed.namespace)) == prediction
    return prediction


def test_scaling_roles_touches_only_their_replicas(cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    namespace = f"lifecycle-helm{helm.major}"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(STORY2)
        ready_pods(cluster, namespace, expected_pods(STORY2))

        # 2P4D → 2P6D → 1P6D → 1P2D: replicas come and go from the highest index; nothing else changes.
        for step, replicas in enumerate([{"prefill": 2, "decode": 6}, {"prefill": 1, "decode": 6},
                                         {"prefill": 1, "decode": 2}]):
            values = scaled(STORY2, replicas, tmp_path / f"step{step}.yaml")
            prediction = upgrade(cluster, installed, values)
            wanted = {f"{SERVICE}-{role}-{i}" for role, count in replicas.items() for i in range(count)}
            assert {n.split("/", 1)[1] for n, c in prediction.items()
                    if n.startswith("LeaderWorkerSet/") and c != "deleted"} == wanted
            assert set(prediction.values()) <= {"created", "deleted", "unchanged"}, prediction
            [live] = cluster.custom(PODGROUP, namespace)
            [rendered] = [o for o in installed.manifest() if o["kind"] == "PodGroup"]
            assert live["spec"]["subGroupPolicy"] == rendered["spec"]["subGroupPolicy"]

        # The same values again: nothing changes.
        assert set(upgrade(cluster, installed, values).values()) == {"unchanged"}

        # A new decode image rolls the decode replicas and nothing else.
        spec = yaml.safe_load(values.read_text())
        next(r for r in spec["roles"] if r["name"] == "decode")["template"]["spec"]["containers"][0]["image"] = \
            "vllm/vllm-openai:v0.11.1"
        changed = tmp_path / "new-decode-image.yaml"
        changed.write_text(yaml.safe_dump(spec))
        prediction = upgrade(cluster, installed, changed)
        assert {n for n, c in prediction.items() if c == "restarted"} == {
            f"LeaderWorkerSet/{SERVICE}-decode-0", f"LeaderWorkerSet/{SERVICE}-decode-1"}
        assert {c for n, c in prediction.items() if "-prefill-" in n or n.startswith("PodGroup/")} == {"unchanged"}


def fusion_status(cluster: Cluster, release_name: str, namespace: str, *args: str) -> str:
    return fusion_helm("status", release_name, "--namespace", namespace, "--kubeconfig", cluster.kubeconfig,
                       *args).stdout


def test_status_after_install_and_each_upgrade(cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    story3 = VALUES / "story3-multinode-deepseek-r1.yaml"  # 2 replicas x 4 nodes x 8 GPUs; the cluster has 80
    namespace = f"status-helm{helm.major}"
    with release(cluster, helm, "svc", namespace) as installed:
        # (replicas, ready replicas, ready pods, phase): 3 replicas need 96 GPUs, so replica 2 waits.
        for step, (replicas, ready, ready_pods_, phase) in enumerate(
                [(2, 2, 8, "Running"), (3, 2, 8, "Deploying"), (1, 1, 4, "Running")]):
            values = scaled(story3, {"inference": replicas}, tmp_path / f"status{step}.yaml")
            installed.install(values, verb="upgrade" if step else "install")
            expected = {"desiredReplicas": replicas, "readyReplicas": ready, "nodesPerReplica": 4,
                        "totalPods": replicas * 4, "readyPods": ready_pods_, "phase": phase}

            def reported(expected: dict[str, Any] = expected, pods: int = replicas * 4) -> dict[str, Any] | None:
                report = json.loads(fusion_status(cluster, "svc", namespace, "-o", "json", "--write"))
                component = dict(report["status"]["components"]["inference"])
                component.pop("lastUpdateTime")
                return report if component == expected and len(cluster.pods(namespace)) == pods else None
            report = eventually(f"step {step}: status {expected}", reported)
            [live] = cluster.custom(("fusioninfer.io", "v1alpha1", "inferenceservices"), namespace)
            assert live["status"] == report["status"]
            assert live["status"]["conditions"][0]["status"] == ("True" if phase == "Running" else "False")
            assert fusion_status(cluster, "svc", namespace).splitlines()[2].split() == [
                "inference", phase, f"{ready}/{replicas}", "4", f"{ready_pods_}/{replicas * 4}"]
        # the same through the helm plugin, namespace and kubeconfig given to helm
        via_helm = installed.run("fusion", "status", "svc")
        assert via_helm.splitlines()[2].split()[:3] == ["inference", "Running", "1/1"]


def test_the_first_install_on_a_cluster_without_the_crd(cluster: Cluster, helm: Helm) -> None:
    """Without the CRD the chart says where it comes from, rather than Helm's "no matches for kind"; its
    chart installs it, and then the service installs (the role-change guard asking for no kind Helm has
    not discovered: Helm 4's lookup fails on one)."""
    cluster.control_plane.kubectl("delete", "crd", "inferenceservices.fusioninfer.io", "--ignore-not-found",
                                  "--wait")
    namespace = f"first-install-helm{helm.major}"
    try:
        with release(cluster, helm, "svc", namespace) as installed:
            refused = helm.run("install", "svc", CHART, "-f", STORY2, "--post-renderer", "fusion-postrender",
                               "--namespace", namespace, "--create-namespace", "--kubeconfig", cluster.kubeconfig,
                               check=False)
            assert refused.returncode != 0
            assert ("the InferenceService CRD (inferenceservices.fusioninfer.io) is not installed: install it once "
                    "per cluster, before this chart: helm upgrade --install fusioninfer-crds charts/fusioninfer-crds "
                    "--take-ownership (Helm 4: and --server-side=true --force-conflicts; docs/lifecycle.md)"
                    ) in refused.stderr
            install_crd_chart(cluster, helm)
            installed.install(STORY2)
            assert [o["metadata"]["name"] for o in cluster.custom(
                ("fusioninfer.io", "v1alpha1", "inferenceservices"), namespace)] == [SERVICE]
            installed.uninstall()
    finally:
        install_crd_chart(cluster, helm)


def test_renaming_a_role_is_refused_unless_allowed(cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    namespace = f"rename-helm{helm.major}"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(STORY2)
        ready_pods(cluster, namespace, expected_pods(STORY2))
        spec = yaml.safe_load(STORY2.read_text())
        spec["roles"][0]["componentType"] = "worker"
        retyped = tmp_path / "retyped.yaml"
        retyped.write_text(yaml.safe_dump(spec))
        refused = helm.run("upgrade", "svc", CHART, "-f", retyped, "--post-renderer", "fusion-postrender",
                           "--namespace", namespace, "--kubeconfig", cluster.kubeconfig, check=False)
        assert (f"this upgrade changes role prefill of InferenceService {SERVICE} from prefiller to worker and "
                "restarts its 2 replica(s), 2 pod(s); to allow it, set allowRoleRemoval={prefill}") in refused.stderr

        spec = yaml.safe_load(STORY2.read_text())
        spec["roles"][1]["name"] = "generate"
        renamed = tmp_path / "renamed.yaml"
        renamed.write_text(yaml.safe_dump(spec))
        upgrade_args = ("upgrade", "svc", CHART, "-f", renamed, "--post-renderer", "fusion-postrender",
                        "--namespace", namespace, "--kubeconfig", cluster.kubeconfig)

        refused = helm.run(*upgrade_args, check=False)
        assert refused.returncode != 0
        assert (f"this upgrade removes role decode of InferenceService {SERVICE} and deletes its 4 replica(s), "
                "4 pod(s); to allow it, set allowRoleRemoval={decode}") in refused.stderr
        assert {o["metadata"]["name"] for o in cluster.custom(LWS, namespace)} == {
            f"{SERVICE}-prefill-{i}" for i in range(2)} | {f"{SERVICE}-decode-{i}" for i in range(4)}

        helm.run(*upgrade_args, "--set", "allowRoleRemoval={decode}")
        wanted = {f"{SERVICE}-prefill-{i}" for i in range(2)} | {f"{SERVICE}-generate-{i}" for i in range(4)}
        ready_pods(cluster, namespace, expected_pods(renamed), owners=wanted)


def test_the_hooks_run_as_their_service_account(cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    """Run each hook Job's command as the Job would — its ConfigMap laid out as its volume, its service
    account's token, a Python without site-packages — against the API server, after a real install."""
    story3 = VALUES / "story3-multinode-deepseek-r1.yaml"
    namespace = f"hooks-helm{helm.major}"
    lws_config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "lws-manager-config",
                                                                      "namespace": "lws-system"}}
    cluster.control_plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "lws-system"}},
                                 {**lws_config, "data": {"controller_manager_config.yaml": LWS_CONFIG}}])
    try:
        with release(cluster, helm, "svc", namespace) as installed:
            installed.install(story3)  # the hook Jobs ran on kwok (their pods "complete"): helm waited for them
            ready_pods(cluster, namespace, expected_pods(story3))
            run = hook_runner(cluster, installed, "deepseek-r1-inference", tmp_path)

            checked = run("check")
            assert checked.returncode == 0 and checked.stdout == "prerequisites: ok\n", checked.stderr
            # With a router, the APIs it needs (served here: the Gateway API and Inference Extension CRDs are in).
            rendered = json.loads(cluster.core.read_namespaced_config_map("deepseek-r1-inference-hooks",
                                                                         namespace).data["spec.json"])
            router = {"name": "router", "componentType": "router", "httproute": {"parentRefs": [{"name": "gw"}]},
                      "endpointPicker": {"generation": "gie-v1.0"}}
            routed = run("check", service_spec={**rendered, "roles": [*rendered["roles"], router]})
            assert routed.returncode == 0 and routed.stdout == "prerequisites: ok\n", routed.stderr
            newer = {**router, "endpointPicker": {"generation": "gie-v1.5"}, "models": [{"name": "chat"}]}
            routed = run("check", service_spec={**rendered, "roles": [*rendered["roles"], newer]})
            assert routed.returncode == 0 and routed.stdout == "prerequisites: ok\n", routed.stderr
            reported = run("status")
            assert reported.returncode == 0, reported.stderr
            assert reported.stdout.strip().endswith(f"{namespace}/deepseek-r1-inference: Running")
            [live] = cluster.custom(("fusioninfer.io", "v1alpha1", "inferenceservices"), namespace)
            component = {k: v for k, v in live["status"]["components"]["inference"].items() if k != "lastUpdateTime"}
            assert component == {"desiredReplicas": 2, "readyReplicas": 2, "nodesPerReplica": 4, "totalPods": 8,
                                 "readyPods": 8, "phase": "Running"}
            assert [c["type"] for c in live["status"]["conditions"]] == ["Ready"]

            # LWS's own gang scheduling switched on: the check refuses, saying why and what to do.
            gang_on = LWS_CONFIG + "gangSchedulingManagement:\n  schedulerProvider: volcano\n"
            cluster.control_plane.apply([{**lws_config, "data": {"controller_manager_config.yaml": gang_on}}])
            refused = run("check")
            assert refused.returncode == 1
            assert ("LWS gang scheduling management is on (lws-system/lws-manager-config, "
                    "controller_manager_config.yaml: gangSchedulingManagement)") in refused.stderr
    finally:  # the namespace stays: deleting one takes the namespace controller a while
        cluster.control_plane.kubectl("delete", "configmap", "lws-manager-config", "--namespace", "lws-system")


LWS_CONFIG = "apiVersion: config.lws.x-k8s.io/v1alpha1\nkind: Configuration\nleaderElection:\n  leaderElect: true\n"


