"""The pre-install check (fusion_helm/programs/check.py) in process, on a fake API server that serves what a
test says: each refusal says what is missing and what to do, by the rules the post-renderer decides by;
a cluster that has everything passes; what the Job prints and exits with. (The Job itself runs on the
control plane in tests/controlplane/test_cluster_lifecycle.py and tests/controlplane/test_cluster_production.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fusion_helm.base.kinds import (
    CERTIFICATE,
    DISAGGREGATED_SET,
    GATEWAY,
    HTTP_ROUTE,
    HYPER_NODE,
    LEADER_WORKER_SET,
    POD_GROUP,
    POD_MONITOR,
    ROLE_SCALER,
    SCALED_OBJECT,
    TRIGGER_AUTHENTICATION,
    Kind,
)
from fusion_helm.programs import check
from fusion_helm.programs.kube import ApiError, Kube

WORKER = {"name": "w", "componentType": "worker", "replicas": 2}
PD = [{"name": "p", "componentType": "prefiller"}, {"name": "d", "componentType": "decoder"}]
ROUTER = {"name": "router", "componentType": "router", "gateway": {"gatewayClassName": "istio"}}
EVERY_KIND = (LEADER_WORKER_SET, POD_GROUP, DISAGGREGATED_SET, ROLE_SCALER, POD_MONITOR, CERTIFICATE, SCALED_OBJECT,
              TRIGGER_AUTHENTICATION, HYPER_NODE, HTTP_ROUTE, GATEWAY,
              Kind("inference.networking.k8s.io", "v1", "InferencePool", "inferencepools"),
              Kind("inference.networking.x-k8s.io", "v1alpha2", "InferenceObjective", "inferenceobjectives"))


class FakeApi(Kube):
    """An API server that serves KINDS' resources in discovery and answers OBJECTS by path; 404 for the rest,
    403 for the paths in FORBIDDEN."""

    def __init__(self, kinds: tuple[Kind, ...] = EVERY_KIND, objects: dict[str, Any] | None = None,
                 forbidden: tuple[str, ...] = ()) -> None:
        self.objects: dict[str, Any] = {}
        for kind in kinds:
            self.objects.setdefault(f"/apis/{kind.api_version}", {"resources": []})["resources"].append(
                {"name": kind.plural})
        self.objects |= objects or {}
        self.forbidden = forbidden

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        if path in self.forbidden:
            raise ApiError(method, path, 403, "forbidden")
        if path not in self.objects:
            raise ApiError(method, path, 404, "not found")
        return self.objects[path]


def without(*gone: Kind) -> tuple[Kind, ...]:
    return tuple(kind for kind in EVERY_KIND if kind not in gone)


def refused(api: FakeApi, spec: dict[str, Any], **given: Any) -> list[str]:
    return check.problems(api, spec, given.get("crd_fields"), given.get("lws_config"), given.get("namespace"))


def test_a_cluster_that_has_everything_passes() -> None:
    spec = {"roles": [*PD, ROUTER], "layout": "disaggregated", "monitoring": {"podMonitor": {"enabled": True}},
            "tls": {"certManager": {"issuerRef": {"name": "ca"}}}}
    assert refused(FakeApi(), spec, lws_config="lws-system/lws-manager-config") == []


@pytest.mark.parametrize(("spec", "kinds", "said"), [
    ({"roles": [WORKER]}, without(LEADER_WORKER_SET),
     "the LeaderWorkerSet API (leaderworkerset.x-k8s.io/v1) is not served: install LWS (https://lws.sigs.k8s.io) "
     "first"),
    ({"roles": PD}, without(POD_GROUP),
     "the Volcano PodGroup API (scheduling.volcano.sh/v1beta1) is not served, and the service is gang-scheduled: "
     "install Volcano v1.14 or later, or set gangSchedule.enable=false"),
    ({"roles": [WORKER, ROUTER]}, without(HTTP_ROUTE),
     "httproutes (gateway.networking.k8s.io/v1) is not served, and the service's router needs it"),
    ({"roles": [WORKER, ROUTER]}, without(GATEWAY), "gateways (gateway.networking.k8s.io/v1) is not served"),
    ({"roles": PD, "layout": "disaggregated"}, without(DISAGGREGATED_SET),
     "disaggregatedsets (disaggregatedset.x-k8s.io/v1) is not served, and the service's layout disaggregated "
     "needs it"),
    ({"roles": [WORKER], "monitoring": {"podMonitor": {"enabled": True}}}, without(POD_MONITOR),
     "podmonitors (monitoring.coreos.com/v1) is not served, and the service asks for PodMonitors"),
    ({"roles": [WORKER], "tls": {"certManager": {"issuerRef": {"name": "ca"}}}}, without(CERTIFICATE),
     "certificates (cert-manager.io/v1) is not served, and spec.tls.certManager has a Certificate write"),
    ({"roles": [{**WORKER, "autoscaling": {"maxReplicas": 4, "prometheus": {"serverAddress": "http://p:9090",
                                                                            "credentials": {"secretName": "s"}}}}]},
     without(TRIGGER_AUTHENTICATION), "triggerauthentications (keda.sh/v1alpha1) is not served, and "
     "roles[].autoscaling has KEDA scale a role"),
    ({"roles": PD, "schedulingStrategy": {"queue": "gold"}}, EVERY_KIND,
     "queue gold does not exist (a Volcano Queue, scheduling.volcano.sh/v1beta1)"),
    ({"roles": [WORKER], "schedulingStrategy": {"priorityClassName": "high"}}, EVERY_KIND,
     "PriorityClass high does not exist: Kubernetes refuses every serving pod that names it"),
    ({"roles": [{**WORKER, "multinode": {"nodeCount": 2}, "networkTopology": {"highestTierName": "rack"}}]},
     without(HYPER_NODE), "hypernodes (topology.volcano.sh/v1alpha1) is not served, and the service's "
     "networkTopology needs them"),
])
def test_each_missing_prerequisite_is_refused_in_a_sentence_that_says_what_to_do(
        spec: dict[str, Any], kinds: tuple[Kind, ...], said: str) -> None:
    missing = refused(FakeApi(kinds), spec)
    assert len(missing) == 1 and missing[0].startswith(said), missing


def test_a_queue_must_be_open_and_a_tier_one_the_hyper_nodes_have() -> None:
    spec = {"roles": [{**WORKER, "multinode": {"nodeCount": 2}, "networkTopology": {"highestTierName": "rack"}}],
            "gangSchedule": {"serviceNetworkTopology": {"highestTierAllowed": 1}}, "schedulingStrategy": {
                "queue": "gold"}}
    api = FakeApi(objects={"/apis/scheduling.volcano.sh/v1beta1/queues/gold": {"status": {"state": "Closed"}},
                           HYPER_NODE.path(): {"items": [{"spec": {"tier": 2, "tierName": "zone"}}]}})
    assert refused(api, spec) == [
        "queue gold is Closed, not Open: Volcano schedules no PodGroup of it; open it, or set "
        "schedulingStrategy.queue to an Open queue",
        "no HyperNode has tier 1 or lower: Volcano would read highestTierAllowed 1 as the whole cluster; describe "
        "the cluster's network with HyperNodes (docs/gang-scheduling.md)",
        "no HyperNode has tierName rack (tier names: zone): Volcano would place the pods with no bound at all; fix "
        "highestTierName"]


LWS_CONFIG = "/api/v1/namespaces/lws-system/configmaps/lws-manager-config"


def test_lws_s_own_gang_scheduling_is_refused_and_an_unreadable_configuration_is_passed_over(
        capsys: pytest.CaptureFixture[str]) -> None:
    spec = {"roles": PD}
    on = FakeApi(objects={LWS_CONFIG: {"data": {"controller_manager_config.yaml": (
        "apiVersion: config.lws.x-k8s.io/v1alpha1\n# gangSchedulingManagement: {}\ngangSchedulingManagement: {}\n")}}})
    [message] = refused(on, spec, lws_config="lws-system/lws-manager-config")
    assert message.startswith("LWS gang scheduling management is on (lws-system/lws-manager-config, "
                              "controller_manager_config.yaml: gangSchedulingManagement)"), message
    commented = FakeApi(objects={LWS_CONFIG: {"data": {"c.yaml": "# gangSchedulingManagement: {}\n"}}})
    assert refused(commented, spec, lws_config="lws-system/lws-manager-config") == []
    assert refused(FakeApi(forbidden=(LWS_CONFIG,)), spec, lws_config="lws-system/lws-manager-config") == []
    assert "lws-system/lws-manager-config not readable (403); LWS gang scheduling not checked" in \
        capsys.readouterr().out


OPENAPI = "/openapi/v3/apis/fusioninfer.io/v1alpha1"


def served_schema(properties: dict[str, Any]) -> dict[str, Any]:
    return {"components": {"schemas": {"io.fusioninfer.v1alpha1.InferenceService": {"properties": properties}}}}


@pytest.mark.parametrize(("objects", "said"), [
    ({}, "the InferenceService API (fusioninfer.io/v1alpha1) is not served: install its CRD: helm upgrade --install "
         "fusioninfer-crds"),
    ({"/apis/fusioninfer.io/v1alpha1": {"resources": [{"name": "inferenceservices"}]}},
     "the InferenceService API (fusioninfer.io/v1alpha1) is served but its schema was not published within 0 s"),
    ({"/apis/fusioninfer.io/v1alpha1": {"resources": [{"name": "inferenceservices"}]},
      OPENAPI: served_schema({"spec": {"properties": {"roles": {"items": {"properties": {}}}}}})},
     "the served InferenceService CRD is older than this chart's: it lacks spec.layout, spec.roles[].name, which "
     "the API server would drop from the service; upgrade it: helm upgrade --install fusioninfer-crds"),
    ({"/apis/fusioninfer.io/v1alpha1": {"resources": [{"name": "inferenceservices"}]},
      OPENAPI: served_schema({"spec": {"properties": {"layout": {}, "roles": {"items": {"properties": {
          "name": {}}}}}}})}, None),
])
def test_the_served_crd_must_have_every_field_of_the_chart_s(objects: dict[str, Any], said: str | None,
                                                             tmp_path: Path) -> None:
    fields = tmp_path / "crd-fields.json"
    fields.write_text(json.dumps({"version": "v1alpha1", "schema": {"properties": {"spec": {"properties": {
        "layout": {}, "roles": {"items": {"properties": {"name": {}}}}}}}}}))
    problem = check.crd_problem(FakeApi(objects=objects), str(fields), settle=0)
    assert problem == said if said is None else problem is not None and problem.startswith(said), problem


def test_the_job_prints_each_refusal_and_exits_1_or_says_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"roles": PD, "schedulingStrategy": {"priorityClassName": "high"}}))
    monkeypatch.setattr(check, "Kube", lambda: FakeApi(without(POD_GROUP)))
    assert check.main(["--spec", str(spec)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == ["check_prerequisites"] * 2
    assert "Volcano PodGroup API" in lines[0] and "PriorityClass high" in lines[1]
    monkeypatch.setattr(check, "Kube", lambda: FakeApi(objects={"/apis/scheduling.k8s.io/v1/priorityclasses/high": {}}))
    assert check.main(["--spec", str(spec)]) == 0
    assert capsys.readouterr().out == "prerequisites: ok\n"
    spec.write_text("{not json")
    assert check.main(["--spec", str(spec)]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("check_prerequisites: Expecting property name"), line
