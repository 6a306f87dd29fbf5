# A copy of fusion_helm/programs/gateway_models.py, made by `make generate` (ci/chart_copies.py) for the chart; do not edit.
"""One ``GET /v1/models`` for a shared Gateway: every model name the HTTPRoutes attached to it route, and,
where the chart asks (``--owners``), the services that serve each.

    python -m fusion_helm.programs.gateway_models --gateway NAMESPACE/NAME [--listen :8080] [--owners]
                                                   [--workers N] [--client-seconds SECONDS]

The names are a route's Exact matches on MODEL_HEADER, the header each service's route matches on a
shared Gateway (fusion_helm/expand/router/routes.py writes them) and the Gateway's body-based router
sets from the request's ``model`` (programs/model_owners.py reads them). So the listing is what the Gateway
routes, adapters and rewritten names included, whoever's engines are up. Each model's ``owned_by`` is
OWNED_BY unless ``--owners`` names the services (``namespace/service``): the Gateway's clients are not told
which namespaces serve it unless its owner wants them to. It keeps nothing: each answer is read from the
API server (one cluster-wide LIST of HTTPRoutes, reused for FRESH_SECONDS so a burst of clients costs one).

Any client on the Gateway may call it, so it holds up under slow and many clients: at most ``--workers``
connections are answered at once, each within ``--client-seconds`` (a client that has not sent its request
by then, or does not take the answer, is cut off); a connection beyond those is answered 503 at once, by
at most as many more threads, and one beyond those is closed. The fusioninfer-bbr chart runs it beside the
body-based router, with an HTTPRoute sending the Gateway's ``GET /v1/models`` here.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO

from fusion_helm.base.kinds import HTTP_ROUTE
from fusion_helm.base.labels import LABEL_SERVICE
from fusion_helm.programs.kube import ApiError, Kube
from fusion_helm.programs.model_owners import attached, routed_models

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

__all__ = ["FRESH_SECONDS", "Lister", "ModelsServer", "handler", "listing", "main", "routed_models"]

FRESH_SECONDS = 2.0
OWNED_BY = "fusioninfer"
"""Each model's ``owned_by`` where the services are not named (OpenAI's clients read the field as required)."""
WORKERS = 16
CLIENT_SECONDS = 5.0
HEAD_BYTES = 16384
"""The most a request's line and headers may take: a GET of /v1/models needs a fraction of it."""


def listing(routes: Iterable[Mapping[str, Any]], namespace: str, name: str, owners: bool = False
            ) -> dict[str, Any]:
    """The OpenAI model list of what the Gateway NAMESPACE/NAME routes: each name once, ``created`` its oldest
    route's time, ``owned_by`` OWNED_BY or, with OWNERS, the services that serve it (``namespace/service``,
    comma-separated: a stable service and its canaries share a name)."""
    serving: dict[str, set[str]] = {}
    created: dict[str, int] = {}
    for route in routes:
        if not attached(route, namespace, name):
            continue
        metadata = route["metadata"]
        owner = f"{metadata['namespace']}/{(metadata.get('labels') or {}).get(LABEL_SERVICE, metadata['name'])}"
        since = _epoch(metadata.get("creationTimestamp"))
        for model in routed_models(route):
            serving.setdefault(model, set()).add(owner)
            created[model] = min(created.get(model, since), since)
    return {"object": "list", "data": [
        {"id": model, "object": "model", "created": created[model],
         "owned_by": ",".join(sorted(serving[model])) if owners else OWNED_BY} for model in sorted(serving)]}


def _epoch(timestamp: str | None) -> int:
    if not timestamp:
        return 0
    return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp())


class Lister:
    """The Gateway's listing, read through LIST_ROUTES at most once per FRESH_SECONDS."""

    def __init__(self, namespace: str, name: str, list_routes: Callable[[], list[dict[str, Any]]],
                 clock: Callable[[], float] = time.monotonic, owners: bool = False) -> None:
        self.namespace, self.name, self.list_routes, self.clock = namespace, name, list_routes, clock
        self.owners = owners
        self.lock = threading.Lock()
        self.read_at, self.answer = -FRESH_SECONDS, b""

    def models(self) -> bytes:
        with self.lock:
            if self.clock() - self.read_at >= FRESH_SECONDS:
                self.answer = json.dumps(listing(self.list_routes(), self.namespace, self.name,
                                                 self.owners)).encode()
                self.read_at = self.clock()
            return self.answer


def read_head(connection: socket.socket, seconds: float) -> bytes:
    """A request's line and headers, read from CONNECTION within SECONDS in all (a client that sends a byte
    at a time does not reset the clock, as a socket's own timeout would); TimeoutError past them, ValueError
    past HEAD_BYTES. What a client sent before it closed, where it closed first."""
    deadline = time.monotonic() + seconds
    head = b""
    while b"\r\n\r\n" not in head and b"\n\n" not in head:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no request within {seconds:g} s")
        connection.settimeout(left)
        chunk = connection.recv(4096)
        if not chunk:
            break
        head += chunk
        if len(head) > HEAD_BYTES:
            raise ValueError(f"a request head of more than {HEAD_BYTES} bytes")
    return head


def handler(lister: Lister, client_seconds: float = CLIENT_SECONDS) -> type[BaseHTTPRequestHandler]:
    """The handler of one connection: one request (HTTP/1.0: the connection closes after it), read and
    answered within CLIENT_SECONDS each (a send is bounded in all: Python's sendall keeps one deadline)."""
    class Handler(BaseHTTPRequestHandler):
        timeout = client_seconds

        def handle(self) -> None:
            try:
                head = read_head(self.connection, client_seconds)
            except (OSError, ValueError):  # too slow, too long, or gone: no worker waits on it any longer
                self.close_connection = True
                return
            self.connection.settimeout(client_seconds)
            self.rfile.close()  # nothing read through it: the head was read whole, within its time
            self.rfile = BytesIO(head)
            self.handle_one_request()

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


BUSY = json.dumps({"error": {"message": "too many clients at once; try again", "code": 503}}).encode()
BUSY_ANSWER = (b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
               b"Content-Length: " + str(len(BUSY)).encode() + b"\r\nConnection: close\r\n\r\n" + BUSY)


class ModelsServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that answers at most WORKERS connections at once. One beyond them is answered 503
    at once (its request read first, within a second, so that the client reads the answer rather than a
    reset) by at most WORKERS more threads; one beyond those too is closed unanswered."""

    request_queue_size = 128  # the listen backlog: a burst waits for accept(), not for a worker
    busy_seconds = 1.0

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], workers: int = WORKERS
                 ) -> None:
        self.workers = threading.BoundedSemaphore(workers)
        self.refusers = threading.BoundedSemaphore(workers)
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if self.workers.acquire(blocking=False):
            self._start(self._work, request, client_address, self.workers)
        elif self.refusers.acquire(blocking=False):
            self._start(self._refuse, request, client_address, self.refusers)
        else:
            self.shutdown_request(request)

    def _start(self, target: Callable[[Any, Any], None], request: Any, client_address: Any,
               slots: threading.BoundedSemaphore) -> None:
        def run() -> None:
            try:
                target(request, client_address)
            finally:
                slots.release()
        try:
            threading.Thread(target=run, daemon=True).start()
        except RuntimeError:  # no thread to be had: the connection goes, its slot with it
            slots.release()
            self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exception(), OSError):
            return  # a client that went away, or took too long to take its answer: no traceback each
        super().handle_error(request, client_address)

    def _work(self, request: Any, client_address: Any) -> None:
        self.process_request_thread(request, client_address)

    def _refuse(self, request: socket.socket, client_address: Any) -> None:
        try:
            read_head(request, self.busy_seconds)
            request.settimeout(self.busy_seconds)
            request.sendall(BUSY_ANSWER)
        except (OSError, ValueError):
            pass
        finally:
            self.shutdown_request(request)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Answer GET /v1/models for a shared Gateway.")
    parser.add_argument("--gateway", required=True, metavar="NAMESPACE/NAME", help="the Gateway whose models to list")
    parser.add_argument("--listen", default=":8080", metavar="[HOST]:PORT", help="where to answer")
    parser.add_argument("--owners", action="store_true",
                        help="name the services that serve each model (owned_by: namespace/service)")
    parser.add_argument("--workers", type=int, default=WORKERS, metavar="N",
                        help=f"connections answered at once; more are answered 503 (default {WORKERS})")
    parser.add_argument("--client-seconds", type=float, default=CLIENT_SECONDS, metavar="SECONDS",
                        help=f"how long a client has to send its request and take the answer (default "
                             f"{CLIENT_SECONDS:g})")
    args = parser.parse_args(argv)
    namespace, _, name = args.gateway.partition("/")
    host, _, port = args.listen.rpartition(":")
    if not namespace or not name or not port.isdigit():
        parser.error("--gateway is NAMESPACE/NAME and --listen [HOST]:PORT")
    if args.workers < 1 or not args.client_seconds > 0:
        parser.error("--workers is 1 or more and --client-seconds more than 0")
    kube = Kube()
    lister = Lister(namespace, name, lambda: kube.every(HTTP_ROUTE), owners=args.owners)
    server = ModelsServer((host, int(port)), handler(lister, args.client_seconds), args.workers)
    print(f"listing the models of Gateway {args.gateway} on {args.listen}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
