"""One ``GET /v1/models`` for a shared Gateway: every model name the HTTPRoutes attached to it route,
each with the services that serve it.

    python -m fusion_helm.programs.gateway_models --gateway NAMESPACE/NAME [--listen :8080]

The names are a route's Exact matches on MODEL_HEADER, the header each service's route matches on a
shared Gateway (fusion_helm/expand/router/routes.py writes them) and the Gateway's body-based router
sets from the request's ``model``. So the listing is what the Gateway routes, adapters and rewritten
names included, whoever's engines are up. It keeps nothing: each answer is read from the API server (one
cluster-wide LIST of HTTPRoutes, reused for FRESH_SECONDS so a burst of clients costs one). The
fusioninfer-bbr chart runs it beside the body-based router, with an HTTPRoute sending the Gateway's
``GET /v1/models`` here.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from fusion_helm.base.kinds import GATEWAY, HTTP_ROUTE
from fusion_helm.base.labels import LABEL_SERVICE, MODEL_HEADER
from fusion_helm.programs.kube import ApiError, Kube

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

FRESH_SECONDS = 2.0


def attached(route: Mapping[str, Any], namespace: str, name: str) -> bool:
    """ROUTE names the Gateway NAMESPACE/NAME among its parents."""
    own = route["metadata"]["namespace"]
    return any(ref.get("name") == name and ref.get("namespace", own) == namespace
               and ref.get("group", GATEWAY.group) == GATEWAY.group and ref.get("kind", GATEWAY.kind) == GATEWAY.kind
               for ref in (route.get("spec") or {}).get("parentRefs") or ())


def routed_models(route: Mapping[str, Any]) -> list[str]:
    """The model names ROUTE matches, in its order, each once."""
    names: list[str] = []
    for rule in (route.get("spec") or {}).get("rules") or ():
        for match in rule.get("matches") or ():
            for header in match.get("headers") or ():
                if (str(header.get("name", "")).lower() == MODEL_HEADER.lower()
                        and header.get("type", "Exact") == "Exact" and header.get("value") not in names):
                    names.append(header["value"])
    return names


def listing(routes: Iterable[Mapping[str, Any]], namespace: str, name: str) -> dict[str, Any]:
    """The OpenAI model list of what the Gateway NAMESPACE/NAME routes: each name once, ``owned_by`` the
    services that serve it (``namespace/service``, comma-separated), ``created`` its oldest route's time."""
    owners: dict[str, set[str]] = {}
    created: dict[str, int] = {}
    for route in routes:
        if not attached(route, namespace, name):
            continue
        metadata = route["metadata"]
        owner = f"{metadata['namespace']}/{(metadata.get('labels') or {}).get(LABEL_SERVICE, metadata['name'])}"
        since = _epoch(metadata.get("creationTimestamp"))
        for model in routed_models(route):
            owners.setdefault(model, set()).add(owner)
            created[model] = min(created.get(model, since), since)
    return {"object": "list", "data": [{"id": model, "object": "model", "created": created[model],
                                        "owned_by": ",".join(sorted(owners[model]))} for model in sorted(owners)]}


def _epoch(timestamp: str | None) -> int:
    if not timestamp:
        return 0
    return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp())


class Lister:
    """The Gateway's listing, read through LIST_ROUTES at most once per FRESH_SECONDS."""

    def __init__(self, namespace: str, name: str, list_routes: Callable[[], list[dict[str, Any]]],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.namespace, self.name, self.list_routes, self.clock = namespace, name, list_routes, clock
        self.lock = threading.Lock()
        self.read_at, self.answer = -FRESH_SECONDS, b""

    def models(self) -> bytes:
        with self.lock:
            if self.clock() - self.read_at >= FRESH_SECONDS:
                self.answer = json.dumps(listing(self.list_routes(), self.namespace, self.name)).encode()
                self.read_at = self.clock()
            return self.answer


def handler(lister: Lister) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.partition("?")[0]
            if path == "/healthz":
                self._answer(200, b'{"status": "ok"}')
            elif path == "/v1/models":
                try:
                    self._answer(200, lister.models())
                except (ApiError, OSError) as error:
                    self._error(503, f"cannot list the Gateway's routes: {error}")
            else:
                self._error(404, f"no {path} here: this answers GET /v1/models for the Gateway")

        def _error(self, status: int, message: str) -> None:
            self._answer(status, json.dumps({"error": {"message": message, "code": status}}).encode())

        def _answer(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # a request a second from probes and clients: no line each

    return Handler


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Answer GET /v1/models for a shared Gateway.")
    parser.add_argument("--gateway", required=True, metavar="NAMESPACE/NAME", help="the Gateway whose models to list")
    parser.add_argument("--listen", default=":8080", metavar="[HOST]:PORT", help="where to answer")
    args = parser.parse_args(argv)
    namespace, _, name = args.gateway.partition("/")
    host, _, port = args.listen.rpartition(":")
    if not namespace or not name or not port.isdigit():
        parser.error("--gateway is NAMESPACE/NAME and --listen [HOST]:PORT")
    kube = Kube()
    lister = Lister(namespace, name, lambda: kube.get(f"/apis/{HTTP_ROUTE.api_version}/{HTTP_ROUTE.plural}")["items"])
    server = ThreadingHTTPServer((host, int(port)), handler(lister))
    print(f"listing the models of Gateway {args.gateway} on {args.listen}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
