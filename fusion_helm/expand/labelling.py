"""The labels and metadata of generated objects and their pods."""

from __future__ import annotations

from fusion_helm.base.labels import (
    LABEL_COMPONENT_TYPE,
    LABEL_GROUP_INDEX,
    LABEL_PD_ROLE,
    LABEL_REPLICA_INDEX,
    LABEL_ROLE_NAME,
    LABEL_SERVES,
    LABEL_SERVICE,
    LABEL_WORKER_INDEX,
)
from fusion_helm.model import ComponentType, InferenceService, Role

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fusion_helm.model import Router
    from fusion_helm.model.exposure import Frontend

PD_ROLES = {ComponentType.PREFILLER: "prefill", ComponentType.DECODER: "decode"}
SCRAPED_POD_LABELS = (LABEL_SERVICE, LABEL_ROLE_NAME, LABEL_COMPONENT_TYPE)
"""Carried from the pods onto every metric Prometheus scrapes from them (the PodMonitors' podTargetLabels):
a dashboard tells the roles apart by them, an autoscaler's query selects by them (``prometheus_label``)."""


def prometheus_label(label: str) -> str:
    """The name a pod label takes on a scraped metric: every character a Prometheus label name may not
    hold made an underscore, as the Prometheus Operator does (``fusioninfer.io/service`` →
    ``fusioninfer_io_service``)."""
    return "".join(char if char.isascii() and (char.isalnum() or char == "_") else "_" for char in label)


def replica_index_label(service: InferenceService) -> str:
    """The pod label holding a pod's replica index: ours in the replica layout, LWS's group index where
    a role's replicas are LWS groups (one template serves every group)."""
    return LABEL_GROUP_INDEX if service.layout.grouped else LABEL_REPLICA_INDEX


def role_labels(service: InferenceService, role: Role | Router | Frontend) -> dict[str, str]:
    return {
        LABEL_SERVICE: service.name,
        LABEL_COMPONENT_TYPE: str(role.component_type),
        LABEL_ROLE_NAME: role.name,
    }


def pod_labels(service: InferenceService, role: Role) -> dict[str, str]:
    """A serving role's pod labels: its role labels, and under a router the picker's prefill/decode label."""
    labels = role_labels(service, role)
    if service.router is not None and role.component_type in PD_ROLES:
        labels[LABEL_PD_ROLE] = PD_ROLES[role.component_type]
    return labels


def labels_serving_pods(service: InferenceService) -> bool:
    """A role of SERVICE serves from every node of a replica, so its serving pods are not just the
    leaders: they carry LABEL_SERVES (only then: a label added to a pod template restarts its pods)."""
    return any(role.every_node_serves for role in service.roles)


def serving_selector(service: InferenceService) -> dict[str, str]:
    """The labels that select SERVICE's pods that serve requests, among those of its roles."""
    return {LABEL_SERVES: "true"} if labels_serving_pods(service) else {LABEL_WORKER_INDEX: "0"}


def object_metadata(service: InferenceService, name: str, labels: dict[str, str]) -> dict[str, Any]:
    """Metadata of a generated object: in the service's namespace, with its labels and ``labels``."""
    metadata: dict[str, Any] = {"name": name}
    if service.namespace:
        metadata["namespace"] = service.namespace
    metadata["labels"] = {**service.labels, **labels}
    if service.annotations:
        metadata["annotations"] = dict(service.annotations)
    return metadata
