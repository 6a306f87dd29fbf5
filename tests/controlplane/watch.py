"""What a gateway implementation learns from the API, followed as it would: one follower of the cluster's pods
(``PodWatcher``), whose listings keep each endpoint picker's ready pods in a file the gateway stand-in reads
(``PickerEndpoints``) and a shared Gateway's HTTPRoutes, pools and backends in another (``GatewayView``).

The API server keeps no loopback addresses in Endpoints or EndpointSlices, so the pods themselves are followed
(as the pickers do), a few times a second: a gateway learns within seconds.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import kubernetes
import urllib3

from tests.controlplane.cluster import Cluster, ready
from tests.controlplane.hook_kubelet import BBR_LABEL
from tests.controlplane.pickers import GRPC_PORT

ROUTES = ("gateway.networking.k8s.io", "v1", "httproutes")
POOLS = ("inference.networking.k8s.io", "v1", "inferencepools")
BBR_GRPC_PORT = 9004
Pods = list[kubernetes.client.V1Pod]


class PodWatcher(threading.Thread):
    """The one follower of pods: every pod of the cluster, listed every PERIOD seconds, each listing handed to
    every follower in turn (a follower may follow more, or read more of the API, as it is handed one)."""

    def __init__(self, cluster: Cluster, period: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.cluster, self.period = cluster, period
        self.followers: list[Callable[[Pods], None]] = []
        self.done = threading.Event()

    def follow(self, follower: Callable[[Pods], None]) -> None:
        self.followers.append(follower)

    def run(self) -> None:
        while not self.done.wait(self.period):
            with contextlib.suppress(kubernetes.client.ApiException, urllib3.exceptions.HTTPError):
                pods = self.cluster.core.list_pod_for_all_namespaces().items
                for follower in list(self.followers):
                    follower(pods)

    def __enter__(self) -> PodWatcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.join(10)


def selects(selector: Mapping[str, str], pod: kubernetes.client.V1Pod, namespace: str) -> bool:
    return pod.metadata.namespace == namespace and all(
        (pod.metadata.labels or {}).get(key) == value for key, value in selector.items())


def ready_addresses(pods: Pods) -> list[str]:
    """The addresses of PODS that are Ready and not being deleted, sorted."""
    return sorted(pod.status.pod_ip for pod in pods
                  if pod.metadata.deletion_timestamp is None and pod.status.pod_ip and ready(pod))


class PickerEndpoints:
    """What a gateway learns of the pickers from their Service's endpoints: the gRPC address of each picker pod
    that is Ready and not being deleted, kept one a line in a file the gateway stand-in reads
    (``picker-probe gateway @FILE``). Entered alone, it follows the pods with a watcher of its own."""

    def __init__(self, cluster: Cluster, namespace: str, selector: Mapping[str, str], path: Path) -> None:
        self.cluster, self.namespace, self.selector, self.path = cluster, namespace, dict(selector), path
        self.addresses: list[str] = []
        self.history: list[tuple[float, list[str]]] = []
        """When the ready pickers changed, and to what."""
        self.watcher: PodWatcher | None = None
        self._write()

    def __call__(self, pods: Pods) -> None:
        ready_pickers = [f"{address}:{GRPC_PORT}" for address in ready_addresses(
            [pod for pod in pods if selects(self.selector, pod, self.namespace)])]
        if ready_pickers != self.addresses:
            self.addresses = ready_pickers
            self.history.append((time.monotonic(), ready_pickers))
            self._write()

    def _write(self) -> None:
        staged = self.path.with_suffix(".new")
        staged.write_text("".join(f"{address}\n" for address in self.addresses))
        staged.replace(self.path)

    def __enter__(self) -> PickerEndpoints:
        self.watcher = PodWatcher(self.cluster)
        self.watcher.follow(self)
        self.watcher.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.watcher is not None:
            self.watcher.__exit__()


class GatewayView:
    """What a gateway implementation learns from the API for one shared Gateway, kept in the file
    ``picker-probe routes-gateway`` reads: the HTTPRoutes attached to it (each through CHANGE, which a test
    uses to take a protection away), each InferencePool's pickers (the ready pods of its endpointPickerRef's
    Service, in a file of its own), a ready pod of each Service backend, and its body-based router (a ready
    pod of the chart's, in the Gateway's namespace; None: the gateway calls none). Refreshed at each listing of
    its pod watcher, which its pools' pickers follow too."""

    def __init__(self, cluster: Cluster, namespace: str, name: str, workdir: Path, body_router: bool = True,
                 change: Callable[[dict[str, Any]], dict[str, Any]] = lambda route: route) -> None:
        self.cluster, self.namespace, self.name, self.workdir = cluster, namespace, name, workdir
        self.body_router, self.change = body_router, change
        self.path = workdir / "gateway.json"
        self.watcher = PodWatcher(cluster, period=0.3)
        self.watcher.follow(self)
        self.pickers: dict[str, PickerEndpoints] = {}
        self.config: dict[str, Any] = {}
        self._write({"routes": [], "pools": {}})

    def __call__(self, pods: Pods) -> None:
        custom = kubernetes.client.CustomObjectsApi(self.cluster.api)
        routes = [self.change(route) for route in custom.list_cluster_custom_object(*ROUTES)["items"]
                  if any(ref["name"] == self.name and ref.get("namespace", route["metadata"]["namespace"]) ==
                         self.namespace for ref in route["spec"].get("parentRefs") or [])]
        pools, services = {}, {}
        for route in routes:
            for rule in route["spec"].get("rules") or []:
                for ref in rule.get("backendRefs") or []:
                    key = f"{ref.get('namespace', route['metadata']['namespace'])}/{ref['name']}"
                    if ref.get("kind", "Service") == "Service":
                        if endpoint := self._endpoint(key, ref["port"], pods):
                            services[f"{key}:{ref['port']}"] = endpoint
                    else:
                        pools[key] = f"@{self._pickers(key, pods).path}"
        config: dict[str, Any] = {"routes": routes, "pools": pools, "services": services}
        if self.body_router:
            routers = sorted(pod.status.pod_ip for pod in pods
                             if selects(dict([BBR_LABEL]), pod, self.namespace) and pod.status.pod_ip and ready(pod))
            config["bbr"] = f"{routers[0]}:{BBR_GRPC_PORT}" if routers else ""
        if config != self.config:
            self._write(config)

    def _endpoint(self, service: str, port: int, pods: Pods) -> str | None:
        """A ready pod of SERVICE (namespace/name) that its PORT reaches, as ADDRESS:PORT (the API server keeps
        no loopback Endpoints: its selector is followed, as the pickers are)."""
        namespace, name = service.split("/")
        found = self.cluster.core.read_namespaced_service(name, namespace)
        [target] = [p.target_port for p in found.spec.ports if p.port == port]
        for pod in sorted((pod for pod in pods if selects(found.spec.selector, pod, namespace)),
                          key=lambda pod: pod.metadata.name):
            if pod.status.pod_ip and ready(pod):
                number = target if isinstance(target, int) else next(
                    p.container_port for c in pod.spec.containers for p in c.ports or [] if p.name == target)
                return f"{pod.status.pod_ip}:{number}"
        return None

    def _pickers(self, pool: str, pods: Pods) -> PickerEndpoints:
        """The pickers of POOL (namespace/name), followed from its endpointPickerRef's Service's selector."""
        if pool not in self.pickers:
            namespace, name = pool.split("/")
            found = kubernetes.client.CustomObjectsApi(self.cluster.api).get_namespaced_custom_object(
                POOLS[0], POOLS[1], namespace, POOLS[2], name)
            service = self.cluster.core.read_namespaced_service(found["spec"]["endpointPickerRef"]["name"], namespace)
            follower = PickerEndpoints(self.cluster, namespace, service.spec.selector,
                                       self.workdir / f"{namespace}-{name}.pickers")
            follower(pods)
            self.watcher.follow(follower)
            self.pickers[pool] = follower
        return self.pickers[pool]

    def _write(self, config: dict[str, Any]) -> None:
        self.config = config
        staged = self.path.with_suffix(".new")
        staged.write_text(json.dumps(config))
        staged.replace(self.path)

    def __enter__(self) -> GatewayView:
        self.watcher.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.watcher.__exit__()
