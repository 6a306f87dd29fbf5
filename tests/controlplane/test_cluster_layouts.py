"""The role layout on the real control plane: the LWS controller rolls a role group by group under its
rollout bounds, holds back a canary's lower groups, scales through its scale subresource (as an
autoscaler does) without the gang or a later upgrade undoing it; switching layouts is refused."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubernetes
import yaml

from tests.builders import requesting_cpu
from tests.controlplane import set_gpu_nodes
from tests.controlplane.cluster import (
    GPU_NODES,
    GROUP_INDEX,
    LWS,
    ONE_HELM,
    PODGROUP,
    ROLE_NAME,
    Cluster,
    eventually,
    ready,
    ready_pods,
    release,
)
from tests.controlplane.hook_kubelet import hook_runner
from tests.helm import CHART, VALUES, Helm

STORY2 = VALUES / "story2-pd-qwen3-8b.yaml"
SERVICE = "qwen-inference-service"
DECODE_NODES = 2


def values(into: Path, decode: dict[str, Any] | None = None, image: str = "vllm/vllm-openai:v0.11.0",
           prefill_replicas: int = 1) -> Path:
    """Story 2 in the role layout, its decode role 4 groups of 2 pods (leader + worker: a group is
    more than one pod), with DECODE's fields and IMAGE on decode."""
    spec = yaml.safe_load(STORY2.read_text())
    spec["layout"] = "role"
    prefill, decode_role = spec["roles"]
    prefill["replicas"] = prefill_replicas
    decode_role.update({"replicas": 4, "multinode": {"nodeCount": DECODE_NODES}, **(decode or {})})
    if "autoscaling" in decode_role:
        del decode_role["replicas"]
        requesting_cpu(decode_role)
    decode_role["template"]["spec"]["containers"][0]["image"] = image
    into.write_text(yaml.safe_dump(spec))
    return into


def pods_of(cluster: Cluster, namespace: str, role: str) -> list[kubernetes.client.V1Pod]:
    return list(cluster.core.list_namespaced_pod(namespace, label_selector=f"{ROLE_NAME}={role}").items)


def images_by_group(pods: list[kubernetes.client.V1Pod]) -> dict[int, set[str]]:
    found: dict[int, set[str]] = {}
    for pod in pods:
        found.setdefault(int(pod.metadata.labels[GROUP_INDEX]), set()).add(pod.spec.containers[0].image)
    return found


class UnavailableGroups(threading.Thread):
    """Watches a role's pods and keeps the most groups that were at once not fully Ready (a pod
    missing, not Ready, or being deleted)."""

    def __init__(self, cluster: Cluster, namespace: str, role: str, groups: int, size: int) -> None:
        super().__init__(daemon=True)
        self.cluster, self.namespace, self.role, self.groups, self.size = cluster, namespace, role, groups, size
        self.pods: dict[str, tuple[int, bool]] = {}
        self.worst: set[int] = set()
        self.initially_down: set[int] = set()
        self.events = 0
        self.done = threading.Event()
        self.started_watching = threading.Event()

    def unavailable(self) -> set[int]:
        ready_count = {group: 0 for group in range(self.groups)}
        for group, is_ready in self.pods.values():
            if is_ready and group in ready_count:
                ready_count[group] += 1
        return {group for group, count in ready_count.items() if count < self.size}

    def note(self, pod: kubernetes.client.V1Pod, deleted: bool) -> None:
        self.record(pod, deleted)
        now = self.unavailable()
        if len(now) > len(self.worst):
            self.worst = now

    def record(self, pod: kubernetes.client.V1Pod, deleted: bool) -> None:
        if deleted:
            self.pods.pop(pod.metadata.name, None)
        else:
            alive = ready(pod) and pod.metadata.deletion_timestamp is None
            self.pods[pod.metadata.name] = (int(pod.metadata.labels[GROUP_INDEX]), alive)

    def run(self) -> None:
        listed = self.cluster.core.list_namespaced_pod(self.namespace, label_selector=f"{ROLE_NAME}={self.role}")
        for pod in listed.items:
            self.record(pod, deleted=False)
        self.initially_down = self.unavailable()
        version = listed.metadata.resource_version
        self.started_watching.set()
        while not self.done.is_set():
            watch = kubernetes.watch.Watch()
            for event in watch.stream(self.cluster.core.list_namespaced_pod, self.namespace,
                                      label_selector=f"{ROLE_NAME}={self.role}", resource_version=version,
                                      timeout_seconds=2):
                pod = event["object"]
                version = pod.metadata.resource_version
                self.events += 1
                self.note(pod, deleted=event["type"] == "DELETED")
                if self.done.is_set():
                    watch.stop()

    def __enter__(self) -> UnavailableGroups:
        self.start()
        self.started_watching.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.join(30)


def all_groups_on(cluster: Cluster, namespace: str, image: str, groups: Callable[[int], bool]
                  ) -> Callable[[], bool]:
    def probe() -> bool:
        pods = pods_of(cluster, namespace, "decode")
        by_group = images_by_group(pods)
        return (len(pods) == 4 * DECODE_NODES and all(map(ready, pods))
                and all(by_group.get(g) == {image} for g in range(4) if groups(g)))
    return probe


def test_a_template_change_rolls_one_group_at_a_time_and_partition_keeps_a_canary(
        cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    namespace = f"rolling-helm{helm.major}"
    rollout = {"rollout": {"maxUnavailable": 1}}
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(values(tmp_path / "v1.yaml", rollout))
        ready_pods(cluster, namespace, 1 + 4 * DECODE_NODES)
        prefill_uids = {p.metadata.uid for p in pods_of(cluster, namespace, "prefill")}

        with UnavailableGroups(cluster, namespace, "decode", groups=4, size=DECODE_NODES) as watched:
            installed.install(values(tmp_path / "v2.yaml", rollout, image="vllm/vllm-openai:v0.11.1"), verb="upgrade")
            eventually("every decode group on the new image",
                       all_groups_on(cluster, namespace, "vllm/vllm-openai:v0.11.1", lambda g: True), timeout=180,
                       describe=lambda: str(images_by_group(pods_of(cluster, namespace, "decode"))))
        assert not watched.initially_down, "every group was Ready before the change"
        assert watched.events > 4 * DECODE_NODES, "the watch saw the pods replaced"
        assert len(watched.worst) == 1, f"groups {sorted(watched.worst)} were down at once"
        assert {p.metadata.uid for p in pods_of(cluster, namespace, "prefill")} == prefill_uids

        # A canary: partition 2 keeps groups 0 and 1 (and their pods) on the old template.
        kept = {p.metadata.uid for p in pods_of(cluster, namespace, "decode")
                if int(p.metadata.labels[GROUP_INDEX]) < 2}
        canary = {"rollout": {"maxUnavailable": 1, "partition": 2}}
        installed.install(values(tmp_path / "v3.yaml", canary, image="vllm/vllm-openai:v0.12.0"), verb="upgrade")
        eventually("groups 2 and 3 on the canary image",
                   all_groups_on(cluster, namespace, "vllm/vllm-openai:v0.12.0", lambda g: g >= 2), timeout=120,
                   describe=lambda: str(images_by_group(pods_of(cluster, namespace, "decode"))))
        pods = pods_of(cluster, namespace, "decode")
        assert images_by_group(pods) == {0: {"vllm/vllm-openai:v0.11.1"}, 1: {"vllm/vllm-openai:v0.11.1"},
                                         2: {"vllm/vllm-openai:v0.12.0"}, 3: {"vllm/vllm-openai:v0.12.0"}}
        assert {p.metadata.uid for p in pods if int(p.metadata.labels[GROUP_INDEX]) < 2} == kept


def lws_object(cluster: Cluster, namespace: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = kubernetes.client.CustomObjectsApi(cluster.api).get_namespaced_custom_object(
        *LWS[:2], namespace, LWS[2], name)
    return found


def lws_replicas(cluster: Cluster, namespace: str, name: str) -> int | None:
    replicas: int | None = lws_object(cluster, namespace, name)["spec"].get("replicas")
    return replicas


def managed_fields(cluster: Cluster, namespace: str, name: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = lws_object(cluster, namespace, name)["metadata"]["managedFields"]
    return entries


def test_scaling_through_the_scale_subresource_survives_an_upgrade(
        cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    """The autoscaler's view: an HPA is installed and brings the role to its minimum; scaling the
    LWS's scale subresource places the new group whole, leaves the PodGroup as rendered, and a
    following helm upgrade (here scaling another role) keeps the count."""
    namespace = f"autoscale-helm{helm.major}"
    lws = f"{SERVICE}-decode"
    scaling = {"autoscaling": {"minReplicas": 2, "maxReplicas": 4}}
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(values(tmp_path / "v1.yaml", scaling))
        [hpa] = kubernetes.client.AutoscalingV2Api(cluster.api).list_namespaced_horizontal_pod_autoscaler(
            namespace).items
        assert (hpa.spec.scale_target_ref.kind, hpa.spec.scale_target_ref.name) == ("LeaderWorkerSet", lws)
        # The HPA controller raises the LWS (created at LWS's default, 1) to minReplicas.
        eventually("the HPA's minimum", lambda: lws_replicas(cluster, namespace, lws) == 2)
        ready_pods(cluster, namespace, 1 + 2 * DECODE_NODES)
        [podgroup] = cluster.custom(PODGROUP, namespace)

        kubernetes.client.CustomObjectsApi(cluster.api).patch_namespaced_custom_object_scale(
            *LWS[:2], namespace, LWS[2], lws, {"spec": {"replicas": 3}})
        pods = ready_pods(cluster, namespace, 1 + 3 * DECODE_NODES)
        new_group = [p for p in pods if p.metadata.labels.get(GROUP_INDEX) == "2"
                     and p.metadata.labels[ROLE_NAME] == "decode"]
        assert len(new_group) == DECODE_NODES and all(p.spec.node_name for p in new_group)
        [after] = cluster.custom(PODGROUP, namespace)
        assert after["spec"] == podgroup["spec"]

        installed.install(values(tmp_path / "v2.yaml", scaling, prefill_replicas=2), verb="upgrade")
        ready_pods(cluster, namespace, 2 + 3 * DECODE_NODES)
        assert lws_replicas(cluster, namespace, lws) == 3
        # Helm 3 wrote the LWS with a three-way merge patch, Helm 4 by server-side apply: neither claims replicas.
        helm_writes = {entry["operation"] for entry in managed_fields(cluster, namespace, lws)
                       if entry["manager"].startswith("helm")}
        assert helm_writes == ({"Update"} if helm.major == 3 else {"Apply"})
        [after] = cluster.custom(PODGROUP, namespace)
        assert after["spec"] == podgroup["spec"]


def test_the_hpa_passes_server_side_validation(cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    metrics = [{"type": "Pods", "pods": {"metric": {"name": "vllm:num_requests_waiting"},
                                         "target": {"type": "AverageValue", "averageValue": "5"}}},
               {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                          "averageUtilization": 80}}}]
    given = values(tmp_path / "hpa.yaml", {"autoscaling": {"minReplicas": 1, "maxReplicas": 8, "metrics": metrics}})
    dry = helm.run("install", "hpa", CHART, "-f", given, "--post-renderer", "fusion-postrender", "--dry-run=server",
                   "--namespace", "default", "--kubeconfig", cluster.kubeconfig)
    hpas = [doc for doc in yaml.safe_load_all(dry.stdout.split("MANIFEST:", 1)[-1].split("NOTES:")[0])
            if doc and doc.get("kind") == "HorizontalPodAutoscaler"]
    assert [hpa["spec"]["metrics"] for hpa in hpas] == [metrics]
    server = cluster.control_plane.kubectl("apply", "--dry-run=server", "-o", "yaml", "-n", "default", "-f", "-",
                                           stdin=yaml.safe_dump(hpas[0]))
    assert yaml.safe_load(server.stdout)["spec"]["metrics"][0]["pods"]["target"]["averageValue"] == "5"


def test_switching_layouts_is_refused_with_the_pods_it_restarts(cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    namespace = f"switch-helm{helm.major}"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(STORY2)
        ready_pods(cluster, namespace, 6)
        to_role = tmp_path / "role.yaml"
        to_role.write_text(yaml.safe_dump({"layout": "role"}))
        args = ("upgrade", "svc", CHART, "-f", STORY2, "-f", to_role, "--post-renderer", "fusion-postrender",
                "--namespace", namespace, "--kubeconfig", cluster.kubeconfig)
        refused = helm.run(*args, check=False)
        assert refused.returncode != 0
        assert (f"this upgrade changes InferenceService {SERVICE} from layout replica to role, which replaces every "
                "LeaderWorkerSet and restarts its 6 pod(s); to allow it, set allowLayoutChange=true") in refused.stderr
        assert len({o["metadata"]["name"] for o in cluster.custom(LWS, namespace)}) == 6
        helm.run(*args, "--set", "allowLayoutChange=true")
        ready_pods(cluster, namespace, 6, owners={f"{SERVICE}-prefill", f"{SERVICE}-decode"})


@ONE_HELM
def test_a_surge_group_that_cannot_be_placed_holds_the_rollout_not_the_gang(
        cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    """maxSurge 1, maxUnavailable 0 on a full cluster: the surge group is a "more" subgroup Volcano
    cannot place, so the rollout waits while every running group keeps serving; the status hook, as
    its service account, says the role is Progressing and still Ready."""
    namespace = f"surge-helm{helm.major}"
    eight = {"resources": {"limits": {"nvidia.com/gpu": "8"}}}

    def full(into: Path, image: str) -> Path:
        values(into, {"replicas": 2, "rollout": {"maxUnavailable": 0, "maxSurge": 1}}, image=image)
        spec = yaml.safe_load(into.read_text())
        for role_spec in spec["roles"]:
            role_spec["template"]["spec"]["containers"][0].update(eight)
        into.write_text(yaml.safe_dump(spec))
        return into

    set_gpu_nodes(cluster.control_plane, 5)  # prefill 1 pod + decode 2 groups of 2 pods, 8 GPUs each
    try:
        with release(cluster, helm, "svc", namespace) as installed:
            installed.install(full(tmp_path / "v1.yaml", "vllm/vllm-openai:v0.11.0"))
            before = {p.metadata.uid for p in ready_pods(cluster, namespace, 1 + 2 * DECODE_NODES)}
            installed.install(full(tmp_path / "v2.yaml", "vllm/vllm-openai:v0.11.1"), verb="upgrade")
            eventually("the surge group's pods", lambda: len(cluster.pods(namespace)) == 1 + 3 * DECODE_NODES)
            surge = [p for p in cluster.pods(namespace) if p.metadata.labels.get(GROUP_INDEX) == "2"]
            assert all(p.spec.node_name is None for p in surge)
            [podgroup] = cluster.custom(PODGROUP, namespace)
            assert podgroup["status"]["phase"] == "Running"
            assert {p.metadata.uid for p in cluster.pods(namespace) if ready(p)} == before

            reported = hook_runner(cluster, installed, SERVICE, tmp_path)("status")
            assert reported.returncode == 0, reported.stderr
            [live] = cluster.custom(("fusioninfer.io", "v1alpha1", "inferenceservices"), namespace)
            conditions = {c["type"]: c for c in live["status"]["conditions"]}
            assert conditions["Ready"]["status"] == "True"
            updated = lws_object(cluster, namespace, f"{SERVICE}-decode")["status"].get("updatedReplicas", 0)
            assert (conditions["Progressing"]["status"], conditions["Progressing"]["message"]) == (
                "True", f"decode: {updated}/2 groups updated")  # LWS's count: the surge group is an updated one
            assert live["status"]["components"]["decode"]["readyReplicas"] == 2
    finally:
        set_gpu_nodes(cluster.control_plane, GPU_NODES)


def test_turning_autoscaling_on_hands_the_count_to_the_autoscaler(cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    """As docs/layouts.md says: the upgrade drops `replicas` from the LWS (LWS defaults it to 1) and the
    autoscaler then raises it to its minimum."""
    namespace = f"autoscale-on-helm{helm.major}"
    lws = f"{SERVICE}-decode"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(values(tmp_path / "fixed.yaml", {"replicas": 3}))
        ready_pods(cluster, namespace, 1 + 3 * DECODE_NODES)
        installed.install(values(tmp_path / "scaled.yaml", {"autoscaling": {"minReplicas": 2, "maxReplicas": 4}}),
                          verb="upgrade")
        eventually("the autoscaler's minimum", lambda: lws_replicas(cluster, namespace, lws) == 2)
        ready_pods(cluster, namespace, 1 + 2 * DECODE_NODES)
