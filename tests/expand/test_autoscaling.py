"""Autoscaling on the LLM signals: a KEDA ScaledObject per role, the picker queueing what arrives while a
role starts, and everything that cannot work refused by field."""

from __future__ import annotations

from typing import Any

import pytest

from fusion_helm import InvalidSpec
from fusion_helm.kio.construct import load
from tests.builders import SCRAPED_FROM_MONITORING, WAITING_REQUESTS, render, role, service
from tests.expand import alone
from tests.support import router

PROMETHEUS = {"serverAddress": "http://prometheus-operated.monitoring:9090"}
SCRAPED = ' or on() (0 * max(up{namespace="llm",fusioninfer_io_service="svc"}))'
"""What each signal's query ends with: 0 where the service is scraped and the signal has no series yet."""
MONITORED = {"monitoring": {"podMonitor": {"enabled": True}}, **SCRAPED_FROM_MONITORING}
STARTUP = {"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 10, "failureThreshold": 90}
"""Fifteen minutes to load the weights."""


def scaled(name: str = "chat", component_type: str = "worker", nodes: int = 1, **autoscaling: Any) -> dict[str, Any]:
    spec = role(name, component_type, nodes=nodes, startupProbe=STARTUP)
    del spec["replicas"]
    spec["autoscaling"] = {"maxReplicas": 4, "prometheus": PROMETHEUS, **autoscaling}
    return spec


def routed(*roles: dict[str, Any], picker: str = "llm-d-router", layout: str = "role") -> dict[str, Any]:
    return service(*roles, router(endpointPicker={"generation": picker}), layout=layout, **MONITORED)


def picker_config(objects: dict[str, dict[str, Any]]) -> dict[str, Any]:
    config = objects["ConfigMap/svc-router-epp"]["data"]
    return load(next(iter(config.values())))


def test_a_routed_role_follows_its_picker_s_queue_and_requests_in_flight() -> None:
    objects = render(routed(scaled(minReplicas=0)))
    assert "HorizontalPodAutoscaler/svc-chat" not in objects  # KEDA makes it: never two
    assert "replicas" not in objects["LeaderWorkerSet/svc-chat"]["spec"]  # helm upgrade never resets it
    spec = objects["ScaledObject/svc-chat"]["spec"]
    assert spec["scaleTargetRef"] == {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                                      "name": "svc-chat"}
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (0, 4)
    pinned = 'namespace="llm",fusioninfer_io_service="svc",fusioninfer_io_role_name="router"'
    assert [(t["name"], t["metricType"], t["metadata"]["query"], t["metadata"]["threshold"])
            for t in spec["triggers"]] == [
        ("picker-queue", "AverageValue", f"sum(llm_d_epp_flow_control_queue_size{{{pinned}}}){SCRAPED}", "1"),
        ("picker-running", "AverageValue", f"sum(llm_d_epp_request_running{{{pinned}}}){SCRAPED}", "8")]
    assert {t["metadata"]["serverAddress"] for t in spec["triggers"]} == {PROMETHEUS["serverAddress"]}
    # Doubling at most per cold start (the startup probe's 900 s), back to zero no sooner than one.
    behavior = spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    assert {p["periodSeconds"] for p in behavior["scaleUp"]["policies"]} == {900}
    assert spec["cooldownPeriod"] == 900
    # The picker holds each request through a cold start, and the route outlasts that wait.
    config = picker_config(objects)
    assert config["featureGates"] == ["flowControl"]
    assert config["flowControl"] == {"defaultRequestTTL": "1020s"}
    rules = objects["HTTPRoute/svc-router"]["spec"]["rules"]
    assert [rule["timeouts"] for rule in rules] == [{"request": "1620s"}]


def test_behind_the_v1_5_picker_a_role_follows_that_picker_s_own_metrics() -> None:
    """GIE v1.5 queues as llm-d-router does (its flowControl gate, the request TTL), and reports its queue and
    requests in flight under the Inference Extension's names."""
    objects = render(routed(scaled(minReplicas=0), picker="gie-v1.5"))
    pinned = 'namespace="llm",fusioninfer_io_service="svc",fusioninfer_io_role_name="router"'
    assert [t["metadata"]["query"] for t in objects["ScaledObject/svc-chat"]["spec"]["triggers"]] == [
        f"sum(inference_extension_flow_control_queue_size{{{pinned}}}){SCRAPED}",
        f"sum(inference_objective_running_requests{{{pinned}}}){SCRAPED}"]
    config = picker_config(objects)
    assert config["apiVersion"] == "inference.networking.x-k8s.io/v1alpha1"
    assert (config["featureGates"], config["flowControl"]) == (["flowControl"], {"defaultRequestTTL": "1020s"})
    assert [rule["timeouts"] for rule in objects["HTTPRoute/svc-router"]["spec"]["rules"]] == [{"request": "1620s"}]


def test_the_picker_does_not_queue_where_nothing_asks_it_to() -> None:
    objects = render(routed(scaled(signals=[{"type": "engine-queue", "target": 2}])))
    assert "featureGates" not in picker_config(objects)
    assert "timeouts" not in objects["HTTPRoute/svc-router"]["spec"]["rules"][0]
    trigger, = objects["ScaledObject/svc-chat"]["spec"]["triggers"]
    assert trigger["metadata"]["query"] == (
        'sum(vllm:num_requests_waiting{namespace="llm",fusioninfer_io_service="svc",fusioninfer_io_role_name="chat"})'
        + SCRAPED)
    assert trigger["metadata"]["threshold"] == "2"


def test_an_unrouted_role_follows_its_engines_queue_in_their_own_metric_names() -> None:
    sglang = scaled()
    sglang["template"]["spec"]["containers"][0].update(
        image="lmsysorg/sglang:v0.5.23", command=["python3", "-m", "sglang.launch_server"],
        args=["--model-path", "m"])
    objects = render(service(sglang, layout="role", **MONITORED))
    trigger, = objects["ScaledObject/svc-chat"]["spec"]["triggers"]
    assert trigger["metadata"]["query"].startswith("sum(sglang:num_queue_reqs{")
    assert "ConfigMap/svc-router-epp" not in objects


def test_prefill_and_decode_each_on_its_own_signal_prefill_keeping_up_with_decode() -> None:
    prefill = scaled("prefill", "prefiller", nodes=2, minReplicas=0, keepUpWith={"role": "decode", "ratio": 0.5})
    decode = scaled("decode", "decoder", nodes=2, minReplicas=0, maxReplicas=8)
    objects = render(routed(prefill, decode, layout="disaggregated"))
    prefill_so = objects["ScaledObject/svc-prefill"]["spec"]
    assert prefill_so["scaleTargetRef"]["kind"] == "DisaggregatedSetRoleScaler"
    backlog, keep_up = prefill_so["triggers"]
    assert backlog["metadata"]["query"] == (
        'sum(rate(vllm:prompt_tokens_total{namespace="llm",fusioninfer_io_service="svc",'
        'fusioninfer_io_role_name="prefill"}[1m]))' + SCRAPED)
    # One prefill per two decode replicas, counted by their leader pods: a multi-node replica counts once.
    assert keep_up == {"type": "kubernetes-workload", "name": "keep-up-with-decode", "metadata": {
        "podSelector": "fusioninfer.io/service=svc,fusioninfer.io/role-name=decode,"
                       "leaderworkerset.sigs.k8s.io/worker-index=0",
        "value": "2", "activationValue": "0"}}
    assert [t["name"] for t in objects["ScaledObject/svc-decode"]["spec"]["triggers"]] == [
        "picker-queue", "picker-running"]


def test_a_signal_that_cannot_be_read_is_an_error_keda_acts_on_with_its_fallback() -> None:
    """No signal reads "nothing" as 0: where none of the service's pods is scraped, a signal's query is empty,
    KEDA counts it an error and keeps (or wakes the role to) the fallback count."""
    at_zero = render(routed(scaled(minReplicas=0, fallbackReplicas=2)))["ScaledObject/svc-chat"]["spec"]
    assert at_zero["fallback"] == {"failureThreshold": 12, "replicas": 2}
    assert {t["metadata"]["ignoreNullValues"] for t in at_zero["triggers"]} == {"false"}
    assert all(t["metadata"]["query"].endswith(SCRAPED) for t in at_zero["triggers"])
    assert render(routed(scaled(minReplicas=3)))["ScaledObject/svc-chat"]["spec"]["fallback"] == {
        "failureThreshold": 12, "replicas": 3}
    # Triggers alone: what they read is the user's, and so is any fallback.
    cron = {"type": "cron", "metadata": {"timezone": "UTC", "start": "0 8 * * *", "end": "0 20 * * *",
                                         "desiredReplicas": "2"}}
    alone = render(routed(scaled(prometheus=None, triggers=[cron])))["ScaledObject/svc-chat"]["spec"]
    assert "fallback" not in alone


def test_credentials_become_a_trigger_authentication_and_raw_triggers_pass_verbatim() -> None:
    cron = {"type": "cron", "metadata": {"timezone": "UTC", "start": "0 8 * * *", "end": "0 20 * * *",
                                         "desiredReplicas": "2"}}
    objects = render(routed(scaled(
        prometheus={**PROMETHEUS, "credentials": {"secretName": "prom-reader", "mode": "basic", "ca": True}},
        triggers=[cron])))
    auth = objects["TriggerAuthentication/svc-chat"]["spec"]
    assert auth == {"secretTargetRef": [
        {"parameter": "username", "name": "prom-reader", "key": "username"},
        {"parameter": "password", "name": "prom-reader", "key": "password"},
        {"parameter": "ca", "name": "prom-reader", "key": "ca"}]}
    triggers = objects["ScaledObject/svc-chat"]["spec"]["triggers"]
    assert triggers[-1] == cron
    for trigger in triggers[:-1]:
        assert trigger["authenticationRef"] == {"name": "svc-chat"}
        assert trigger["metadata"]["authModes"] == "basic"


def test_the_plain_horizontal_pod_autoscaler_stays_for_clusters_without_keda() -> None:
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 60}}
    spec = role("chat", "worker")
    del spec["replicas"]
    spec["autoscaling"] = {"maxReplicas": 3, "behavior": behavior}
    spec["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "4"}}
    objects = render(service(spec, layout="role"))
    assert objects["HorizontalPodAutoscaler/svc-chat"]["spec"]["behavior"] == behavior
    assert not [key for key in objects if key.startswith("ScaledObject/")]


def test_a_multinode_role_at_zero_leaves_the_gang_nothing_to_wait_for() -> None:
    objects = render(routed(
        scaled("prefill", "prefiller", nodes=2, minReplicas=0, keepUpWith={"role": "decode", "ratio": 1}),
        scaled("decode", "decoder", nodes=2, minReplicas=0), layout="disaggregated"))
    podgroup = objects["PodGroup/svc"]["spec"]
    assert podgroup["minMember"] == 0
    # Each replica the autoscaler adds is a subgroup of its own, placed whole or not at all.
    assert {(p["name"], p["subGroupSize"], p["minSubGroups"]) for p in podgroup["subGroupPolicy"]} == {
        ("prefill/more", 2, 0), ("decode/more", 2, 0)}


def verbatim_config() -> str:
    return "apiVersion: llm-d.ai/v1alpha1\nkind: EndpointPickerConfig\nplugins: []\nschedulingProfiles: []\n"


@pytest.mark.parametrize(("spec", "path", "words"), [
    (service(scaled(prometheus=None, minReplicas=0) | {"autoscaling": {"maxReplicas": 2, "minReplicas": 0}},
             layout="role"), "spec.roles[0].autoscaling.minReplicas", "KEDA takes a role to zero"),
    (service(scaled(metrics=[{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 80}}}]), layout="role", **MONITORED),
     "spec.roles[0].autoscaling.metrics", "two would fight"),
    (service(role("chat", "worker") | {"replicas": None} | {"autoscaling": {
        "maxReplicas": 2, "signals": [{"type": "engine-queue", "target": 1}]}}, layout="role"),
     "spec.roles[0].autoscaling.signals", "add autoscaling.prometheus.serverAddress"),
    (service(scaled(minReplicas=0), layout="role", **MONITORED),
     "spec.roles[0].autoscaling.minReplicas", "add a router role"),
    (routed(scaled(minReplicas=0), picker="gie-v1.0"),
     "spec.roles[0].autoscaling.minReplicas", "use endpointPicker.generation gie-v1.5 or llm-d-router"),
    (routed(scaled(signals=[{"type": "picker-queue", "target": 1}]), picker="gie-v1.0"),
     "spec.roles[0].autoscaling.signals[0].type", "has no flow control"),
    (service(scaled(signals=[{"type": "picker-running", "target": 1}]), layout="role", **MONITORED),
     "spec.roles[0].autoscaling.signals[0].type", "the service has no router"),
    (routed(scaled(minReplicas=0, signals=[{"type": "kv-cache", "target": 0.8}])),
     "spec.roles[0].autoscaling.signals", "add {type: picker-queue, target: 1}"),
    (routed(scaled("prefill", "prefiller", minReplicas=0), scaled("decode", "decoder"), layout="disaggregated"),
     "spec.roles[0].autoscaling.minReplicas", "add autoscaling.keepUpWith"),
    (routed(scaled(keepUpWith={"role": "chat", "ratio": 1})),
     "spec.roles[0].autoscaling.keepUpWith.role", "must name another serving role"),
    (routed(scaled(signals=[{"type": "kv-cache", "target": 0}])),
     "spec.roles[0].autoscaling.signals[0].target", "greater than 0"),
    (service(scaled(), router(endpointPicker={"generation": "llm-d-router"},
                              httproute={"rules": [{"timeouts": {"request": "5m"}}]}), layout="role", **MONITORED),
     "spec.roles[1].httproute.rules[0].timeouts.request", "raise it above 1020s"),
    (service(scaled(), router(endpointPicker={"generation": "llm-d-router"}, endpointPickerConfig=verbatim_config()),
             layout="role", **MONITORED),
     "spec.roles[1].endpointPickerConfig", "needs featureGates: [flowControl]"),
    (routed(scaled()) | {"metadata": {"name": "svc"}}, "metadata.namespace", "pins the service's metrics"),
    (service(scaled(), router(endpointPicker={"generation": "llm-d-router"}), layout="role"),
     "spec.roles[0].autoscaling.prometheus", "set spec.monitoring.podMonitor.enabled"),
    (service(role("chat", "worker") | {"replicas": None, "autoscaling": {"maxReplicas": 2}}, layout="role"),
     "spec.roles[0].autoscaling.metrics", "container(s) vllm request none: it would never scale"),
    (service(role("chat", "worker") | {"replicas": None, "autoscaling": {"maxReplicas": 2, "metrics": [
        {"type": "Resource", "resource": {"name": "memory", "target": {"type": "Utilization",
                                                                        "averageUtilization": 80}}}]}},
             layout="role"),
     "spec.roles[0].autoscaling.metrics[0].resource.target.type", "the pods' memory utilization"),
    (service(role("chat", "worker") | {"replicas": None, "autoscaling": {"maxReplicas": 2, "metrics": [
        {"type": "Pods", "pods": {"metric": {"name": "m"}, "target": {"type": "Utilisation"}}}]}}, layout="role"),
     "spec.roles[0].autoscaling.metrics[0].pods.target.type", "must be one of Utilization, Value, AverageValue"),
    (service(role("chat", "worker") | {"replicas": None, "autoscaling": {"maxReplicas": 2, "metrics": [
        {"type": "Pods", "pods": {"metric": {"name": "m"}, "target": {"type": "AverageValue"}}}]}}, layout="role"),
     "spec.roles[0].autoscaling.metrics[0].pods.target.averageValue", "is required with target type AverageValue"),
    (routed(scaled(triggers=[{"type": "cron", "name": "picker-queue", "metadata": {}}])),
     "spec.roles[0].autoscaling.triggers[0].name", "KEDA refuses two triggers of one name"),
    (routed(scaled(fallbackReplicas=5)), "spec.roles[0].autoscaling.fallbackReplicas", "at most maxReplicas (4)"),
    # The behavior, at its own field (not the ScaledObject's, nor the router's index), on either autoscaler.
    (routed(scaled(behavior={"scaleUp": {"stabilisationWindowSeconds": 0}})),
     "spec.roles[0].autoscaling.behavior.scaleUp.stabilisationWindowSeconds", "unknown field"),
    (service(role("chat", "worker") | {"replicas": None, "autoscaling": {
        "maxReplicas": 2, "metrics": WAITING_REQUESTS,
        "behavior": {"scaleDown": {"policies": [{"type": "Pod", "value": 1, "periodSeconds": 60}]}}}}, layout="role"),
     "spec.roles[0].autoscaling.behavior.scaleDown.policies[0].type", "must be one of Pods, Percent"),
    (service(role("chat", "worker") | {"replicas": None, "autoscaling": {
        "maxReplicas": 2, "metrics": WAITING_REQUESTS,
        "behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 3600}]}}}}, layout="role"),
     "spec.roles[0].autoscaling.behavior.scaleUp.policies[0].periodSeconds", "must be 1 to 1800"),
])
def test_what_cannot_scale_is_refused_naming_the_field(spec: dict[str, Any], path: str, words: str) -> None:
    for raw in spec["spec"]["roles"]:
        if raw.get("replicas", 0) is None:
            del raw["replicas"]
        if (raw.get("autoscaling") or {}).get("prometheus", 0) is None:
            del raw["autoscaling"]["prometheus"]
    with pytest.raises(InvalidSpec) as error:
        render(spec)
    assert error.value.path == path
    assert words in str(error.value)


def test_an_autoscaled_role_s_pods_drain_before_they_stop() -> None:
    """An autoscaler removes replicas while they serve: each pod of one (a multi-node replica's workers too)
    keeps serving a while after it leaves the pool; a preStop of the user's own is kept."""
    objects = render(routed(scaled(nodes=2)))
    template = objects["LeaderWorkerSet/svc-chat"]["spec"]["leaderWorkerTemplate"]
    for pod in (template["leaderTemplate"], template["workerTemplate"]):
        assert pod["spec"]["containers"][0]["lifecycle"] == {"preStop": {"sleep": {"seconds": 30}}}
        assert pod["spec"]["terminationGracePeriodSeconds"] == 60
    own = scaled()
    own["template"]["spec"]["containers"][0]["lifecycle"] = {"preStop": {"exec": {"command": ["/drain.sh"]}}}
    own["template"]["spec"]["terminationGracePeriodSeconds"] = 300
    pod = render(routed(own))["LeaderWorkerSet/svc-chat"]["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    assert pod["spec"]["containers"][0]["lifecycle"] == {"preStop": {"exec": {"command": ["/drain.sh"]}}}
    assert pod["spec"]["terminationGracePeriodSeconds"] == 300
    fixed = render(routed(role("chat", "worker")))["LeaderWorkerSet/svc-chat"]["spec"]["leaderWorkerTemplate"]
    assert "lifecycle" not in fixed["workerTemplate"]["spec"]["containers"][0]


@pytest.mark.parametrize(("probe", "seconds"), [
    (None, 600), ({"httpGet": {"path": "/health", "port": 8000}}, 30),
    ({"initialDelaySeconds": 20, "periodSeconds": 5, "failureThreshold": 12}, 80),
    ({"periodSeconds": None, "failureThreshold": 7}, 70), ({"periodSeconds": 10, "failureThreshold": 2**31 - 1}, 86400),
])
def test_the_cold_start_is_the_startup_probe_s_budget(probe: dict[str, Any] | None, seconds: int) -> None:
    chat = scaled(minReplicas=0)
    container = chat["template"]["spec"]["containers"][0]
    container.pop("startupProbe")
    if probe is not None:
        container["startupProbe"] = probe
    objects = render(routed(chat))
    assert picker_config(objects)["flowControl"] == {"defaultRequestTTL": f"{seconds + 120}s"}
    assert objects["ScaledObject/svc-chat"]["spec"]["cooldownPeriod"] == max(300, seconds)


def test_the_stage_alone_scales_each_autoscaled_role_by_what_it_follows() -> None:
    """Without a router in the facts: KEDA on the engines' queue where a Prometheus is named, else a
    HorizontalPodAutoscaler."""
    plain = role("plain", "worker")
    del plain["replicas"]
    plain["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "4"}}
    service_model = alone.model(service(scaled(), {**plain, "autoscaling": {"minReplicas": 1, "maxReplicas": 2}},
                                        role("fixed", "worker"), layout="role", **MONITORED))
    made = alone.objects("autoscaling", alone.facts(service_model))
    assert [(o["kind"], o["metadata"]["name"]) for o in made] == [("ScaledObject", "svc-chat"),
                                                                 ("HorizontalPodAutoscaler", "svc-plain")]
    [trigger] = made[0]["spec"]["triggers"]
    assert trigger["name"] == "engine-queue"
