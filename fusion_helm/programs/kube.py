"""The API server from inside a pod, with the standard library only: the hooks run in a stock
Python image. The service account's token and CA are read where Kubernetes mounts them
(FUSION_HOOK_SERVICEACCOUNT_DIR moves that, for running a hook outside a pod)."""

from __future__ import annotations

import json
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from fusion_helm.base.kinds import Kind

SERVICEACCOUNT = Path(os.environ.get("FUSION_HOOK_SERVICEACCOUNT_DIR", "/var/run/secrets/kubernetes.io/serviceaccount"))
PAGE = 500
"""Objects a LIST of every namespace asks for at once."""


class ApiError(RuntimeError):
    def __init__(self, method: str, path: str, status: int, body: str) -> None:
        super().__init__(f"{method} {path}: {status} {body[:300]}")
        self.status = status


class Kube:
    def __init__(self) -> None:
        host, port = os.environ["KUBERNETES_SERVICE_HOST"], os.environ.get("KUBERNETES_SERVICE_PORT", "443")
        self.server = f"https://{host}:{port}" if ":" not in host else f"https://[{host}]:{port}"
        self.context = ssl.create_default_context(cafile=str(SERVICEACCOUNT / "ca.crt"))

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        token = (SERVICEACCOUNT / "token").read_text().strip()  # re-read: projected tokens rotate
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.server}{path}", data=data, method=method, headers={
            "Authorization": f"Bearer {token}", "Accept": "application/json", "Content-Type": content_type})
        try:
            with urllib.request.urlopen(request, context=self.context, timeout=30) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            raise ApiError(method, path, error.code, error.read().decode(errors="replace")) from None

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def find(self, path: str) -> Any:
        """What GET PATH answers, or None where nothing is (404)."""
        try:
            return self.get(path)
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    def named(self, kind: Kind, namespace: str, name: str) -> Any:
        """The object of KIND named NAME in NAMESPACE, or None where there is none."""
        return self.find(kind.path(namespace, name))

    def items(self, kind: Kind, namespace: str, label_selector: str) -> list[dict[str, Any]]:
        """The objects of KIND in NAMESPACE that LABEL_SELECTOR selects."""
        selector = urllib.parse.quote(label_selector, safe="/")
        listed: list[dict[str, Any]] = self.get(f"{kind.path(namespace)}?labelSelector={selector}")["items"]
        return listed

    def every(self, kind: Kind) -> list[dict[str, Any]]:
        """The objects of KIND in every namespace, read in pages of PAGE (a cluster of many is not one answer)."""
        found: list[dict[str, Any]] = []
        token = ""
        while True:
            query = urllib.parse.urlencode({"limit": PAGE, **({"continue": token} if token else {})})
            listed = self.get(f"{kind.path()}?{query}")
            found += listed.get("items") or []
            token = (listed.get("metadata") or {}).get("continue") or ""
            if not token:
                return found

    def exists(self, path: str) -> bool:
        return self.find(path) is not None

    def merge_patch(self, path: str, body: Any) -> Any:
        return self.request("PATCH", path, body, "application/merge-patch+json")
