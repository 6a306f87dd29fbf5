"""Services clients call serving pods through without a Gateway (roles[].service, spec.service): what they
select (the pods the pool would), their ports (the template's, the role's serving port first), their
names (never another Service's of the release), and what is refused by field. (The control plane shows
them selecting exactly the serving pods: tests/controlplane/test_cluster_services.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from fusion_helm.errors import InvalidSpec
from tests.builders import render, role, service
from tests.expand import alone
from tests.support import router

PORTS = [{"containerPort": 8000, "name": "http"}, {"containerPort": 9400, "name": "metrics"},
         {"containerPort": 5557}]


def served(*roles: dict[str, Any], **spec: Any) -> dict[str, dict[str, Any]]:
    return render(service(*roles, **spec))


def exposed(spec: dict[str, Any], **wanted: Any) -> dict[str, Any]:
    """A role (tests.builders.role) with a Service of WANTED."""
    return {**spec, "service": wanted}


def test_a_role_s_service_selects_its_leaders_on_the_template_s_ports() -> None:
    worker = exposed(role("w", "worker", replicas=3, nodes=2, image="vllm/vllm-openai:v0.32.0", ports=PORTS),
                     type="LoadBalancer", annotations={"lb.example/internal": "true"})
    made = served(worker)["Service/svc-w-serving"]
    assert made["metadata"]["labels"] == {"team": "a", "fusioninfer.io/service": "svc",
                                          "fusioninfer.io/component-type": "worker", "fusioninfer.io/role-name": "w"}
    assert made["metadata"]["annotations"] == {"lb.example/internal": "true"}
    assert made["spec"] == {
        "type": "LoadBalancer",
        "selector": {"fusioninfer.io/service": "svc", "fusioninfer.io/role-name": "w",
                     "leaderworkerset.sigs.k8s.io/worker-index": "0"},
        # The serving port first, then every other port declared by name (one without a name cannot be
        # one of several in a Service; the bootstrap's rendezvous port is not the clients').
        "ports": [{"name": "http", "port": 8000, "targetPort": 8000, "protocol": "TCP"},
                  {"name": "metrics", "port": 9400, "targetPort": 9400, "protocol": "TCP"}]}


def test_where_every_node_serves_every_pod_is_selected() -> None:
    dp = exposed(role("dp", "worker", nodes=2, image="vllm/vllm-openai:v0.32.0"), headless=True)
    dp["multinode"].update(bootstrap="vllm-data-parallel", dataParallel={"ranksPerNode": 8,
                                                                         "hybridLoadBalancing": True})
    made = served(dp)["Service/svc-dp-serving"]
    assert made["spec"]["clusterIP"] == "None" and "type" not in made["spec"]
    assert made["spec"]["selector"]["fusioninfer.io/serves"] == "true"
    assert made["spec"]["ports"] == [{"name": "http", "port": 8000, "targetPort": 8000, "protocol": "TCP"}]


def test_the_service_s_service_selects_every_serving_role_and_no_picker() -> None:
    objects = served(role("a", "worker", ports=PORTS[:1]), role("b", "worker", ports=PORTS[:1]), router(),
                     service={"type": "NodePort"})
    made = objects["Service/svc-serving"]
    assert made["spec"]["selector"] == {"fusioninfer.io/service": "svc",
                                        "leaderworkerset.sigs.k8s.io/worker-index": "0"}
    assert made["spec"]["type"] == "NodePort"
    picker = objects["Deployment/svc-router-epp"]["spec"]["template"]["metadata"]["labels"]
    assert not made["spec"]["selector"].items() <= picker.items()


def test_a_decoder_behind_the_sidecar_is_reached_at_the_sidecar() -> None:
    """The sidecar takes the engine's port and name: the Service's port is where the pool routes."""
    objects = served(role("p", "prefiller", ports=PORTS[:1]),
                     exposed(role("d", "decoder", ports=PORTS[:1])), router())
    assert objects["Service/svc-d-serving"]["spec"]["ports"] == [
        {"name": "http", "port": 8000, "targetPort": 8000, "protocol": "TCP"}]
    sidecar = objects["LeaderWorkerSet/svc-d-0"]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"][
        "initContainers"][0]
    assert sidecar["ports"][0]["containerPort"] == 8000


@pytest.mark.parametrize(("roles", "spec", "path", "message"), [
    ([role("a", "worker", ports=[{"containerPort": 8000}]), role("b", "worker", ports=[{"containerPort": 9000}])],
     {"service": {}}, "spec.service",
     "is required: the serving roles listen on different ports (a: 8000, b: 9000) and the service's one Service"),
    ([exposed(role("a", "worker"), type="NodePort", headless=True)], {}, "spec.roles[0].service.headless",
     "only applies to type ClusterIP"),
    ([exposed(role("a", "worker", ports=[{"containerPort": 8000, "name": "http"},
                                         {"containerPort": 9000, "name": "Metrics_Port"}]))], {},
     "spec.roles[0].template.spec.containers[0].ports[1].name", "must be a DNS label to name a Service port"),
    ([exposed(role("a", "worker")), role("a-serving", "worker")], {"layout": "role"}, "spec.roles[0].service",
     "role 'a''s Service 'svc-a-serving' is also the name of the headless Service of role 'a-serving''s "
     "LeaderWorkerSet"),
    ([exposed(role("a", "worker"))], {"layout": "role"}, None, None),
    ([exposed(role("a", "worker"), name="leader"), exposed(role("b", "worker"), name="leader")], {},
     "spec.roles[1].service.name", "role 'b''s Service 'leader' is also the name of role 'a''s Service"),
    ([exposed(role("a", "worker"), name="svc-router-epp"), router()], {}, "spec.roles[0].service.name",
     "role 'a''s Service 'svc-router-epp' is also the name of the endpoint picker's Service"),
])
def test_service_mistakes_are_refused_by_field(roles: list[dict[str, Any]], spec: dict[str, Any], path: str | None,
                                               message: str | None) -> None:
    if path is None:
        assert "Service/svc-a-serving" in served(*roles, **spec)
        return
    with pytest.raises(InvalidSpec) as error:
        served(*roles, **spec)
    assert error.value.path == path
    assert message is not None and message in str(error.value)


def test_a_service_takes_the_name_its_clients_call() -> None:
    """Upstream's multi-node manifests expose the leader as vllm-leader: clients keep calling it."""
    objects = served(exposed(role("w", "worker", nodes=2, image="vllm/vllm-openai:v0.32.0"), name="vllm-leader"),
                     service={"name": "llm"}, tls={"certManager": {"issuerRef": {"name": "ca"}}})
    assert objects["Service/vllm-leader"]["spec"]["selector"]["fusioninfer.io/role-name"] == "w"
    assert "Service/llm" in objects and "Service/svc-w-serving" not in objects
    assert {"vllm-leader", "llm"} <= set(objects["Certificate/svc-serving-tls"]["spec"]["dnsNames"])


def test_a_router_has_no_service_of_its_own() -> None:
    with pytest.raises(InvalidSpec) as error:
        served(role("a", "worker"), router(service={}))
    assert error.value.path == "spec.roles[1].service"
    assert "clients reach it through its Gateway" in str(error.value)


def test_the_stage_alone_writes_a_role_s_service_then_the_service_s() -> None:
    service_model = alone.model(service({**role("a", "worker"), "service": {}}, role("b", "worker"), service={}))
    made = alone.objects("services", alone.facts(service_model))
    assert [o["metadata"]["name"] for o in made] == ["svc-a-serving", "svc-serving"]
    assert made[0]["spec"]["selector"] == {"fusioninfer.io/service": "svc", "fusioninfer.io/role-name": "a",
                                           "leaderworkerset.sigs.k8s.io/worker-index": "0"}
