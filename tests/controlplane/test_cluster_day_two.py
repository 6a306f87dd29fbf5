"""Day two on the control plane, helm 3 and 4, the hook Jobs running for real (tests.controlplane.hook_kubelet): a
CRD an earlier chart shipped is refused and upgraded without losing a field; rollback restores another
revision's replicas, layout and HPA while untouched replicas keep their pods, and writes the status
again; an atomic upgrade whose check fails leaves the service untouched; uninstall leaves nothing of
the release behind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.builders import WAITING_REQUESTS
from tests.controlplane.cluster import (
    LWS,
    PODGROUP,
    ROLE_NAME,
    Cluster,
    eventually,
    install_crd_chart,
    ready,
    release,
)
from tests.controlplane.hook_kubelet import REAL_HOOKS, HookKubelet
from tests.helm import CHART, CRD, VALUES, Helm

STORY2 = VALUES / "story2-pd-qwen3-8b.yaml"
SERVICE = "qwen-inference-service"
OLD_CRD = Path(__file__).parent.parent / "fixtures" / "crd-before-layout.yaml"
"""The CRD as this chart shipped it before spec.layout (commit 8b75037)."""
INFERENCE_SERVICES = ("fusioninfer.io", "v1alpha1", "inferenceservices")
HPA = ("autoscaling", "v2", "horizontalpodautoscalers")


def values(tmp_path: Path, name: str, **changes: Any) -> Path:
    """Story 2 with CHANGES (roles by index: their fields updated) and the hooks running for real."""
    spec = yaml.safe_load(STORY2.read_text())
    for key, value in changes.items():
        if key == "roles":
            for role, fields in zip(spec["roles"], value, strict=True):
                role.update(fields)
                if "autoscaling" in fields:
                    del role["replicas"]
        else:
            spec[key] = value
    spec["hooks"] = {**REAL_HOOKS["hooks"], **spec.get("hooks", {})}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def helm_in(helm: Helm, cluster: Cluster, namespace: str, *args: str | Path, check: bool = True) -> Any:
    return helm.run(*args, "--namespace", namespace, "--kubeconfig", cluster.kubeconfig, check=check)


def serving(cluster: Cluster, namespace: str) -> list[Any]:
    """The service's pods (not the hook Jobs')."""
    return [pod for pod in cluster.pods(namespace) if ROLE_NAME in (pod.metadata.labels or {})]


def uids(cluster: Cluster, namespace: str) -> dict[str, str]:
    return {pod.metadata.name: pod.metadata.uid for pod in serving(cluster, namespace)}


def settled(cluster: Cluster, namespace: str, names: set[str]) -> dict[str, str]:
    """Wait for exactly the serving pods NAMES, all Ready; their UIDs."""
    eventually(f"pods {sorted(names)} Ready", lambda: {p.metadata.name for p in serving(cluster, namespace)} == names
               and all(map(ready, serving(cluster, namespace))),
               describe=lambda: str(sorted(p.metadata.name for p in serving(cluster, namespace))))
    return uids(cluster, namespace)


def pod_names(prefill: int, decode: int) -> set[str]:
    """Story 2's pods in the replica layout: one LeaderWorkerSet, one pod, per replica."""
    return {f"{SERVICE}-{role}-{i}-0" for role, count in (("prefill", prefill), ("decode", decode))
            for i in range(count)}


def manifest_objects(helm: Helm, cluster: Cluster, namespace: str, revision: int, kind: str) -> dict[str, Any]:
    text = helm_in(helm, cluster, namespace, "get", "manifest", "svc", "--revision", str(revision)).stdout
    return {o["metadata"]["name"]: o for o in yaml.safe_load_all(text) if o and o["kind"] == kind}


def live(cluster: Cluster, resource: tuple[str, str, str], namespace: str) -> dict[str, Any]:
    return {o["metadata"]["name"]: o for o in cluster.custom(resource, namespace)}


def assert_applied(found: dict[str, Any], rendered: dict[str, Any]) -> None:
    """FOUND's spec is RENDERED's, but for the fields the API server defaults (a PodGroup's queue)."""
    assert {key: found["spec"][key] for key in rendered["spec"]} == rendered["spec"]
    assert set(found["spec"]) - set(rendered["spec"]) <= {"queue"}


def hook_runs(hook_kubelet: HookKubelet, namespace: str, script: str) -> list[Any]:
    return [run for run in hook_kubelet.outputs(namespace) if any(script in str(arg) for arg in run.args)]


def test_an_older_crd_is_refused_then_upgraded_and_no_field_is_lost(
        cluster: Cluster, helm: Helm, hook_kubelet: HookKubelet, tmp_path: Path) -> None:
    """The CRD as an earlier chart installed it: Helm 3's crds/ (kubectl create), or an admin's
    server-side apply, a field manager Helm 4's apply conflicts with."""
    namespace = f"crd-upgrade-helm{helm.major}"
    kubectl = cluster.control_plane.kubectl
    by_role = values(tmp_path, "role", layout="role")
    try:  # whatever fails here, the next test gets the chart's CRD (finally)
        kubectl("delete", "crd", "inferenceservices.fusioninfer.io", "--wait")
        if helm.major == 3:
            kubectl("create", "-f", str(OLD_CRD))
        else:
            kubectl("apply", "--server-side", "-f", str(OLD_CRD))
        cluster.control_plane.established("inferenceservices.fusioninfer.io")
        with release(cluster, helm, "svc", namespace) as installed:
            refused = helm_in(helm, cluster, namespace, "install", "svc", CHART, "-f", by_role, "--post-renderer",
                              "fusion-postrender", "--create-namespace", "--wait", check=False)
            assert refused.returncode != 0, "the check Job refuses the older CRD"
            [check] = [r for r in hook_runs(hook_kubelet, namespace, "fusion_helm.programs.check") if r.returncode]
            assert "the served InferenceService CRD is older than this chart's: it lacks spec.gangSchedule." \
                in check.stderr, check.stderr
            assert "spec.layout, spec.model, spec.modelCache, spec.monitoring and " in check.stderr
            assert "which the API server would drop from the service; upgrade it: helm upgrade --install " \
                   "fusioninfer-crds charts/fusioninfer-crds --take-ownership" in check.stderr
            assert cluster.custom(INFERENCE_SERVICES, namespace) == [], "nothing applied past the check"
            installed.uninstall()

            install_crd_chart(cluster, helm)  # the upgrade docs/lifecycle.md gives
            installed.install(by_role)
            [stored] = cluster.custom(INFERENCE_SERVICES, namespace)
            assert stored["spec"]["layout"] == "role"
            assert set(live(cluster, LWS, namespace)) == {f"{SERVICE}-prefill", f"{SERVICE}-decode"}
            # The status Job, run for real after the install, wrote the role layout's status.
            eventually("the status hook's report", lambda: "Progressing" in {
                c["type"] for c in (cluster.custom(INFERENCE_SERVICES, namespace)[0].get("status") or {}).get(
                    "conditions", [])})
            installed.uninstall()
            helm.run("uninstall", "fusioninfer-crds", "--namespace", "default", "--kubeconfig", cluster.kubeconfig)
            kubectl("get", "crd", "inferenceservices.fusioninfer.io")  # kept: other releases' services use it
    finally:
        install_crd_chart(cluster, helm)


def test_rollback_restores_a_revision_s_replicas_layout_and_hpa(
        cluster: Cluster, helm: Helm, hook_kubelet: HookKubelet, tmp_path: Path) -> None:
    namespace = f"rollback-helm{helm.major}"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(values(tmp_path, "v1"))
        first = settled(cluster, namespace, pod_names(2, 4))
        installed.install(values(tmp_path, "v2", roles=[{"replicas": 3}, {"replicas": 2}]), verb="upgrade")
        settled(cluster, namespace, pod_names(3, 2))

        helm_in(helm, cluster, namespace, "rollback", "svc", "1", "--wait")  # revision 3
        back = settled(cluster, namespace, pod_names(2, 4))
        untouched = pod_names(2, 2)
        assert {name: back[name] for name in untouched} == {name: first[name] for name in untouched}
        assert set(live(cluster, LWS, namespace)) == set(manifest_objects(helm, cluster, namespace, 1,
                                                                          "LeaderWorkerSet"))
        assert_applied(live(cluster, PODGROUP, namespace)[SERVICE], manifest_objects(
            helm, cluster, namespace, 1, "PodGroup")[SERVICE])
        eventually("the post-rollback status hook's report", lambda: len(
            hook_runs(hook_kubelet, namespace, "fusion_helm.programs.report")) >= 3 and all(
            r.returncode == 0 for r in hook_runs(hook_kubelet, namespace, "fusion_helm.programs.report")))
        eventually("decode's 4 ready replicas in the status", lambda: (cluster.custom(
            INFERENCE_SERVICES, namespace)[0].get("status") or {}).get("components", {}).get("decode", {}).get(
            "readyReplicas") == 4)

        # Another layout with an autoscaler (revision 4), then back to revision 3's, and forth again.
        installed.install(values(tmp_path, "v4", layout="role", allowLayoutChange=True, roles=[
            {}, {"autoscaling": {"minReplicas": 2, "maxReplicas": 4, "metrics": WAITING_REQUESTS}}]), verb="upgrade")
        eventually("the HPA", lambda: set(live(cluster, HPA, namespace)) == {f"{SERVICE}-decode"})
        helm_in(helm, cluster, namespace, "rollback", "svc", "3", "--wait")  # revision 5
        settled(cluster, namespace, pod_names(2, 4))
        assert live(cluster, HPA, namespace) == {}
        assert set(live(cluster, LWS, namespace)) == set(manifest_objects(helm, cluster, namespace, 1,
                                                                          "LeaderWorkerSet"))
        helm_in(helm, cluster, namespace, "rollback", "svc", "4", "--wait")  # revision 6
        eventually("revision 4's objects", lambda: set(live(cluster, HPA, namespace)) == {f"{SERVICE}-decode"}
                   and set(live(cluster, LWS, namespace)) == {f"{SERVICE}-prefill", f"{SERVICE}-decode"})
        assert_applied(live(cluster, PODGROUP, namespace)[SERVICE], manifest_objects(
            helm, cluster, namespace, 4, "PodGroup")[SERVICE])


def test_an_atomic_upgrade_whose_check_fails_leaves_the_service_untouched(
        cluster: Cluster, helm: Helm, hook_kubelet: HookKubelet, tmp_path: Path) -> None:
    namespace = f"atomic-helm{helm.major}"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(values(tmp_path, "v1"))
        before = settled(cluster, namespace, pod_names(2, 4))
        generations = {name: o["metadata"]["generation"] for name, o in live(cluster, LWS, namespace).items()}
        [service] = cluster.custom(INFERENCE_SERVICES, namespace)
        atomic = "--atomic" if helm.major == 3 else "--rollback-on-failure"
        failed = helm_in(helm, cluster, namespace, "upgrade", "svc", CHART, "-f", values(
            tmp_path, "v2", roles=[{"replicas": 3}, {}], schedulingStrategy={"queue": "no-such-queue"}),
            "--post-renderer", "fusion-postrender", atomic, check=False)
        assert failed.returncode != 0
        assert any("queue no-such-queue does not exist" in run.stderr
                   for run in hook_runs(hook_kubelet, namespace, "fusion_helm.programs.check")), failed.stderr
        assert uids(cluster, namespace) == before
        assert {name: o["metadata"]["generation"] for name, o in live(cluster, LWS, namespace).items()} == generations
        [after] = cluster.custom(INFERENCE_SERVICES, namespace)
        assert after["spec"] == service["spec"]
        history = json.loads(helm_in(helm, cluster, namespace, "history", "svc", "-o", "json").stdout)
        assert [h["status"] for h in history][-1] == "deployed" and history[-1]["chart"] == history[0]["chart"]


def namespaced_leftovers(cluster: Cluster, namespace: str) -> list[str]:
    """Every namespaced object in NAMESPACE, but what Kubernetes puts in each (events, the default
    ServiceAccount, the root CA ConfigMap)."""
    kinds = cluster.control_plane.kubectl("api-resources", "--namespaced", "--verbs=list", "-o", "name").stdout.split()
    kinds = [kind for kind in kinds if kind.split(".")[0] not in ("events", "bindings", "localsubjectaccessreviews")]
    found = cluster.control_plane.kubectl("get", ",".join(kinds), "-n", namespace, "-o", "name",
                                          "--ignore-not-found").stdout.split()
    return [name for name in found if name not in ("serviceaccount/default", "configmap/kube-root-ca.crt")]


def test_uninstall_leaves_nothing_of_the_release(cluster: Cluster, helm: Helm, hook_kubelet: HookKubelet,
                                                 tmp_path: Path) -> None:
    """After an install with a router, an autoscaler and a queue, and a failed upgrade (whose hook
    objects and Job its failure leaves behind)."""
    namespace = f"uninstall-helm{helm.major}"
    spec = yaml.safe_load((VALUES / "router-pd-qwen3-8b.yaml").read_text())
    spec["layout"] = "disaggregated"
    del spec["roles"][1]["replicas"]
    spec["roles"][1]["autoscaling"] = {"minReplicas": 2, "maxReplicas": 4, "metrics": WAITING_REQUESTS}
    spec["hooks"] = {**REAL_HOOKS["hooks"], "ttlSecondsAfterFinished": 3}
    routed = tmp_path / "routed.yaml"
    routed.write_text(yaml.safe_dump(spec))
    queue = {"schedulingStrategy": {"queue": "no-such-queue"}}
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(queue))
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(routed)
        eventually("the HPA and the router", lambda: live(cluster, HPA, namespace) and any(
            p.metadata.name.startswith("qwen-pd-router-epp") for p in cluster.pods(namespace)))
        failed = helm_in(helm, cluster, namespace, "upgrade", "svc", CHART, "-f", routed, "-f", broken,
                         "--post-renderer", "fusion-postrender", check=False)
        checks = hook_runs(hook_kubelet, namespace, "fusion_helm.programs.check")
        assert failed.returncode != 0 and any("queue no-such-queue does not exist" in run.stderr
                                              for run in checks), failed.stderr
        left = namespaced_leftovers(cluster, namespace)
        if helm.major == 3:  # it keeps a failed phase's hook objects (Helm 4 deletes them itself)
            assert "serviceaccount/qwen-pd-hooks" in left, left
        installed.uninstall()
        eventually("nothing of the release in its namespace", lambda: not namespaced_leftovers(cluster, namespace),
                   describe=lambda: str(namespaced_leftovers(cluster, namespace)))
        cluster_roles = cluster.control_plane.kubectl("get", "clusterroles,clusterrolebindings", "-o", "name").stdout
        assert f"{namespace}-qwen-pd-hooks" not in cluster_roles


def test_the_crd_chart_takes_over_an_operator_s_crd_only_when_told(cluster: Cluster, helm: Helm,
                                                                   tmp_path: Path) -> None:
    """The FusionInfer operator's CRD (built by controller-gen, the same name) is refused, the install
    applying nothing; with the guard off (adoptForeignCRD) it is taken over, as --take-ownership alone
    would take it."""
    kubectl = cluster.control_plane.kubectl
    operators = yaml.safe_load(CRD.read_text())
    operators["metadata"]["annotations"] = {"controller-gen.kubebuilder.io/version": "v0.17.2"}
    (tmp_path / "operator-crd.yaml").write_text(yaml.safe_dump(operators))
    helm.run("uninstall", "fusioninfer-crds", "--namespace", "default", "--kubeconfig", cluster.kubeconfig,
             check=False)
    kubectl("delete", "crd", "inferenceservices.fusioninfer.io", "--wait")
    kubectl("create", "-f", str(tmp_path / "operator-crd.yaml"))
    try:
        refused = install_crd_chart(cluster, helm, check=False)
        assert refused.returncode != 0
        assert "the CRD inferenceservices.fusioninfer.io is installed and managed by an operator (its " \
               "controller-gen annotation), not by this chart" in refused.stderr, refused.stderr
        assert "--set adoptForeignCRD=true" in refused.stderr
        stored = json.loads(kubectl("get", "crd", "inferenceservices.fusioninfer.io", "-o", "json").stdout)
        assert "meta.helm.sh/release-name" not in stored["metadata"]["annotations"], "nothing applied"

        adopted = install_crd_chart(cluster, helm, "--set", "adoptForeignCRD=true")
        assert adopted.returncode == 0, adopted.stderr
        stored = json.loads(kubectl("get", "crd", "inferenceservices.fusioninfer.io", "-o", "json").stdout)
        assert stored["metadata"]["annotations"]["meta.helm.sh/release-name"] == "fusioninfer-crds"
        assert install_crd_chart(cluster, helm).returncode == 0  # ours now: upgrades need no flag
    finally:
        install_crd_chart(cluster, helm, "--set", "adoptForeignCRD=true")


def test_a_failed_check_says_why_where_helm_and_kubectl_show_it(cluster: Cluster, helm: Helm,
                                                                hook_kubelet: HookKubelet, tmp_path: Path) -> None:
    """The check's one line is the hook pod's termination message (`kubectl describe pod`), its log
    (`kubectl logs job/<service>-hooks-check`, as docs/lifecycle.md says), and, on Helm 4, part of what
    `helm install` prints (helm.sh/hook-output-log-policy); Helm 3 names only the Job."""
    namespace = f"failed-check-helm{helm.major}"
    reason = "queue no-such-queue does not exist"
    broken = values(tmp_path, "broken", schedulingStrategy={"queue": "no-such-queue"},
                    hooks={"ttlSecondsAfterFinished": 600})
    kubectl = cluster.control_plane.kubectl
    with release(cluster, helm, "svc", namespace):
        failed = helm_in(helm, cluster, namespace, "install", "svc", CHART, "-f", broken, "--create-namespace",
                         "--post-renderer", "fusion-postrender", check=False)
        assert failed.returncode != 0 and f"{SERVICE}-hooks-check" in failed.stderr, failed.stderr
        assert (reason in failed.stderr) == (helm.major >= 4), failed.stderr
        [pod] = [pod for pod in cluster.pods(namespace) if pod.metadata.name.startswith(f"{SERVICE}-hooks-check")]
        [container] = pod.status.container_statuses
        assert reason in container.state.terminated.message, container.state.terminated
        assert reason in kubectl("describe", "pod", "-l", f"job-name={SERVICE}-hooks-check", "-n", namespace).stdout
        assert reason in kubectl("logs", f"job/{SERVICE}-hooks-check", "-n", namespace).stdout
        # a failed hook Job stays for ttlSecondsAfterFinished, to be read; no release owns it
        kubectl("delete", "job", f"{SERVICE}-hooks-check", "-n", namespace, "--cascade=foreground", "--wait")
