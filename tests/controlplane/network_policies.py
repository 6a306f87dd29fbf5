"""NetworkPolicies enforced on the test control plane, and connections tried from inside pods' networks.

- **The enforcer**, SIG Network's kube-network-policies (``Enforcer``; the fixture ``network_policies``): its
  controller, unmodified, gives the verdict on each new connection from or to a pod of the serving runner's
  network (127.246.0.0/16), from the NetworkPolicies, namespaces and pods it watches; ci/cluster/netpol/main.go
  hands it the connections (docs/test-cluster.md says how, and why so). A connection it refuses has its first
  packet dropped: the client times out, as under kube-network-policies in a cluster.
- **A pod to connect from** (``network_pod``): a Pod of the test's namespace, labels and node, which the
  serving runner (tests/controlplane/serving.py) gives a network of its own and an address as it gives a
  serving pod, and turns Running and Ready, running none of its containers.
- **A connection from it** (``connect``, ``http_get``): a socket made in the pod's network namespace, so that
  its packets cross the suite's namespace as a pod's do, forwarded, where the enforcer decides them.
  (Connections made in the suite's own namespace are the node's, made as root: upstream lets those through,
  as it lets a kubelet's probes through, and so does the enforcer here.)
"""

from __future__ import annotations

import contextlib
import ctypes
import enum
import hashlib
import http.client
import ipaddress
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ci.tools import ROOT
from tests.controlplane.builds import CACHE, VERSIONS, MissingBuild
from tests.controlplane.clients import UNVERIFIED
from tests.controlplane.cluster import Cluster
from tests.controlplane.hook_kubelet import CUSTOM, SERVICE_LABEL
from tests.controlplane.network import NETNS_DIR, POD_NETWORK
from tests.controlplane.nodes import NODE_PREFIX
from tests.controlplane.processes import ControlPlane, free_port
from tests.controlplane.serving import NETWORK_ONLY, ServedPod, ServingKubelet

SOURCE = ROOT / "ci" / "cluster" / "netpol" / "main.go"
QUEUE = 100
"""The NFQUEUE the controller reads (upstream's default)."""


def enforcer_binary() -> Path:
    """kube-network-policies as ci/cluster/build.sh builds it (``build.sh netpol``): named by its version and a
    hash of our main.go."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    path = CACHE / "bin" / f"kube-network-policies-{VERSIONS['KUBE_NETWORK_POLICIES_VERSION']}-{digest}"
    if not path.is_file():
        raise MissingBuild(path)
    return path


class Enforcer:
    """kube-network-policies on CLUSTER's pods' network, while started."""

    def __init__(self, cluster: Cluster, name: str = "kube-network-policies") -> None:
        self.cluster = cluster
        self.logfile = cluster.control_plane.workdir / f"{name}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.address = ""

    def start(self, timeout: float = 60) -> None:
        """Start it; return once it decides every new connection of the pods (its interception installed)."""
        assert self.process is None, "started already"
        self.address = f"127.0.0.1:{free_port()}"
        with self.logfile.open("ab") as log:
            self.process = subprocess.Popen(
                [str(enforcer_binary()), "--kubeconfig", str(self.cluster.control_plane.kubeconfig),
                 "--nfqueue-id", str(QUEUE), "--pod-network", str(POD_NETWORK), "--address", self.address, "-v", "2"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout
        while not self._ready():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"kube-network-policies did not start:\n{self.tail()}")
            time.sleep(0.1)

    def stop(self) -> None:
        """Stop it: its interception goes first, and every connection goes through again."""
        if self.process is None:
            return
        process, self.process = self.process, None
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        # What one that died or was killed left in place would drop every pod's new connection from now on.
        subprocess.run([str(enforcer_binary()), "--remove"], check=True, capture_output=True, timeout=30)

    @contextlib.contextmanager
    def stopped(self) -> Iterator[None]:
        """Nothing enforced within, the policies left in place; started again after."""
        self.stop()
        try:
            yield
        finally:
            self.start()

    def sync(self, timeout: float = 30) -> None:
        """Wait until the controller holds, of every NetworkPolicy, namespace and pod of the pods' network the
        API server holds now, that version or a later one, and no NetworkPolicy the API server no longer has:
        its verdicts follow what a test changed before."""
        def listed(path: str) -> list[dict[str, Any]]:
            status, body = self.cluster.control_plane.get(path)
            assert status == 200, body
            items: list[dict[str, Any]] = json.loads(body)["items"]
            return items

        def key(o: dict[str, Any]) -> str:
            return "/".join(filter(None, (o["metadata"].get("namespace"), o["metadata"]["name"])))

        deadline = time.monotonic() + timeout
        while True:  # both listed afresh each time: an object deleted meanwhile is no longer wanted
            wanted = {
                "networkpolicies": {key(p): p["metadata"]["resourceVersion"]
                                    for p in listed("/apis/networking.k8s.io/v1/networkpolicies")},
                "namespaces": {key(n): n["metadata"]["resourceVersion"] for n in listed("/api/v1/namespaces")},
                "pods": {key(p): p["metadata"]["resourceVersion"] for p in listed("/api/v1/pods")
                         if ipaddress.ip_address(p["status"].get("podIP") or "0.0.0.0") in POD_NETWORK},
            }
            held = self.state()
            behind = [f"{kind} {key}" for kind, objects in wanted.items() for key, version in objects.items()
                      if int(held[kind].get(key, "0")) < int(version)]
            behind += [f"networkpolicies {key} (deleted)" for key in held["networkpolicies"]
                       if key not in wanted["networkpolicies"]]
            if not behind:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"kube-network-policies has not seen {behind} after {timeout:.0f}s")
            time.sleep(0.05)

    def state(self) -> dict[str, dict[str, str]]:
        """The resource versions of the objects the controller's informers hold, by kind and key."""
        with urllib.request.urlopen(f"http://{self.address}/state", timeout=5) as answer:
            held: dict[str, dict[str, str]] = json.load(answer)
            return held

    def tail(self, lines: int = 60) -> str:
        text = self.logfile.read_text(errors="replace") if self.logfile.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://{self.address}/readyz", timeout=2) as answer:
                return bool(answer.status == 200)
        except (urllib.error.URLError, OSError):
            return False


def network_pod(kubelet: ServingKubelet, namespace: str, name: str, labels: dict[str, str] | None = None,
                node: str = f"{NODE_PREFIX}00", timeout: float = 30) -> ServedPod:
    """A Pod NAME in NAMESPACE with LABELS, bound to NODE, that the serving runner gives a network and an
    address and turns Running and Ready, running none of its containers: what a test connects from (or
    listens in). It carries ``fusioninfer.io/service: ""`` unless LABELS give that label a value — what has the
    serving runner take it; no service's selector matches an empty value."""
    control_plane = kubelet.cluster.control_plane
    control_plane.apply([{
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {SERVICE_LABEL: "", **(labels or {})},
                     "annotations": {CUSTOM[0]: CUSTOM[1], NETWORK_ONLY[0]: NETWORK_ONLY[1]}},
        "spec": {"nodeName": node, "terminationGracePeriodSeconds": 0,
                 "containers": [{"name": "network", "image": "network-only"}]}}])
    key, deadline = f"{namespace}/{name}", time.monotonic() + timeout
    while time.monotonic() < deadline:
        with kubelet.lock:
            served = kubelet.pods.get(key)
        if served is not None and ready(control_plane, namespace, name):
            return served
        time.sleep(0.1)
    raise TimeoutError(f"{key}: not Ready with a network after {timeout:.0f}s")


def ready(control_plane: ControlPlane, namespace: str, name: str) -> bool:
    """Whether pod NAMESPACE/NAME is Ready."""
    status, body = control_plane.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
    conditions = json.loads(body).get("status", {}).get("conditions", []) if status == 200 else []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


class Outcome(enum.Enum):
    CONNECTED = "connected"
    REFUSED = "refused"
    """Answered by a reset: nothing listens there."""
    TIMED_OUT = "timed out"
    """Unanswered: what a NetworkPolicy's refusal looks like (the first packet dropped)."""


def connect(pod: ServedPod, address: str, port: int, timeout: float = 1.0) -> Outcome:
    """A TCP connection from POD's network to ADDRESS:PORT: whether it was made."""
    with _socket_in(pod) as sock:
        return _connect(sock, address, port, timeout)


def http_get(pod: ServedPod, url: str, timeout: float = 2.0) -> tuple[Outcome, int | None]:
    """GET URL from POD's network (https: the certificate unverified, as the kubelet's probes): whether it
    connected, and the response's status where it did."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    sock = _socket_in(pod)
    outcome = _connect(sock, host, port, timeout)
    if outcome is not Outcome.CONNECTED:
        sock.close()
        return outcome, None
    if parts.scheme == "https":
        sock = UNVERIFIED.wrap_socket(sock, server_hostname=host)
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    connection.sock = sock
    try:
        connection.request("GET", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
        response = connection.getresponse()
        response.read()
        return outcome, response.status
    finally:
        connection.close()


def _connect(sock: socket.socket, address: str, port: int, timeout: float) -> Outcome:
    sock.settimeout(timeout)
    try:
        sock.connect((address, port))
    except ConnectionRefusedError:
        return Outcome.REFUSED
    except TimeoutError:
        return Outcome.TIMED_OUT
    return Outcome.CONNECTED


_LIBC = ctypes.CDLL(None, use_errno=True)
_CLONE_NEWNET = 0x40000000


def _socket_in(pod: ServedPod) -> socket.socket:
    """A TCP socket of POD's network namespace: made by a thread of its own that enters it (setns changes the
    calling thread's alone) and ends; the socket keeps its namespace."""
    made: list[socket.socket | BaseException] = []

    def make() -> None:
        try:
            fd = os.open(NETNS_DIR / pod.network.name, os.O_RDONLY)
            try:
                if _LIBC.setns(fd, _CLONE_NEWNET) != 0:
                    error = ctypes.get_errno()
                    raise OSError(error, f"setns {pod.network.name}: {os.strerror(error)}")
            finally:
                os.close(fd)
            made.append(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        except BaseException as error:  # handed to the caller's thread
            made.append(error)

    thread = threading.Thread(target=make, name=f"netns-{pod.network.name}")
    thread.start()
    thread.join()
    [result] = made
    if isinstance(result, BaseException):
        raise result
    return result
