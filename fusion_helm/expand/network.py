"""The NetworkPolicies of a service's pods: each admits exactly the connections the service needs and, with
``egress.restrict``, makes exactly those it needs (docs/security.md states them as a table).

Every pod the service runs is selected by one policy of its own kind — a serving role's, the picker's, a
frontend's, the fetch Jobs' — and a multi-node role's replica groups each by one more, that admits the
group's own pods to every port (Ray's, torch's and SGLang's rendezvous, NCCL's), so that no other group nor
service reaches a bootstrap port. Policies add up: a pod admits what any policy selecting it admits.
"""

from __future__ import annotations

from collections.abc import Mapping

from fusion_helm.base.kinds import NETWORK_POLICY
from fusion_helm.base.labels import LABEL_COMPONENT_TYPE, LABEL_FETCHES_FOR, LABEL_SERVICE
from fusion_helm.errors import InvalidSpec
from fusion_helm.expand.labelling import object_metadata, replica_index_label, role_labels
from fusion_helm.expand.names import (
    fetch_policy_name,
    frontend_name,
    group_policy_name,
    most_groups,
    picker_name,
    role_policy_name,
)
from fusion_helm.expand.router.ports import EVENTS_PORT, PICKER_GRPC_PORT, REPLAY_PORT
from fusion_helm.expand.router.ports import METRICS_PORT as PICKER_METRICS_PORT
from fusion_helm.expand.serving_port import ADMITTED, FRONTED, SCRAPED, serving_port
from fusion_helm.model import ComponentType, InferenceService, Role
from fusion_helm.model.network import PATH, Egress, Endpoint, NetworkPolicies, Peer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fusion_helm.expand.generations import Routing
    from fusion_helm.model import Router
    from fusion_helm.model.exposure import Frontend

    Rule = dict[str, Any]

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""The label the API server puts on every namespace: its name."""
DNS = {"to": [{"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: "kube-system"}},
               "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
       "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]}
"""The cluster's DNS, as kubeadm and most distributions label it: a multi-node replica finds its leader by name."""
PEERS = {ComponentType.PREFILLER: ComponentType.DECODER, ComponentType.DECODER: ComponentType.PREFILLER}


def network_policies(service: InferenceService, routing: Routing | None, fetching: bool) -> list[dict[str, Any]]:
    """SERVICE's policies; FETCHING: it runs fetch Jobs."""
    policies = service.network_policies
    objects = []
    if policies is not None:
        prometheus = _prometheus(service, policies)
        for role in service.roles:
            groups = most_groups(service, role)
            if groups == 0:
                continue  # a role that runs no pod, and cannot scale to one
            objects.append(_serving_policy(service, policies, role, routing, prometheus))
            if role.spans_nodes:
                objects += [_group_policy(service, policies, role, index) for index in range(groups)]
        objects += [_frontend_policy(service, policies, frontend) for frontend in service.frontends]
        if fetching:
            objects.append(_policy(service, fetch_policy_name(service.name), {LABEL_FETCHES_FOR: service.name},
                                   [], _egress(policies.egress, [])))
    if routing is not None and (policies is not None or routing.router.picker_network_policy):
        objects.append(_picker_policy(service, policies, routing))
    return objects


def _serving_policy(service: InferenceService, policies: NetworkPolicies, role: Role, routing: Routing | None,
                    prometheus: list[Rule]) -> dict[str, Any]:
    """Who reaches a serving role's pods: the Gateway and the picker its routed port, the clients its
    Services', the frontends and Prometheus the ports they call, the prefill/decode peers every port (the
    sidecar's requests and the KV connector's transfers, whose ports the connector picks); and what the
    user adds."""
    ingress: list[Rule] = []
    if routing is not None:
        ingress.append(_rule([_gateway(service, policies, routing.router), _pods(role_labels(service, routing.router))],
                             routing.port))
        if routing.precise is not None:
            ingress.append({"from": [_pods(role_labels(service, routing.router))], "ports": _kv_event_ports()})
    if routing is None or service.service is not None or role.service is not None:
        ingress.append(_rule([_clients(service, policies)], _known_port(service, role)))
    if service.frontends:
        ingress.append(_rule([_pods({LABEL_SERVICE: service.name, LABEL_COMPONENT_TYPE: "frontend"})],
                             serving_port(service, role, FRONTED).number))
    if service.monitoring is not None:
        ingress.append({"from": prometheus, "ports": _ports(serving_port(service, role, SCRAPED).number)})
    peer = _peer_role(service, role)
    if peer is not None:
        ingress.append({"from": [peer]})
    ingress += [_endpoint_rule("from", endpoint) for endpoint in policies.ingress]
    egress = [{"to": [peer]}] if peer is not None else []
    if role.component_type is ComponentType.DECODER and routing is not None:
        egress += _api_server(service, policies, f"the prefill/decode sidecar of {role.name}'s pods")
    return _policy(service, role_policy_name(service.name, role.name), role_labels(service, role), ingress,
                   _egress(policies.egress, egress))


def _group_policy(service: InferenceService, policies: NetworkPolicies, role: Role, index: int) -> dict[str, Any]:
    """A replica group's own pods reach each other on every port, and no other pod does by this policy."""
    group = {**role_labels(service, role), replica_index_label(service): str(index)}
    return _policy(service, group_policy_name(service.name, role.name, index), group, [{"from": [_pods(group)]}],
                   _egress(policies.egress, [{"to": [_pods(group)]}]))


def _frontend_policy(service: InferenceService, policies: NetworkPolicies, frontend: Frontend) -> dict[str, Any]:
    from fusion_helm.expand.frontends import frontend_port

    ports = {serving_port(service, role, FRONTED).number for role in service.roles}
    serving = _pods({LABEL_SERVICE: service.name})
    egress = [{"to": [serving], "ports": [{"port": port, "protocol": "TCP"} for port in sorted(ports)]},
              *_api_server(service, policies, f"the frontend {frontend.name}")]
    return _policy(service, frontend_name(service.name, frontend.name), role_labels(service, frontend),
                   [_rule([_clients(service, policies)], frontend_port(service, frontend))],
                   _egress(policies.egress, egress))


def _picker_policy(service: InferenceService, policies: NetworkPolicies | None, routing: Routing) -> dict[str, Any]:
    """The Gateway reaches the picker's ext-proc port, Prometheus its metrics port (nothing does without
    one); its health port is the kubelet's, which policies do not stop. The router's own
    ``endpointPicker.networkPolicy``, where given, names both."""
    router = routing.router
    own = router.picker_network_policy
    if own is not None:
        gateway, scrapers = [_selected(own["gateway"])], ([_selected(own["scrapers"])] if "scrapers" in own else [])
    else:
        assert policies is not None
        gateway, scrapers = [_gateway(service, policies, router)], _prometheus(service, policies)
    ingress = [_rule(gateway, PICKER_GRPC_PORT), *([{"from": scrapers, "ports": _ports(PICKER_METRICS_PORT)}]
                                                   if scrapers else [])]
    egress = []
    if policies is not None and policies.egress is not None:
        serving = _pods({LABEL_SERVICE: service.name})
        egress = [_rule_to([serving], routing.port),
                  *([{"to": [serving], "ports": _kv_event_ports()}] if routing.precise is not None else []),
                  *_api_server(service, policies, "the endpoint picker")]
    return _policy(service, picker_name(service.name, router.name), role_labels(service, router), ingress,
                   None if policies is None else _egress(policies.egress, egress))


def _gateway(service: InferenceService, policies: NetworkPolicies, router: Router) -> dict[str, Any]:
    """The Gateway's pods: as named, else every pod of the Gateway's namespace."""
    if policies.gateway is not None:
        return _selected(policies.gateway)
    shared = router.shared_gateway
    return _namespace(service, shared.namespace if shared is not None and shared.namespace else service.namespace)


def _clients(service: InferenceService, policies: NetworkPolicies) -> dict[str, Any]:
    return _selected(policies.clients) if policies.clients is not None else _namespace(service, service.namespace)


def _prometheus(service: InferenceService, policies: NetworkPolicies) -> list[dict[str, Any]]:
    """Prometheus's pods: as named, else those of the namespaces the autoscalers' addresses name; required
    where PodMonitors ask Prometheus to scrape."""
    if policies.prometheus is not None:
        return [_selected(policies.prometheus)]
    namespaces = sorted({namespace for role in service.roles if role.autoscaling and role.autoscaling.prometheus
                         for namespace in [_address_namespace(role.autoscaling.prometheus.server_address)]
                         if namespace is not None})
    if not namespaces and service.monitoring is not None:
        raise InvalidSpec(service.where, f"{PATH}.prometheus",
                          "is required with spec.monitoring.podMonitor: name Prometheus's pods (e.g. {namespaceLabels: "
                          "{kubernetes.io/metadata.name: monitoring}}), which the policies admit to the metrics; or "
                          "set networkPolicy.enabled to false")
    return [_namespace(service, namespace) for namespace in namespaces]


def _address_namespace(address: str) -> str | None:
    """The namespace of a Service's cluster DNS name (``http://NAME.NAMESPACE[.svc...]:PORT``), or None."""
    from urllib.parse import urlsplit  # only an autoscaler's Prometheus needs it: a render without one never loads it

    labels = (urlsplit(address).hostname or "").split(".")
    return labels[1] if len(labels) == 2 or (len(labels) > 2 and labels[2] == "svc") else None


def _peer_role(service: InferenceService, role: Role) -> dict[str, Any] | None:
    """The pods of the other half of a prefill/decode service."""
    other = PEERS.get(role.component_type)
    if other is None or not any(peer.component_type is other for peer in service.roles):
        return None
    return _pods({LABEL_SERVICE: service.name, LABEL_COMPONENT_TYPE: str(other)})


def _api_server(service: InferenceService, policies: NetworkPolicies, who: str) -> list[Rule]:
    egress = policies.egress
    if egress is None:
        return []
    if not egress.api_server:
        raise InvalidSpec(service.where, f"{PATH}.egress.apiServer",
                          f"is required with egress.restrict: {who} calls the API server; name its addresses (CIDRs)")
    return [{"to": [{"ipBlock": {"cidr": cidr}} for cidr in egress.api_server]}]


def _known_port(service: InferenceService, role: Role) -> int | None:
    """The role's serving port, where one can be known: else any port."""
    container = role.template["spec"]["containers"][0]
    if container.get("ports") or role.server(service.where).engine is not None:
        return serving_port(service, role, ADMITTED).number
    return None


def _egress(egress: Egress | None, needed: list[Rule]) -> list[Rule] | None:
    """The egress rules of a restricted pod: the DNS, what it needs, what the user adds; None: unrestricted."""
    return None if egress is None else [DNS, *needed, *(_endpoint_rule("to", endpoint) for endpoint in egress.to)]


def _policy(service: InferenceService, name: str, selected: Mapping[str, str], ingress: list[Rule],
            egress: list[Rule] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"podSelector": {"matchLabels": dict(selected)},
                            "policyTypes": ["Ingress", *(["Egress"] if egress is not None else [])],
                            "ingress": ingress}
    if egress is not None:
        spec["egress"] = egress
    return {"apiVersion": NETWORK_POLICY.api_version, "kind": NETWORK_POLICY.kind,
            "metadata": object_metadata(service, name, {LABEL_SERVICE: service.name}), "spec": spec}


def _endpoint_rule(direction: str, endpoint: Endpoint) -> Rule:
    peer = {"ipBlock": {"cidr": endpoint.cidr}} if endpoint.cidr is not None else _selected(endpoint.peer)
    return {direction: [peer], **({"ports": [{"port": port, "protocol": "TCP"} for port in endpoint.ports]}
                                  if endpoint.ports else {})}


def _rule(sources: list[dict[str, Any]], port: int | None) -> Rule:
    return {"from": sources, **({"ports": _ports(port)} if port is not None else {})}


def _rule_to(destinations: list[dict[str, Any]], port: int) -> Rule:
    return {"to": destinations, "ports": _ports(port)}


def _ports(port: int) -> list[dict[str, Any]]:
    return [{"port": port, "protocol": "TCP"}]


def _kv_event_ports() -> list[dict[str, Any]]:
    """Where the pickers subscribe to the engines' KV-cache events, and ask for those they missed."""
    return [*_ports(EVENTS_PORT), *_ports(REPLAY_PORT)]


def _pods(labels: Mapping[str, str]) -> dict[str, Any]:
    """The pods of the policy's namespace with LABELS."""
    return {"podSelector": {"matchLabels": dict(labels)}}


def _namespace(service: InferenceService, namespace: str | None) -> dict[str, Any]:
    """Every pod of NAMESPACE (of the service's own: of the policy's namespace)."""
    if namespace is None or namespace == service.namespace:
        return {"podSelector": {}}
    return {"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: namespace}}}


def _selected(peer: Peer) -> dict[str, Any]:
    """A peer the user names by labels: podLabels alone are pods of the policy's namespace."""
    return {selector: {"matchLabels": dict(peer[field])}
            for field, selector in (("namespaceLabels", "namespaceSelector"), ("podLabels", "podSelector"))
            if field in peer}
