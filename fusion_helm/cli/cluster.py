"""The live cluster, for `fusion-helm status`: find a release's InferenceService, list its pods,
write its status. The only module that talks to an API server (the kubernetes client, imported here)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import kubernetes

from fusion_helm import status
from fusion_helm.cli.io import InputError
from fusion_helm.labels import LABEL_ROLE_NAME, LABEL_SERVICE, LABEL_SET_NAME
from fusion_helm.model import API_VERSION, KIND

GROUP, VERSION = API_VERSION.split("/")
PLURAL = "inferenceservices"
RELEASE_LABEL = "app.kubernetes.io/instance"
DISAGGREGATED_SETS = ("disaggregatedset.x-k8s.io", "v1", "disaggregatedsets")
ROLE_SCALERS = ("disaggregatedset.x-k8s.io", "v1", "disaggregatedsetrolescalers")


class ClusterClient:
    def __init__(self, kubeconfig: str | None, context: str | None) -> None:
        config = kubernetes.client.Configuration()
        try:
            kubernetes.config.load_kube_config(kubeconfig, context=context, client_configuration=config)
        except (kubernetes.config.ConfigException, OSError) as error:
            raise InputError(f"cannot load the kubeconfig: {error}") from None
        self.api = kubernetes.client.ApiClient(config)
        self.default_namespace = _current_namespace(kubeconfig, context)

    def release_service(self, release: str, namespace: str) -> dict[str, Any]:
        """The one InferenceService helm installed for RELEASE in NAMESPACE."""
        found = self._call(kubernetes.client.CustomObjectsApi(self.api).list_namespaced_custom_object,
                           GROUP, VERSION, namespace, PLURAL, label_selector=f"{RELEASE_LABEL}={release}")["items"]
        if len(found) != 1:
            names = ", ".join(item["metadata"]["name"] for item in found) or "none"
            raise InputError(f"release {release} in namespace {namespace}: expected one {KIND}, found {names}")
        service: dict[str, Any] = found[0]
        return service

    def replica_leader_worker_sets(self, service: str, role: str, namespace: str) -> list[dict[str, Any]]:
        """The per-replica LeaderWorkerSets the expansion made for ROLE of SERVICE."""
        found: list[dict[str, Any]] = self._call(
            kubernetes.client.CustomObjectsApi(self.api).list_namespaced_custom_object,
            "leaderworkerset.x-k8s.io", "v1", namespace, "leaderworkersets",
            label_selector=f"{LABEL_SERVICE}={service},{LABEL_ROLE_NAME}={role}")["items"]
        return found

    def leader_worker_sets(self, service: str, namespace: str) -> list[dict[str, Any]]:
        """Every LeaderWorkerSet the expansion made for SERVICE."""
        found: list[dict[str, Any]] = self._call(
            kubernetes.client.CustomObjectsApi(self.api).list_namespaced_custom_object,
            "leaderworkerset.x-k8s.io", "v1", namespace, "leaderworkersets",
            label_selector=f"{LABEL_SERVICE}={service}")["items"]
        return found

    def workloads(self, service: dict[str, Any], namespace: str) -> status.Workloads:
        """What the status of SERVICE needs besides its pods, as `status.reads` asks for its layout."""
        name = service["metadata"]["name"]
        kinds = status.reads(service["spec"])
        found = status.Workloads()
        if status.LEADER_WORKER_SET in kinds:
            found = replace(found, leader_worker_sets=tuple(self.leader_worker_sets(name, namespace)))
        if status.DISAGGREGATED_SET in kinds:
            listed = self._list(DISAGGREGATED_SETS, namespace, field_selector=f"metadata.name={name}")
            found = replace(found, disaggregated_set=listed[0] if listed else None)
        if status.ROLE_SCALER in kinds:
            found = replace(found, role_scalers=tuple(self._list(ROLE_SCALERS, namespace,
                                                                 label_selector=f"{LABEL_SET_NAME}={name}")))
        return found

    def _list(self, resource: tuple[str, str, str], namespace: str, **selectors: str) -> list[dict[str, Any]]:
        """The objects of RESOURCE (group, version, plural) in NAMESPACE that SELECTORS select."""
        group, version, plural = resource
        found: list[dict[str, Any]] = self._call(
            kubernetes.client.CustomObjectsApi(self.api).list_namespaced_custom_object, group, version, namespace,
            plural, **selectors)["items"]
        return found

    def pods(self, service: str, namespace: str) -> list[dict[str, Any]]:
        pods = self._call(kubernetes.client.CoreV1Api(self.api).list_namespaced_pod, namespace,
                          label_selector=f"{LABEL_SERVICE}={service}")
        items: list[dict[str, Any]] = self.api.sanitize_for_serialization(pods)["items"]
        return items

    def write_status(self, service: str, namespace: str, body: dict[str, Any]) -> None:
        self._call(kubernetes.client.CustomObjectsApi(self.api).patch_namespaced_custom_object_status,
                   GROUP, VERSION, namespace, PLURAL, service, status.as_patch(body))

    @staticmethod
    def _call(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """One API call; its failure becomes one line naming the call and the server's answer."""
        try:
            return method(*args, **kwargs)
        except kubernetes.client.ApiException as error:
            raise InputError(f"{method.__name__}: {error.status} {error.reason}") from None
        except OSError as error:
            raise InputError(f"cannot reach the cluster: {error}") from None


def _current_namespace(kubeconfig: str | None, context: str | None) -> str:
    try:
        contexts, active = kubernetes.config.list_kube_config_contexts(kubeconfig)
    except (kubernetes.config.ConfigException, OSError):
        return "default"
    chosen = next((c for c in contexts if c["name"] == context), active) if context else active
    namespace: str = (chosen or {}).get("context", {}).get("namespace") or "default"
    return namespace
