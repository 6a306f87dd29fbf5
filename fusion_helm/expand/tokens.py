"""ServiceAccount tokens only where they are used: no serving pod mounts one for all its containers (the
kubelet's default), and a container that calls the API server (the prefill/decode sidecar) mounts its own,
as the kubelet would have, and no other container of its pod sees it."""

from __future__ import annotations

from collections.abc import Mapping

from fusion_helm.expand.pods import Pod

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TOKEN_VOLUME = "fusioninfer-api-token"
TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
"""Where the client libraries look for a pod's token, the API server's CA and the pod's namespace."""
TOKEN_SECONDS = 3607
"""The token's lifetime, as the kubelet's own projection asks (it renews it before it expires)."""


def without_automount(pod: Pod) -> Pod:
    """POD mounting no ServiceAccount token in every container, unless its template says it should."""
    if "automountServiceAccountToken" in pod.spec:
        return pod
    return pod.with_spec({**pod.spec, "automountServiceAccountToken": False}, pod.server)


def token_volume() -> dict[str, Any]:
    """The pod's ServiceAccount token, the API server's CA and the namespace, as the kubelet projects them."""
    return {"name": TOKEN_VOLUME, "projected": {"sources": [
        {"serviceAccountToken": {"path": "token", "expirationSeconds": TOKEN_SECONDS}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}]}}]}}


def with_own_token(spec: Mapping[str, Any], container: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """SPEC mounting no token for all its containers, and CONTAINER (to be added to it) its own."""
    mounted = {**container, "volumeMounts": [*(container.get("volumeMounts") or []),
                                             {"name": TOKEN_VOLUME, "mountPath": TOKEN_DIR, "readOnly": True}]}
    return {**spec, "automountServiceAccountToken": spec.get("automountServiceAccountToken", False),
            "volumes": [*(spec.get("volumes") or []), token_volume()]}, mounted
