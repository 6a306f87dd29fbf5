"""Production defaults on the control plane, helm 3 and 4, the hook Jobs running for real: a namespace
that enforces the Pod Security Standard "restricted" admits the picker, the hook Jobs and — with the
restricted example's templates — the serving pods, and refuses a picker without our securityContext;
PodMonitors are refused while their API is not served (by Helm itself, and by the check Job, which Argo
CD runs before it applies anything), and applied as rendered once the Prometheus Operator's CRDs are."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests import modules
from tests.builders import SCRAPED_FROM_MONITORING
from tests.controlplane.builds import shared_crd
from tests.controlplane.cluster import PICKERS, ROLE_NAME, Cluster, eventually, ready, release
from tests.controlplane.hook_kubelet import REAL_HOOKS, HookKubelet, run_check
from tests.helm import CHART, VALUES, Helm
from tests.support import rendered_spec

RESTRICTED = VALUES / "restricted-router-pd-qwen3-8b.yaml"
PICKER = "qwen-pd-router-epp"
CERTIFICATES = ("cert-manager.io", "v1", "certificates")
MONITOR_CRDS = ("monitoring.coreos.com_podmonitors.yaml", "monitoring.coreos.com_servicemonitors.yaml")
POD_MONITORS = ("monitoring.coreos.com", "v1", "podmonitors")


def with_values(tmp_path: Path, name: str, **changes: Any) -> Path:
    """The restricted example, the hooks running for real, CHANGES over it (a router's fields under
    ``router``)."""
    spec = yaml.safe_load(RESTRICTED.read_text())
    router = next(role for role in spec["roles"] if role["componentType"] == "router")
    router.update(changes.pop("router", {}))
    spec.update(changes)
    spec["hooks"] = REAL_HOOKS["hooks"]
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def picker_replica_sets(cluster: Cluster, namespace: str) -> list[Any]:
    return [rs for rs in cluster.apps.list_namespaced_replica_set(namespace).items
            if rs.metadata.name.startswith(f"{PICKER}-")]


def test_a_restricted_namespace_admits_every_pod_of_the_release(
        cluster: Cluster, helm: Helm, hook_kubelet: HookKubelet, tmp_path: Path) -> None:
    namespace = f"restricted-helm{helm.major}"
    kubectl = cluster.control_plane.kubectl
    kubectl("create", "namespace", namespace)
    kubectl("label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted",
            "pod-security.kubernetes.io/enforce-version=latest")
    try:
        with release(cluster, helm, "svc", namespace) as installed:
            # The hook Jobs' pods must be admitted for the install to pass its checks and report status.
            installed.install(with_values(tmp_path, "restricted"))
            ran = {script for run in hook_kubelet.outputs(namespace) if run.returncode == 0
                   for script in ("fusion_helm.programs.check", "fusion_helm.programs.report")
                   if any(script in str(a) for a in run.args)}
            assert ran == {"fusion_helm.programs.check", "fusion_helm.programs.report"}
            eventually("the serving pods and the pickers Ready", lambda: len(
                [p for p in cluster.pods(namespace) if ready(p) and ROLE_NAME in (p.metadata.labels or {})]) ==
                6 + PICKERS)
            # The picker's own NetworkPolicy, as the API server stored it: the picker's pods, two ports, two peers.
            [rendered] = [o for o in installed.manifest() if o["kind"] == "NetworkPolicy"
                          and o["metadata"]["name"] == PICKER]
            [stored] = [o for o in cluster.control_plane.items("networkpolicies.networking.k8s.io", namespace)
                        if o["metadata"]["name"] == PICKER]
            assert stored["spec"] == rendered["spec"] and rendered["spec"]["podSelector"]["matchLabels"][
                ROLE_NAME] == "router"
            assert [rule["ports"] for rule in stored["spec"]["ingress"]] == [
                [{"port": 9002, "protocol": "TCP"}], [{"port": 9090, "protocol": "TCP"}]]

            # The protection: the same picker without its securityContext is refused by the namespace.
            installed.install(with_values(tmp_path, "unrestricted", router={"endpointPicker": {
                "podSecurityContext": {}, "securityContext": {}}}), verb="upgrade")

            def refused() -> str | None:
                for replica_set in picker_replica_sets(cluster, namespace):
                    for condition in replica_set.status.conditions or []:
                        if condition.type == "ReplicaFailure" and "violates PodSecurity" in condition.message:
                            return str(condition.message)
                return None

            message = eventually("the unrestricted picker refused", refused)
            assert 'restricted:latest' in message and "runAsNonRoot" in message, message
    finally:
        kubectl("delete", "namespace", namespace, "--wait=false", check=False)


def test_pod_monitors_need_their_api_and_apply_as_rendered(
        cluster: Cluster, helm: Helm, hook_kubelet: HookKubelet, tmp_path: Path) -> None:
    namespace = f"monitoring-helm{helm.major}"
    kubectl = cluster.control_plane.kubectl
    monitored = with_values(tmp_path, "monitored", monitoring={"podMonitor": {
        "enabled": True, "interval": "30s", "labels": {"release": "prometheus"},
        "pickerAuthorization": {"type": "Bearer", "credentials": {"name": "metrics-reader", "key": "token"}}}},
                            **SCRAPED_FROM_MONITORING)
    crds = [str(shared_crd(name)) for name in MONITOR_CRDS]
    try:
        with release(cluster, helm, "svc", namespace) as installed:
            refused = helm.run("install", "svc", CHART, "-f", monitored, "--post-renderer", "fusion-postrender",
                               "--namespace", namespace, "--create-namespace", "--kubeconfig", cluster.kubeconfig,
                               check=False)
            # Helm maps every object to a served resource before it runs any hook: it refuses first.
            assert refused.returncode != 0
            assert 'no matches for kind "PodMonitor" in version "monitoring.coreos.com/v1"' in refused.stderr
            assert cluster.leftovers(namespace) == {}
            # The check Job, as its hook runs it (and as Argo CD runs it, a PreSync hook before it applies
            # anything), names the missing API.
            check = run_check(cluster, tmp_path / "check", rendered_spec(helm, monitored))
            assert check.returncode == 1
            assert "podmonitors (monitoring.coreos.com/v1) is not served, and the service asks for PodMonitors" \
                in check.stderr
            if installed.exists():
                installed.uninstall()

            for crd in crds:
                kubectl("apply", "--server-side", "-f", crd)
            cluster.control_plane.established("podmonitors.monitoring.coreos.com")
            installed.install(monitored)
            rendered = {o["metadata"]["name"]: o for o in installed.manifest() if o["kind"] == "PodMonitor"}
            assert sorted(rendered) == ["qwen-pd-decode", "qwen-pd-prefill", "qwen-pd-router-epp"]
            live = {o["metadata"]["name"]: o for o in cluster.custom(POD_MONITORS, namespace)}
            assert {name: o["spec"] for name, o in live.items()} == {name: o["spec"] for name, o in rendered.items()}
    finally:
        kubectl("delete", "--ignore-not-found", "--wait", *(arg for crd in crds for arg in ("-f", crd)), check=False)
        kubectl("delete", "namespace", namespace, "--wait=false", check=False)


def test_a_cert_manager_certificate_needs_its_api_and_applies_as_rendered(
        cluster: Cluster, helm: Helm, hook_kubelet: HookKubelet, tmp_path: Path) -> None:
    """spec.tls.certManager: without cert-manager's API the check names it; with its CRD (cert-manager's own,
    from its Go module) the Certificate is stored as rendered, for the Services' names."""
    namespace = f"cert-manager-helm{helm.major}"
    kubectl = cluster.control_plane.kubectl
    values = with_values(tmp_path, "certificate", tls={"certManager": {"issuerRef": {
        "name": "cluster-ca", "kind": "ClusterIssuer"}, "duration": "2160h"}})
    crd = tmp_path / "certificates.yaml"
    crd.write_bytes(modules.read("CERT_MANAGER"))
    try:
        check = run_check(cluster, tmp_path / "check", rendered_spec(helm, values))
        assert check.returncode == 1
        assert "certificates (cert-manager.io/v1) is not served, and spec.tls.certManager has a Certificate write " \
               "the serving certificate" in check.stderr
        kubectl("apply", "--server-side", "-f", str(crd))
        cluster.control_plane.established("certificates.cert-manager.io")
        with release(cluster, helm, "svc", namespace) as installed:
            installed.install(values)
            [rendered] = [o for o in installed.manifest() if o["kind"] == "Certificate"]
            [live] = cluster.custom(CERTIFICATES, namespace)
            assert live["spec"] == rendered["spec"]
            assert (live["spec"]["secretName"], live["spec"]["dnsNames"][0]) == ("qwen-pd-serving-tls", "localhost")
    finally:
        kubectl("delete", "--ignore-not-found", "--wait", "-f", str(crd), check=False)
        kubectl("delete", "namespace", namespace, "--wait=false", check=False)
