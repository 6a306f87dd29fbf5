"""Prometheus Operator PodMonitors: one per serving role, scraping the engine's metrics where its API
server runs — each replica's leader, or each of its pods where every node serves (a multi-node replica's
other pods run ranks or Ray workers, without an API server) — and one for a router's endpoint picker."""

from __future__ import annotations

from fusion_helm.base.kinds import POD_MONITOR
from fusion_helm.expand.labelling import SCRAPED_POD_LABELS, object_metadata, role_labels, serving_selector
from fusion_helm.expand.names import monitor_name, picker_name
from fusion_helm.expand.router.ports import METRICS_PORT_NAME
from fusion_helm.expand.serving_port import SCRAPED, serving_port
from fusion_helm.expand.tls import CA
from fusion_helm.model import InferenceService, PodMonitoring

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

METRICS_PATH = "/metrics"


def pod_monitors(service: InferenceService) -> list[dict[str, Any]]:
    if service.monitoring is None:
        return []
    monitoring = service.monitoring
    monitors = []
    for role in service.roles:
        port = serving_port(service, role, SCRAPED)
        endpoint: dict[str, Any] = {"port": port.name} if port.name else {"portNumber": port.number}
        if service.tls is not None:  # the engines serve HTTPS only
            endpoint["scheme"] = "https"
            endpoint["tlsConfig"] = {"ca": {"secret": {"name": service.tls.secret_name, "key": CA}}} \
                if service.tls.verify_peers else {"insecureSkipVerify": True}
        selector = {**role_labels(service, role), **serving_selector(service)}
        monitors.append(_pod_monitor(service, monitoring, monitor_name(service.name, role.name),
                                     role_labels(service, role), selector, endpoint))
    if service.router is not None:
        endpoint = {"port": METRICS_PORT_NAME}
        if monitoring.picker_authorization is not None:
            endpoint["authorization"] = dict(monitoring.picker_authorization)
        labels = role_labels(service, service.router)
        monitors.append(_pod_monitor(service, monitoring, picker_name(service.name, service.router.name),
                                     labels, labels, endpoint))
    return monitors


def _pod_monitor(service: InferenceService, monitoring: PodMonitoring, name: str, labels: dict[str, str],
                 selector: dict[str, str], endpoint: dict[str, Any]) -> dict[str, Any]:
    endpoint = {**endpoint, "path": METRICS_PATH}
    if monitoring.interval is not None:
        endpoint["interval"] = monitoring.interval
    return {
        "apiVersion": POD_MONITOR.api_version,
        "kind": POD_MONITOR.kind,
        "metadata": object_metadata(service, name, {**monitoring.labels, **labels}),
        "spec": {
            "selector": {"matchLabels": selector},
            "podMetricsEndpoints": [endpoint],
            "podTargetLabels": list(SCRAPED_POD_LABELS),
        },
    }
