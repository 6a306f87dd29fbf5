"""``spec.monitoring``: Prometheus Operator PodMonitors for the serving roles and the router's picker."""

from __future__ import annotations

from collections.abc import Mapping

from fusion_helm.base.kinds import POD_MONITOR
from fusion_helm.model import upstream
from fusion_helm.model.metadata import check_labels_and_annotations
from fusion_helm.model.validation import check
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PATH = "spec.monitoring.podMonitor"
ENDPOINT = (POD_MONITOR.api_version, POD_MONITOR.kind, "spec", "podMetricsEndpoints", "[]")
"""A PodMonitor's scrape endpoint, as the upstream schema has it: where interval and authorization are checked."""


@record
class PodMonitoring:
    interval: str | None
    """How often Prometheus scrapes; None: its global scrape interval."""
    labels: Mapping[str, str]
    """On every PodMonitor: what a Prometheus's podMonitorSelector matches."""
    picker_authorization: Mapping[str, Any] | None
    """The picker endpoint's credentials (its metrics endpoint authenticates every scrape)."""


def parse_monitoring(raw: Mapping[str, Any] | None, where: str) -> PodMonitoring | None:
    """The service's PodMonitors, or None when it asks for none."""
    pod_monitor = (raw or {}).get("podMonitor") or {}
    if not pod_monitor.get("enabled", False):
        return None
    check_labels_and_annotations(where, PATH, pod_monitor, annotations=False)
    for field, upstream_field in (("interval", "interval"), ("pickerAuthorization", "authorization")):
        if pod_monitor.get(field) is not None:
            check(where, f"{PATH}.{field}", upstream.schema(*ENDPOINT, upstream_field), pod_monitor[field])
    return PodMonitoring(interval=pod_monitor.get("interval"), labels=dict(pod_monitor.get("labels") or {}),
                         picker_authorization=pod_monitor.get("pickerAuthorization"))
