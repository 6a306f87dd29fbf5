"""A network of each serving pod's own: a network namespace joined to the suite's by a veth pair, an address
of 127.246.0.0/16, and the API server reachable from it (tests/controlplane/serving.py runs the pods in it)."""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import shlex
import socket
import subprocess
import threading
from pathlib import Path

from tests.controlplane.components import POD_GATEWAY

POD_NETWORK = ipaddress.ip_network("127.246.0.0/16")

GATEWAY_ADDRESS = POD_GATEWAY

NETNS_DIR = Path("/run/netns")

def ip(*args: str, netns: str | None = None) -> None:
    command = ["ip", *(["-n", netns] if netns else []), *args]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)}: {done.stderr.strip()}")

def sysctl(name: str, value: str, netns: str | None = None) -> None:
    path = f"/proc/sys/{name.replace('.', '/')}"
    if netns is None:
        Path(path).write_text(value)
    else:
        subprocess.run(["ip", "netns", "exec", netns, "sh", "-c", f'echo {value} > {path}'], check=True)

class PodNetwork:
    """A network namespace for one pod, joined to the suite's own by a veth pair."""

    def __init__(self, name: str, address: str) -> None:
        self.name, self.address = name, address
        self.host = f"h{hashlib.sha256(name.encode()).hexdigest()[:10]}"
        ip("netns", "add", name)
        ip("link", "add", self.host, "type", "veth", "peer", "name", "eth0", "netns", name)
        for netns in (None, name):
            sysctl("net.ipv4.conf.all.route_localnet", "1", netns)
        sysctl("net.ipv4.ip_forward", "1")
        ip("link", "set", self.host, "up")
        ip("address", "add", f"{GATEWAY_ADDRESS}/32", "dev", self.host, "noprefixroute")
        # 127/8 is local in the suite's namespace: the pod's address goes to its pair, before that.
        ip("route", "add", f"{address}/32", "dev", self.host, "table", "local")
        ip("link", "set", "lo", "up", netns=name)
        ip("link", "set", "eth0", "up", netns=name)
        ip("address", "add", f"{address}/32", "dev", "eth0", netns=name)
        # The suite's side and the other pods through the pair, from the pod's address (not 127.0.0.1, which
        # is every pod's own); the pod's address and 127.0.0.1 stay local.
        ip("route", "add", f"{GATEWAY_ADDRESS}/32", "dev", "eth0", "src", address, "table", "local", netns=name)
        ip("route", "add", str(POD_NETWORK), "via", GATEWAY_ADDRESS, "dev", "eth0", "src", address, "table", "local",
           netns=name)

    def delete(self) -> None:
        subprocess.run(["ip", "netns", "delete", self.name], capture_output=True)  # its veth pair goes too

class Relay(threading.Thread):
    """The API server, reachable from the pods at GATEWAY_ADDRESS: a TCP relay to its loopback port (its
    certificate names that address, and localhost, which the pods' kubeconfig asks for)."""

    def __init__(self, target: int) -> None:
        super().__init__(daemon=True)
        self.target = target
        self.listener = socket.create_server((GATEWAY_ADDRESS, 0))
        self.port = self.listener.getsockname()[1]

    def run(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target))
            except OSError:  # the API server is stopping with the suite; the pod retries or goes too
                client.close()
                continue
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pipe, args=(source, sink), daemon=True).start()

    def close(self) -> None:
        self.listener.close()

def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
