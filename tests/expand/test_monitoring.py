"""PodMonitors: one per serving role selecting exactly the pods that serve vLLM's metrics (each
replica's leader), one for the picker, valid by the Prometheus Operator's own CRD; refused by field
where the input cannot make one."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fusion_helm import InvalidSpec
from fusion_helm.base import needs
from tests.builders import SCRAPED_FROM_MONITORING, render, role, service
from tests.expand import alone
from tests.helm import VALUES, Helm
from tests.schemas import Validators, custom_resource_errors

ON = {"podMonitor": {"enabled": True}}
ROUTER = {"name": "router", "componentType": "router", "httproute": {"parentRefs": [{"name": "gw"}]}}
WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"


def monitors(objects: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {key.split("/", 1)[1]: obj for key, obj in objects.items() if key.startswith("PodMonitor/")}


def pod_templates(objects: dict[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(leader or worker, pod template) of every LeaderWorkerSet, DisaggregatedSet role and Deployment."""
    found = []
    for obj in objects.values():
        lws_specs = [role_spec["spec"] for role_spec in obj["spec"]["roles"]] \
            if obj["kind"] == "DisaggregatedSet" else [obj["spec"]] if obj["kind"] == "LeaderWorkerSet" else []
        for spec in lws_specs:
            template = spec["leaderWorkerTemplate"]
            found.append(("leader", template.get("leaderTemplate", template["workerTemplate"])))
            if template.get("size", 1) > 1:
                found.append(("worker", template["workerTemplate"]))
        if obj["kind"] == "Deployment":
            found.append(("leader", obj["spec"]["template"]))
    return found


def selects(monitor: dict[str, Any], kind: str, template: dict[str, Any]) -> bool:
    """What LWS labels the pod with beside the template's labels: its worker index (0 for the leader)."""
    labels = {**template["metadata"]["labels"], WORKER_INDEX: "0" if kind == "leader" else "1"}
    return all(labels.get(key) == value for key, value in monitor["spec"]["selector"]["matchLabels"].items())


@pytest.mark.parametrize("layout", ["replica", "role", "disaggregated"])
def test_each_role_s_leaders_and_the_picker_are_scraped_on_their_metrics_ports(layout: str,
                                                                                 validators: Validators) -> None:
    # the role layout serves no router in front of prefill and decode: two monolithic roles there
    kinds = ("worker", "worker") if layout == "role" else ("prefiller", "decoder")
    spec = service(role("prefill", kinds[0], 2, nodes=2, ports=[{"containerPort": 8000, "name": "http"}]),
                   role("decode", kinds[1], 3, ports=[{"containerPort": 8000, "name": "http"}]), ROUTER,
                   layout=layout, **SCRAPED_FROM_MONITORING,
                   monitoring={"podMonitor": {"enabled": True, "interval": "15s", "labels": {"release": "prometheus"}}})
    objects = render(spec)
    found = monitors(objects)
    assert sorted(found) == ["svc-decode", "svc-prefill", "svc-router-epp"]
    assert custom_resource_errors(validators, list(found.values())) == {}
    templates = pod_templates(objects)
    for name, monitor in found.items():
        selected = [(kind, template) for kind, template in templates if selects(monitor, kind, template)]
        role_name = name.removeprefix("svc-").removesuffix("-epp")
        # the leaders of this role only: a multi-node replica's workers run Ray, not vLLM's server
        assert selected and all(kind == "leader" and template["metadata"]["labels"]["fusioninfer.io/role-name"]
                                == role_name for kind, template in selected), name
        [endpoint] = monitor["spec"]["podMetricsEndpoints"]
        # the serving port: the engine's, or on a decoder the prefill/decode sidecar's in front of it
        assert endpoint["port"] in {port.get("name") for _, template in selected
                                    for container in [template["spec"]["containers"][0],
                                                      *template["spec"].get("initContainers", [])]
                                    for port in container.get("ports", [])}
        assert (endpoint["path"], endpoint["interval"]) == ("/metrics", "15s")
        assert monitor["metadata"]["labels"]["release"] == "prometheus"
        assert monitor["metadata"]["namespace"] == "llm"
        assert "fusioninfer.io/role-name" in monitor["spec"]["podTargetLabels"]


@pytest.mark.parametrize(("container", "endpoint"), [
    ({"ports": [{"containerPort": 8000}]}, {"portNumber": 8000}),
    ({"ports": [{"containerPort": 9000, "name": "metrics"}, {"containerPort": 8080, "name": "http"}]},
     {"port": "http"}),
    ({}, {"portNumber": 8000}),
    ({"args": ["--model", "m", "--port", "8100"]}, {"portNumber": 8100}),
], ids=["an unnamed port by number", "the port named http", "vLLM's default", "vLLM's --port"])
def test_the_serving_port_is_scraped(container: dict[str, Any], endpoint: dict[str, Any]) -> None:
    spec = service(role("w", "worker", **container), monitoring=ON, **SCRAPED_FROM_MONITORING)
    [monitor] = monitors(render(spec)).values()
    assert {k: v for k, v in monitor["spec"]["podMetricsEndpoints"][0].items() if k != "path"} == endpoint


def test_the_picker_endpoint_carries_its_authorization(validators: Validators) -> None:
    authorization = {"type": "Bearer", "credentials": {"name": "metrics-reader", "key": "token"}}
    objects = render(service(role("w", "worker"), ROUTER,
                             monitoring={"podMonitor": {"enabled": True, "pickerAuthorization": authorization}},
                             **SCRAPED_FROM_MONITORING))
    found = monitors(objects)
    assert found["svc-router-epp"]["spec"]["podMetricsEndpoints"][0]["authorization"] == authorization
    assert "authorization" not in found["svc-w"]["spec"]["podMetricsEndpoints"][0]
    assert found["svc-router-epp"]["spec"]["podMetricsEndpoints"][0]["port"] == "metrics"
    assert "metrics" in {p["name"] for p in objects["Deployment/svc-router-epp"]["spec"]["template"]["spec"][
        "containers"][0]["ports"]}
    assert custom_resource_errors(validators, list(found.values())) == {}


@pytest.mark.parametrize("monitoring", [None, {}, {"podMonitor": {}}, {"podMonitor": {"enabled": False,
                                                                                      "interval": "1m"}}])
def test_no_monitor_unless_enabled(monitoring: dict[str, Any] | None) -> None:
    spec = service(role("w", "worker"), ROUTER) if monitoring is None else \
        service(role("w", "worker"), ROUTER, monitoring=monitoring)
    assert monitors(render(spec)) == {}


ERRORS = {
    "an interval Prometheus cannot read": (
        {"podMonitor": {"enabled": True, "interval": "30 seconds"}}, [role("w", "worker")],
        "spec.monitoring.podMonitor.interval", "must match"),
    "a label Kubernetes refuses": (
        {"podMonitor": {"enabled": True, "labels": {"release": "a b"}}}, [role("w", "worker")],
        "spec.monitoring.podMonitor.labels.release", "must be a label value"),
    "an authorization of the wrong shape": (
        {"podMonitor": {"enabled": True, "pickerAuthorization": {"credentials": "token"}}},
        [role("w", "worker"), ROUTER], "spec.monitoring.podMonitor.pickerAuthorization.credentials",
        "must be of type object"),
    "a server that is not vLLM and declares no port": (
        ON, [role("w", "worker", command=["python", "-m", "server"])],
        "spec.roles[0].template.spec.containers[0].ports",
        "is required with spec.monitoring.podMonitor when the container runs neither vllm nor sglang"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_monitoring_errors_name_the_field(case: str) -> None:
    monitoring, roles, path, message = ERRORS[case]
    with pytest.raises(InvalidSpec) as raised:
        render(service(*copy.deepcopy(roles), monitoring=monitoring, **SCRAPED_FROM_MONITORING))
    assert (raised.value.where, raised.value.path) == ("InferenceService svc", path)
    assert message in raised.value.message


def test_the_chart_passes_monitoring_through_and_its_check_asks_for_the_api(helm: Helm, tmp_path: Path) -> None:
    values = yaml.safe_load((VALUES / "router-pd-qwen3-8b.yaml").read_text())
    values["monitoring"] = {"podMonitor": {"enabled": True, "labels": {"release": "prometheus"}}}
    values.update(SCRAPED_FROM_MONITORING)
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    out = [doc for doc in yaml.safe_load_all(helm.template(path, hooks=True).stdout) if doc]
    assert sorted(o["metadata"]["name"] for o in out if o["kind"] == "PodMonitor") == [
        "qwen-pd-decode", "qwen-pd-prefill", "qwen-pd-router-epp"]
    [hooks] = [o for o in out if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-hooks")]
    assert needs.monitoring_apis(json.loads(hooks["data"]["spec.json"])) == ("monitoring.coreos.com/v1/podmonitors",)


def test_the_stage_alone_writes_a_monitor_per_serving_role() -> None:
    service_model = alone.model(service(role("a", "worker"), role("b", "worker"),
                                        monitoring={"podMonitor": {"enabled": True}}, **SCRAPED_FROM_MONITORING))
    made = alone.objects("monitoring", alone.facts(service_model))
    assert [o["metadata"]["name"] for o in made] == ["svc-a", "svc-b"]
