"""The live cluster, for `fusion-helm status`: find a release's InferenceService, read what its status is
computed from (a fusion_helm.programs.status.Reader, as the status hook's client is), write its status. The
only module that talks to an API server (the kubernetes client, imported here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import kubernetes
import urllib3

from fusion_helm.base.kinds import INFERENCE_SERVICE, Kind
from fusion_helm.cli.io import InputError
from fusion_helm.programs import status

RELEASE_LABEL = "app.kubernetes.io/instance"


class ClusterClient:
    def __init__(self, kubeconfig: str | None, context: str | None, timeout: float = 30) -> None:
        config = kubernetes.client.Configuration()
        try:
            kubernetes.config.load_kube_config(kubeconfig, context=context, client_configuration=config)
        except (kubernetes.config.ConfigException, OSError) as error:
            raise InputError(f"cannot load the kubeconfig: {error}") from None
        config.retries = 0  # a call that fails is said at once, not retried out of sight
        self.api = kubernetes.client.ApiClient(config)
        self.timeout = timeout
        """Seconds each call may take: an API server that takes the connection and never answers would
        otherwise hold the command for ever."""
        self.default_namespace = _current_namespace(kubeconfig, context)

    def release_service(self, release: str, namespace: str) -> dict[str, Any]:
        """The one InferenceService helm installed for RELEASE in NAMESPACE."""
        found = self.items(INFERENCE_SERVICE, namespace, f"{RELEASE_LABEL}={release}")
        if len(found) != 1:
            names = ", ".join(item["metadata"]["name"] for item in found) or "none"
            raise InputError(f"release {release} in namespace {namespace}: expected one {INFERENCE_SERVICE.kind}, "
                             f"found {names}")
        return found[0]

    def named(self, kind: Kind, namespace: str, name: str) -> Any:
        """The object of KIND named NAME in NAMESPACE, or None where there is none."""
        try:
            return kubernetes.client.CustomObjectsApi(self.api).get_namespaced_custom_object(
                kind.group, kind.version, namespace, kind.plural, name, _request_timeout=self.timeout)
        except kubernetes.client.ApiException as error:
            if error.status == 404:
                return None
            raise _failure("get_namespaced_custom_object", error) from None
        except (OSError, urllib3.exceptions.HTTPError) as error:
            raise _unreachable(self.api, error) from None

    def items(self, kind: Kind, namespace: str, label_selector: str) -> list[dict[str, Any]]:
        """The objects of KIND in NAMESPACE that LABEL_SELECTOR selects."""
        if not kind.group:  # the core group's kinds have typed calls; pods are the only ones read
            pods = self._call(kubernetes.client.CoreV1Api(self.api).list_namespaced_pod, namespace,
                              label_selector=label_selector)
            items: list[dict[str, Any]] = self.api.sanitize_for_serialization(pods)["items"]
            return items
        listed: list[dict[str, Any]] = self._call(
            kubernetes.client.CustomObjectsApi(self.api).list_namespaced_custom_object, kind.group, kind.version,
            namespace, kind.plural, label_selector=label_selector)["items"]
        return listed

    def write_status(self, service: str, namespace: str, body: dict[str, Any]) -> None:
        kind = INFERENCE_SERVICE
        self._call(kubernetes.client.CustomObjectsApi(self.api).patch_namespaced_custom_object_status,
                   kind.group, kind.version, namespace, kind.plural, service, status.as_patch(body))

    def _call(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """One API call; its failure becomes one line naming the call and the server's answer (or why none
        came)."""
        try:
            return method(*args, **kwargs, _request_timeout=self.timeout)
        except kubernetes.client.ApiException as error:
            raise _failure(method.__name__, error) from None
        except (OSError, urllib3.exceptions.HTTPError) as error:
            raise _unreachable(self.api, error) from None


def _failure(call: str, error: kubernetes.client.ApiException) -> InputError:
    return InputError(f"{call}: {error.status} {error.reason}")


def _unreachable(api: kubernetes.client.ApiClient, error: Exception) -> InputError:
    """The API server did not answer: the urllib3 retries' last reason (a refused connection, a name that
    does not resolve, a certificate it would not take), not their whole chain."""
    if isinstance(error, urllib3.exceptions.ReadTimeoutError):
        return InputError(f"the API server at {api.configuration.host} did not answer within the request timeout "
                          "(--request-timeout)")
    reason = getattr(error, "reason", None) or error
    detail = str(reason).rpartition(": ")[2] if isinstance(reason, urllib3.exceptions.HTTPError) else str(reason)
    return InputError(f"cannot reach the API server at {api.configuration.host}: {detail}")


def _current_namespace(kubeconfig: str | None, context: str | None) -> str:
    try:
        contexts, active = kubernetes.config.list_kube_config_contexts(kubeconfig)
    except (kubernetes.config.ConfigException, OSError):
        return "default"
    chosen = next((c for c in contexts if c["name"] == context), active) if context else active
    namespace: str = (chosen or {}).get("context", {}).get("namespace") or "default"
    return namespace
