"""Elastic serving on the control plane: KEDA's operator and metrics server (v2.21.0, from the Go module
proxy) behind the API server's aggregation layer, a Prometheus (v0.316.0) configured from the rendered
PodMonitors as the Prometheus Operator would, and kube-controller-manager's HPA controller scaling what
we render through its scale subresource, whole groups at a time, from zero and back."""

from __future__ import annotations

import contextlib
import datetime
import json
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml

from fusion_helm.expand.generations import GENERATIONS
from tests.builders import SCRAPED_FROM_MONITORING
from tests.controlplane import components
from tests.controlplane.builds import shared_crd
from tests.controlplane.clients import completion, gateway
from tests.controlplane.cluster import PICKERS, Cluster, eventually, ready, release
from tests.controlplane.pickers import kubeconfig_for, running, serving
from tests.controlplane.processes import free_port
from tests.controlplane.scenarios import HEALTH, serving_values
from tests.controlplane.serving import SERVING, ServingKubelet
from tests.controlplane.test_cluster_picker_availability import PICKER, SERVICE, RequestStream
from tests.controlplane.watch import PickerEndpoints
from tests.helm import VALUES, Helm, fusion_helm

# The service's NetworkPolicies enforced while it serves (tests/controlplane/network_policies.py).
pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("network_policies")]
LWS = ("leaderworkerset.x-k8s.io", "v1", "leaderworkersets")
POD_MONITOR_CRD = "monitoring.coreos.com_podmonitors.yaml"
ZERO_PROBE = {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 1, "failureThreshold": 60}
"""The engine's start budget: a minute (the picker holds requests that long, and two more minutes)."""
WAITING = 12
"""Requests sent while the role stands at zero."""


def elastic_values(tmp_path: Path, prometheus: str, generation: str = "llm-d-router", **autoscaling: Any) -> Path:
    """Story 1 behind a picker of GENERATION whose pods run for real (two, as the chart's default), its
    worker scaled by KEDA on the rendered signals from the Prometheus at PROMETHEUS."""
    path = serving_values(VALUES / "story1-monolithic-qwen3-8b.yaml", tmp_path, endpointPicker={
        "generation": generation, "podAnnotations": SERVING,
        # Prometheus scrapes without a token here (docs/monitoring.md, "The picker's metrics").
        "flags": {"metrics-endpoint-auth": "false"}})
    values = yaml.safe_load(path.read_text())
    worker = values["roles"][0]
    del worker["replicas"]
    worker["autoscaling"] = {"maxReplicas": 2, "prometheus": {"serverAddress": prometheus}, **autoscaling}
    engine = worker["template"]["spec"]["containers"][0]
    engine["startupProbe"] = ZERO_PROBE
    engine["readinessProbe"] = {**HEALTH, "periodSeconds": 1}
    values.update(layout="role", monitoring={"podMonitor": {"enabled": True}}, **SCRAPED_FROM_MONITORING)
    path.write_text(yaml.safe_dump(values))
    return path


@contextlib.contextmanager
def pod_monitors(cluster: Cluster) -> Iterator[None]:
    """The Prometheus Operator's PodMonitor CRD, for the while: other tests show a cluster without it."""
    crd = shared_crd(POD_MONITOR_CRD)
    cluster.control_plane.kubectl("apply", "--server-side", "-f", str(crd))
    cluster.control_plane.established("podmonitors.monitoring.coreos.com")
    try:
        yield
    finally:
        cluster.control_plane.kubectl("delete", "--ignore-not-found", "--wait", "-f", str(crd), check=False)


def lws_replicas(cluster: Cluster, namespace: str, name: str) -> int | None:
    found = kubernetes.client.CustomObjectsApi(cluster.api).get_namespaced_custom_object(
        *LWS[:2], namespace, LWS[2], name)
    return found["spec"].get("replicas")


@pytest.mark.parametrize("generation", [str(name) for name, release in GENERATIONS.items() if release.flow_control])
def test_requests_that_arrive_at_zero_wait_for_the_replica_they_wake(
        keda: Cluster, helm4: Helm, serving_kubelet: ServingKubelet, tmp_path: Path, generation: str) -> None:
    """The worker stands at zero while idle; requests sent then are held by the pickers' flow control,
    their queue wakes the role through Prometheus and KEDA (the picker-queue signal, in each generation's
    own metric name), and every one is answered once the replica is Ready. The same requests through a
    picker of the same configuration without flow control all fail at once."""
    helm, namespace = helm4, f"elastic-wake-{generation}".replace(".", "-")
    port = free_port()
    values = elastic_values(tmp_path, f"http://127.0.0.1:{port}", generation, minReplicas=0)
    with pod_monitors(keda), release(keda, helm, SERVICE, namespace) as installed:
        installed.install(values)
        manifest = {f"{o['kind']}/{o['metadata']['name']}": o for o in installed.manifest()}
        monitors = [o for o in manifest.values() if o["kind"] == "PodMonitor"]
        components.prometheus(keda.control_plane, namespace, components.pod_monitor_scrapes(
            keda.control_plane, monitors), port=port)
        [lws] = [o["metadata"]["name"] for o in manifest.values() if o["kind"] == "LeaderWorkerSet"]
        eventually("the idle worker at zero", lambda: lws_replicas(keda, namespace, lws) == 0, timeout=120)
        eventually("no serving pod", lambda: not serving_kubelet.served(namespace) or all(
            pod.role != "inference" for pod in serving_kubelet.served(namespace)), timeout=60)
        with PickerEndpoints(keda, namespace, PICKER, tmp_path / "pickers") as endpoints, \
                gateway(f"@{endpoints.path}", tmp_path) as address:
            eventually("the gateway to know the pickers", lambda: len(endpoints.addresses) == PICKERS, timeout=120)
            model = "Qwen/Qwen3-8B"

            # Without flow control (the rendered configuration less its gate): a request finds no endpoint.
            [deployment] = [o for key, o in manifest.items() if key.startswith("Deployment/")]
            [configmap] = [o for key, o in manifest.items() if key.startswith("ConfigMap/") and key.endswith("-epp")]
            config = yaml.safe_load(next(iter(configmap["data"].values())))
            assert config["featureGates"] == ["flowControl"], config
            ungated = {key: value for key, value in config.items() if key not in ("featureGates", "flowControl")}
            plain = {**configmap, "data": {key: yaml.safe_dump(ungated) for key in configmap["data"]}}
            account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
            kubeconfig = kubeconfig_for(keda, namespace, account, tmp_path / "kubeconfig")
            (tmp_path / "plain").mkdir()
            with running(deployment, plain, namespace, kubeconfig, tmp_path / "plain", offset=100) as picker:
                serving(picker)
                with gateway(picker.grpc, tmp_path / "plain") as unqueued:
                    lost = [completion(unqueued, {"model": model, "prompt": "hi", "max_tokens": 4}, timeout=30)[0]
                            for _ in range(3)]
            assert all(status >= 500 for status in lost), lost
            assert lws_replicas(keda, namespace, lws) == 0

            # With it: every request waits, and is answered by a replica made after they were sent.
            sent = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
            with ThreadPoolExecutor(WAITING) as pool:
                answers = list(pool.map(lambda i: completion(address, {"model": model, "prompt": f"hello {i}",
                                                                       "max_tokens": 4}, timeout=300),
                                        range(WAITING)))
        statuses = Counter(status for status, _, _ in answers)
        assert statuses == {200: WAITING}, (statuses, [body for status, _, body in answers if status != 200][:2])
        assert (lws_replicas(keda, namespace, lws) or 0) >= 1
        woken = [pod.metadata.creation_timestamp for pod in keda.pods(namespace)
                 if (pod.metadata.labels or {}).get("fusioninfer.io/component-type") == "worker"]
        assert woken and all(created >= sent for created in woken), (sent, woken)


def test_a_role_at_zero_whose_signals_nobody_scrapes_wakes_to_its_fallback_and_serves(
        keda: Cluster, helm4: Helm, serving_kubelet: ServingKubelet, tmp_path: Path) -> None:
    """A Prometheus that scrapes none of the service's pods (a PodMonitor its selector does not select): the
    signals are errors, not zeros, and KEDA's fallback wakes the worker to its fallback count, which serves;
    the status names the signals KEDA cannot read. Without the fallback the same role, put back at zero,
    stays there past the polls a fallback (of three, for a shorter test) waits; with that one, it wakes."""
    namespace, port = "elastic-unscraped", free_port()
    values = elastic_values(tmp_path, f"http://127.0.0.1:{port}", minReplicas=0)
    with pod_monitors(keda), release(keda, helm4, SERVICE, namespace) as installed:
        components.prometheus(keda.control_plane, namespace, [], port=port)  # selects none of them
        installed.install(values)
        [scaled] = [o for o in installed.manifest() if o["kind"] == "ScaledObject"]
        lws, name = scaled["spec"]["scaleTargetRef"]["name"], scaled["metadata"]["name"]
        assert scaled["spec"]["fallback"] == {"failureThreshold": 12, "replicas": 1}
        eventually("the worker woken to its fallback count", lambda: lws_replicas(keda, namespace, lws) == 1,
                   timeout=240)
        with PickerEndpoints(keda, namespace, PICKER, tmp_path / "pickers") as endpoints, \
                gateway(f"@{endpoints.path}", tmp_path) as address:
            eventually("the gateway to know the pickers", lambda: len(endpoints.addresses) == PICKERS, timeout=120)
            status, _, body = completion(address, {"model": "Qwen/Qwen3-8B", "prompt": "hi", "max_tokens": 4},
                                         timeout=180)
            assert status == 200, body
        eventually("the status to name the signals KEDA cannot read", lambda: (
            "signals: SignalsUnread: KEDA cannot read inference: picker-queue" in fusion_helm(
                "status", SERVICE, "-n", namespace, "--kubeconfig", keda.kubeconfig).stdout), timeout=120)

        # Without the fallback: back at zero, it stays there, though nothing reads its signals. (KEDA
        # polls each second from here, for a shorter test: the fallback counts polls, not seconds.)
        kubectl = keda.control_plane.kubectl
        kubectl("patch", "scaledobject", name, "-n", namespace, "--type", "json", "-p", json.dumps([
            {"op": "remove", "path": "/spec/fallback"},
            {"op": "replace", "path": "/spec/pollingInterval", "value": 1}]))
        time.sleep(3 * 1)  # three of KEDA's polls, by the scale loop it restarts on a change
        kubectl("scale", "leaderworkerset", lws, "-n", namespace, "--replicas", "0")
        time.sleep(8 * 1)  # eight of KEDA's polls: past the three failures the fallback below waits
        assert lws_replicas(keda, namespace, lws) == 0
        kubectl("patch", "scaledobject", name, "-n", namespace, "--type", "merge",
                "-p", json.dumps({"spec": {"fallback": {**scaled["spec"]["fallback"], "failureThreshold": 3}}}))
        eventually("the worker woken again", lambda: lws_replicas(keda, namespace, lws) == 1, timeout=120)


GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
NODES = 4
"""Story 3's replica: four 8-GPU nodes; the control plane has ten, room for two replicas and not three."""


def gang_values(tmp_path: Path, prometheus: str, replicas: int, name: str) -> Path:
    """Story 3 in layout role behind an llm-d-router picker, its worker scaled by KEDA from zero to three
    replicas on a constant query (what a signal would say), scaled down without waiting."""
    values = yaml.safe_load((VALUES / "story3-multinode-deepseek-r1.yaml").read_text())
    worker = values["roles"][0]
    del worker["replicas"]
    worker["autoscaling"] = {
        "minReplicas": 0, "maxReplicas": 3,
        "triggers": [{"type": "prometheus", "metricType": "AverageValue", "metadata": {
            "serverAddress": prometheus, "query": f"vector({replicas})", "threshold": "1",
            "activationThreshold": "0"}}],
        "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0,
                                   "policies": [{"type": "Percent", "value": 100, "periodSeconds": 1}]}}}
    values["roles"].append({"name": "router", "componentType": "router",
                            "endpointPicker": {"generation": "llm-d-router"},
                            "httproute": {"parentRefs": [{"name": "gateway"}]}})
    values["layout"] = "role"
    path = tmp_path / name
    path.write_text(yaml.safe_dump(values))
    return path


def groups(cluster: Cluster, namespace: str) -> dict[str, list[kubernetes.client.V1Pod]]:
    """The worker's pods by group (replica) index."""
    found: dict[str, list[kubernetes.client.V1Pod]] = {}
    for pod in cluster.pods(namespace):
        labels = pod.metadata.labels or {}
        if labels.get("fusioninfer.io/role-name") == "inference" and pod.metadata.deletion_timestamp is None:
            found.setdefault(labels[GROUP_INDEX], []).append(pod)
    return found


def placed(cluster: Cluster, namespace: str) -> dict[str, int]:
    """Each group's pods bound to a node: a group is placed whole (NODES) or not at all (0)."""
    return {index: sum(1 for pod in pods if pod.spec.node_name) for index, pods in groups(cluster, namespace).items()}


def evict(cluster: Cluster, pod: kubernetes.client.V1Pod) -> int:
    """The eviction API's answer for POD (201 evicted, 429 refused by a disruption budget)."""
    body = kubernetes.client.V1Eviction(metadata=kubernetes.client.V1ObjectMeta(
        name=pod.metadata.name, namespace=pod.metadata.namespace))
    try:
        cluster.core.create_namespaced_pod_eviction(pod.metadata.name, pod.metadata.namespace, body)
    except kubernetes.client.ApiException as error:
        return int(error.status)
    return 201


def test_a_multinode_role_scales_whole_from_zero_to_its_maximum_and_a_drain_breaks_one_replica_at_a_time(
        keda: Cluster, helm4: Helm, tmp_path: Path) -> None:
    """The gang follows the count KEDA chooses — none at zero, each replica placed whole at one and two, the
    third (no room) waiting whole, back to one by whole groups — `helm upgrade` never resetting it; then a
    drain: the budget in whole replicas lets one replica's pod go and holds the next replica's back, where
    a budget of pods (none, here) lets one pod of each go at once, breaking both."""
    namespace = "elastic-gang"
    address = components.prometheus(keda.control_plane, namespace, [])
    custom = kubernetes.client.CustomObjectsApi(keda.api)

    def podgroup() -> dict[str, Any]:
        [found] = custom.list_namespaced_custom_object("scheduling.volcano.sh", "v1beta1", namespace,
                                                      "podgroups")["items"]
        return found

    with release(keda, helm4, "gang", namespace) as installed:
        installed.install(gang_values(tmp_path, address, 0, "zero.yaml"))
        [lws] = [o["metadata"]["name"] for o in installed.manifest() if o["kind"] == "LeaderWorkerSet"]
        eventually("the worker at zero", lambda: lws_replicas(keda, namespace, lws) == 0, timeout=120)
        eventually("no worker pod", lambda: not groups(keda, namespace))
        assert podgroup()["spec"].get("minMember", 0) == 0  # nothing to wait for at zero (0 is left out)

        installed.install(gang_values(tmp_path, address, 1, "one.yaml"), verb="upgrade")
        eventually("one replica placed whole", lambda: placed(keda, namespace) == {"0": NODES}, timeout=120)
        installed.install(gang_values(tmp_path, address, 3, "three.yaml"), verb="upgrade")
        eventually("the maximum asked for", lambda: lws_replicas(keda, namespace, lws) == 3, timeout=120)
        # Two replicas fit; the third waits whole: none of its pods holds a node another could use. Which two:
        # whichever groups Volcano sees whole first (LWS makes groups 1 and 2 at once, and a group's workers
        # after its leader), so not always the first two.
        def two_placed_one_waiting() -> bool:
            now = placed(keda, namespace)
            return now.keys() == {"0", "1", "2"} and now["0"] == NODES and sorted(now.values()) == [0, NODES, NODES]

        eventually("two placed, the third waiting whole", two_placed_one_waiting, timeout=120,
            describe=lambda: f"placed {placed(keda, namespace)}, PodGroup {podgroup().get('spec')} "
                             f"{podgroup().get('status')}")
        # An upgrade that changes the LeaderWorkerSet, not its count (which the autoscaler owns), leaves the
        # count alone, read at once: KEDA, polling every 5 s, has not had to set it again.
        values = yaml.safe_load(gang_values(tmp_path, address, 3, "rollout.yaml").read_text())
        values["roles"][0]["rollout"] = {"maxSurge": 1}
        (tmp_path / "rollout.yaml").write_text(yaml.safe_dump(values))
        installed.install(tmp_path / "rollout.yaml", verb="upgrade")
        rolled = kubernetes.client.CustomObjectsApi(keda.api).get_namespaced_custom_object(
            *LWS[:2], namespace, LWS[2], lws)["spec"]
        assert rolled["rolloutStrategy"]["rollingUpdateConfiguration"]["maxSurge"] == 1
        assert rolled["replicas"] == 3

        installed.install(gang_values(tmp_path, address, 2, "two.yaml"), verb="upgrade")
        eventually("back to two by a whole group", lambda: placed(keda, namespace) == {"0": NODES, "1": NODES},
                   timeout=120)

        # A drain: one worker pod of each replica, one after the other.
        budget = f"{lws}"  # the role's, named as its LeaderWorkerSet in layout role

        def budget_status() -> dict[str, Any]:
            return dict(custom.get_namespaced_custom_object("policy", "v1", namespace, "poddisruptionbudgets",
                                                            budget).get("status") or {})

        assert custom.get_namespaced_custom_object("policy", "v1", namespace, "poddisruptionbudgets",
                                                   budget)["spec"]["maxUnavailable"] == 1
        eventually("the budget counting every pod", lambda: budget_status().get("currentHealthy") == 2 * NODES
                   and budget_status().get("disruptionsAllowed") == 1, timeout=60)

        def workers() -> list[kubernetes.client.V1Pod]:
            by_group = groups(keda, namespace)
            return [next(p for p in by_group[index] if (p.metadata.labels or {}).get(WORKER_INDEX) == "1")
                    for index in ("0", "1")]

        first, second = workers()
        assert (evict(keda, first), evict(keda, second)) == (201, 429)
        eventually("both replicas whole again", lambda: all(
            len(pods) == NODES and all(ready(p) for p in pods) for pods in groups(keda, namespace).values())
            and len(groups(keda, namespace)) == 2, timeout=120)
        keda.control_plane.kubectl("delete", "pdb", budget, "-n", namespace)
        first, second = workers()
        assert (evict(keda, first), evict(keda, second)) == (201, 201)  # both replicas broken at once


def pd_elastic_values(tmp_path: Path, prometheus: str) -> Path:
    """The prefill/decode example in layout disaggregated behind its llm-d-router pickers (run for real),
    both roles scaled by KEDA on the rendered signals: decode on the pickers' queue and requests in flight
    (two per replica), prefill on its prompt-token backlog (far from its target here) keeping at least one
    replica per two of decode. Scale-down without its five quiet minutes."""
    path = serving_values(VALUES / "router-pd-qwen3-8b.yaml", tmp_path, endpointPicker={
        "podAnnotations": SERVING, "flags": {"metrics-endpoint-auth": "false"}})
    values = yaml.safe_load(path.read_text())
    quick_down = {"scaleDown": {"stabilizationWindowSeconds": 0,
                                "policies": [{"type": "Percent", "value": 100, "periodSeconds": 1}]}}
    for role in values["roles"]:
        if role["componentType"] == "router":
            continue
        del role["replicas"]
        engine = role["template"]["spec"]["containers"][0]
        engine["startupProbe"] = ZERO_PROBE
        engine["readinessProbe"] = {**HEALTH, "periodSeconds": 1}
        scaling = {"minReplicas": 1, "prometheus": {"serverAddress": prometheus}, "behavior": quick_down}
        if role["componentType"] == "decoder":
            scaling.update(maxReplicas=3, signals=[{"type": "picker-queue", "target": 1},
                                                   {"type": "picker-running", "target": 2}])
        else:
            scaling.update(maxReplicas=3, signals=[{"type": "prefill-backlog", "target": 1000000}],
                           keepUpWith={"role": "decode", "ratio": 0.5})
        role["autoscaling"] = scaling
    values.update(layout="disaggregated", monitoring={"podMonitor": {"enabled": True}}, **SCRAPED_FROM_MONITORING)
    path.write_text(yaml.safe_dump(values))
    return path


def test_prefill_and_decode_scale_each_on_its_own_signal_within_their_ratio(
        keda: Cluster, helm4: Helm, serving_kubelet: ServingKubelet, tmp_path: Path) -> None:
    """Under load decode scales out on the requests its pickers have in flight, to its maximum of 3;
    prefill, whose own backlog stays far below its target, follows only as far as its ratio asks (one per
    two decode replicas: 2); when the load falls to a trickle both go back to one, the replicas removed
    leaving the pool before they stop. Every request is answered."""
    namespace, port = "elastic-pd", free_port()
    serving_kubelet.engine_options["decode"] = ["--inter-token-latency=100ms"]
    try:
        with pod_monitors(keda), release(keda, helm4, SERVICE, namespace) as installed:
            installed.install(pd_elastic_values(tmp_path, f"http://127.0.0.1:{port}"))
            manifest = installed.manifest()
            components.prometheus(keda.control_plane, namespace, components.pod_monitor_scrapes(
                keda.control_plane, [o for o in manifest if o["kind"] == "PodMonitor"]), port=port)
            [service] = [o["metadata"]["name"] for o in manifest if o["kind"] == "DisaggregatedSet"]
            custom = kubernetes.client.CustomObjectsApi(keda.api)

            def replicas(role: str) -> int:
                scaler = custom.get_namespaced_custom_object("disaggregatedset.x-k8s.io", "v1", namespace,
                                                             "disaggregatedsetrolescalers", f"{service}-{role}")
                return int((scaler.get("spec") or {}).get("replicas", 0))

            def ready_count(role: str) -> int:
                return sum(1 for pod in keda.pods(namespace) if pod.metadata.deletion_timestamp is None
                           and (pod.metadata.labels or {}).get("fusioninfer.io/role-name") == role and ready(pod))

            eventually("one prefill and one decode serving",
                       lambda: (ready_count("prefill"), ready_count("decode")) == (1, 1), timeout=180)
            with PickerEndpoints(keda, namespace, PICKER, tmp_path / "pickers") as endpoints, \
                    gateway(f"@{endpoints.path}", tmp_path) as address:
                eventually("the gateway to know the pickers", lambda: len(endpoints.addresses) == PICKERS)
                burst = RequestStream(address, "Qwen/Qwen3-8B", clients=8, max_tokens=30)
                with burst.running():
                    eventually("decode at its maximum, prefill at its ratio", lambda: (
                        replicas("decode"), replicas("prefill")) == (3, 2), timeout=180,
                        describe=lambda: f"{replicas('decode')} decode, {replicas('prefill')} prefill")
                    eventually("the new replicas serving", lambda: (
                        ready_count("prefill"), ready_count("decode")) == (2, 3), timeout=120)
                    scaled_out = time.monotonic()
                    eventually("requests answered at the new size", lambda: len(burst.since(scaled_out)) >= 8)
                # A trickle, while the replicas it no longer needs leave: they drain, and nothing is lost.
                trickle = RequestStream(address, "Qwen/Qwen3-8B", clients=2, max_tokens=30)
                with trickle.running():
                    eventually("both back to one", lambda: (replicas("decode"), replicas("prefill")) == (1, 1),
                               timeout=180)
                    eventually("the removed replicas gone", lambda: len(keda.pods(namespace)) == 2 + PICKERS,
                               timeout=120)
        for stream in (burst, trickle):
            failed = stream.failed()
            assert not failed, failed[:3]
        assert len(trickle.outcomes) > 3
    finally:
        serving_kubelet.engine_options.pop("decode", None)
