"""The network stage alone: a NetworkPolicy for every pod a service runs, each admitting exactly the connections
the service needs; a multi-node role's replica groups each closed to every other pod; egress restricted on
request; refused by field where the input cannot make one. What these policies let through, and what not, a
real enforcer decides on the control plane (tests/controlplane/test_cluster_network_policies.py)."""

from __future__ import annotations

from typing import Any

import pytest

from fusion_helm import InvalidSpec
from tests.builders import render, role, service
from tests.expand import alone
from tests.support import router

NAMESPACE = "kubernetes.io/metadata.name"
PORTS = [{"containerPort": 8000, "name": "http"}]
SERVICE = {"fusioninfer.io/service": "svc"}


def policies(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The stage's policies alone, by name."""
    model = alone.model(spec)
    made = alone.objects("network", alone.facts(model, routing=alone.routing(model)))
    return {obj["metadata"]["name"]: obj["spec"] for obj in made}


def sources(policy: dict[str, Any]) -> list[tuple[list[dict[str, Any]], list[int] | None]]:
    return [(rule["from"], [port["port"] for port in rule["ports"]] if "ports" in rule else None)
            for rule in policy["ingress"]]


def pods(**labels: str) -> dict[str, Any]:
    return {"podSelector": {"matchLabels": {**SERVICE, **labels}}}


PICKER = pods(**{"fusioninfer.io/component-type": "router", "fusioninfer.io/role-name": "router"})


def test_a_routed_role_admits_the_gateway_and_its_picker_and_the_picker_the_gateway() -> None:
    found = policies(service(role("w", "worker", ports=PORTS), router()))
    assert sorted(found) == ["svc-router-epp", "svc-w"]
    serving = found["svc-w"]
    assert serving["podSelector"] == pods(**{"fusioninfer.io/component-type": "worker",
                                             "fusioninfer.io/role-name": "w"})["podSelector"]
    assert serving["policyTypes"] == ["Ingress"]  # egress is not restricted unless asked
    own_namespace = {"podSelector": {}}  # the Gateway's: the service's own
    assert sources(serving) == [([own_namespace, PICKER], [8000])]
    assert sources(found["svc-router-epp"]) == [([own_namespace], [9002])]  # nothing scrapes it


def test_a_shared_gateway_s_namespace_is_the_gateway_s_and_the_gateway_can_be_named() -> None:
    shared = {"name": "router", "componentType": "router", "sharedGateway": {"name": "gw", "namespace": "gateways"}}
    found = policies(service(role("w", "worker", ports=PORTS), shared))
    gateways = {"namespaceSelector": {"matchLabels": {NAMESPACE: "gateways"}}}
    assert sources(found["svc-w"]) == [([gateways, PICKER], [8000])]
    named = {"namespaceLabels": {NAMESPACE: "envoy-gateway-system"}, "podLabels": {"app": "envoy"}}
    found = policies(service(role("w", "worker", ports=PORTS), shared, networkPolicy={"gateway": named}))
    assert sources(found["svc-w"])[0][0][0] == {"namespaceSelector": {"matchLabels": named["namespaceLabels"]},
                                                "podSelector": {"matchLabels": named["podLabels"]}}


def test_each_replica_group_reaches_its_own_pods_on_every_port_and_no_other_pod_does() -> None:
    found = policies(service(role("r", "worker", replicas=2, nodes=2, ports=PORTS), layout="role"))
    group_label = "leaderworkerset.sigs.k8s.io/group-index"
    role_labels = {"fusioninfer.io/component-type": "worker", "fusioninfer.io/role-name": "r"}
    # one per group the LeaderWorkerSet can have
    assert sorted(name for name in found if "-group-" in name) == ["svc-r-group-0", "svc-r-group-1"]
    group = found["svc-r-group-1"]
    assert group["podSelector"] == pods(**role_labels, **{group_label: "1"})["podSelector"]
    assert sources(group) == [([pods(**role_labels, **{group_label: "1"})], None)]
    # without a router, the clients (the service's namespace by default) reach the serving port alone
    assert sources(found["svc-r"]) == [([{"podSelector": {}}], [8000])]


def test_prefill_and_decode_reach_each_other_and_nothing_else_of_theirs() -> None:
    found = policies(service(role("p", "prefiller", ports=PORTS), role("d", "decoder", ports=PORTS), router()))
    decoders, prefillers = (pods(**{"fusioninfer.io/component-type": kind}) for kind in ("decoder", "prefiller"))
    assert sources(found["svc-p"])[1:] == [([decoders], None)]
    assert sources(found["svc-d"])[1:] == [([prefillers], None)]


def test_prometheus_is_admitted_from_where_the_autoscaler_queries_it_else_where_named() -> None:
    scaled = role("w", "worker", ports=PORTS)
    del scaled["replicas"]
    scaled["autoscaling"] = {"minReplicas": 1, "maxReplicas": 2,
                             "prometheus": {"serverAddress": "http://prometheus.monitoring.svc:9090"}}
    found = policies(service(scaled, router(), layout="role", monitoring={"podMonitor": {"enabled": True}}))
    monitoring = {"namespaceSelector": {"matchLabels": {NAMESPACE: "monitoring"}}}
    assert sources(found["svc-w"])[-1] == ([monitoring], [8000])
    assert sources(found["svc-router-epp"])[-1] == ([monitoring], [9090])
    with pytest.raises(InvalidSpec) as refused:
        render(service(role("w", "worker", ports=PORTS), monitoring={"podMonitor": {"enabled": True}}))
    assert refused.value.path == "spec.networkPolicy.prometheus"
    assert "is required with spec.monitoring.podMonitor" in refused.value.message


def test_the_frontend_reaches_the_serving_pods_and_the_clients_the_frontend() -> None:
    container = {"name": "router", "image": "lmsysorg/sgl-model-gateway:v0.2.1"}
    frontend = {"name": "lb", "componentType": "frontend", "frontend": {"kind": "sglang-router"},
                "template": {"spec": {"containers": [container]}}}
    found = policies(service(role("w", "worker", ports=PORTS), frontend))
    frontends = pods(**{"fusioninfer.io/component-type": "frontend"})
    assert ([frontends], [8000]) in sources(found["svc-w"])
    assert sources(found["svc-lb"]) == [([{"podSelector": {}}], [30000])]  # SGLang router's port


def test_restricted_egress_is_the_dns_what_each_pod_needs_and_what_the_user_adds() -> None:
    hub = {"cidr": "192.0.2.0/24", "ports": [443]}
    restricted = {"egress": {"restrict": True, "apiServer": ["198.51.100.1/32"], "to": [hub]}}
    found = policies(service(role("p", "prefiller", ports=PORTS), role("d", "decoder", ports=PORTS), router(),
                             networkPolicy=restricted))
    dns, api_server = found["svc-p"]["egress"][0], {"to": [{"ipBlock": {"cidr": "198.51.100.1/32"}}]}
    hub_rule = {"to": [{"ipBlock": {"cidr": "192.0.2.0/24"}}], "ports": [{"port": 443, "protocol": "TCP"}]}
    assert dns["ports"] == [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]
    decoders = pods(**{"fusioninfer.io/component-type": "decoder"})
    assert found["svc-p"]["egress"] == [dns, {"to": [decoders]}, hub_rule]
    assert api_server in found["svc-d"]["egress"]  # the sidecar reads its pool
    assert found["svc-router-epp"]["egress"] == [
        dns, {"to": [{"podSelector": {"matchLabels": SERVICE}}], "ports": [{"port": 8000, "protocol": "TCP"}]},
        api_server, hub_rule]
    assert all(policy["policyTypes"] == ["Ingress", "Egress"] for policy in found.values())


def test_policies_off_make_none_and_a_role_that_runs_no_pod_has_none() -> None:
    assert policies(service(role("w", "worker", ports=PORTS), router(), networkPolicy={"enabled": False})) == {}
    found = policies(service(role("w", "worker", ports=PORTS), role("idle", "worker", replicas=0, ports=PORTS)))
    assert sorted(found) == ["svc-w"]


def test_the_users_sources_are_admitted_to_every_serving_pod() -> None:
    added = [{"namespaceLabels": {NAMESPACE: "batch"}, "ports": [8000]}, {"cidr": "203.0.113.0/24"}]
    found = policies(service(role("w", "worker", ports=PORTS), router(), networkPolicy={"ingress": added}))
    assert sources(found["svc-w"])[1:] == [
        ([{"namespaceSelector": {"matchLabels": {NAMESPACE: "batch"}}}], [8000]),
        ([{"ipBlock": {"cidr": "203.0.113.0/24"}}], None)]


@pytest.mark.parametrize(("given", "path", "message"), [
    ({"ingress": [{"cidr": "192.0.2.1/24"}]}, "spec.networkPolicy.ingress[0].cidr", "must be a CIDR"),
    ({"ingress": [{"cidr": "192.0.2.0/24", "podLabels": {"a": "b"}}]}, "spec.networkPolicy.ingress[0].cidr",
     "give one or the other"),
    ({"ingress": [{"ports": [8000]}]}, "spec.networkPolicy.ingress[0]", "names no source or destination"),
    ({"gateway": {"podLabels": {"bad key!": "x"}}}, "spec.networkPolicy.gateway.podLabels",
     "is not a valid label or annotation key"),
    ({"egress": {"restrict": True}}, "spec.networkPolicy.egress.apiServer", "the endpoint picker calls the API server"),
    ({"egress": {"restrict": True, "apiServer": ["api"]}}, "spec.networkPolicy.egress.apiServer[0]",
     "must be a CIDR"),
])
def test_what_cannot_be_a_policy_is_refused_by_field(given: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(InvalidSpec) as refused:
        render(service(role("w", "worker", ports=PORTS), router(), networkPolicy=given))
    assert (refused.value.path, message in refused.value.message) == (path, True), refused.value.message
