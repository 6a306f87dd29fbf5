"""A real Kubernetes control plane on loopback, from binaries built by ci/cluster/build.sh.

etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok (fake GPU nodes whose pods turn
Running and Ready), the LeaderWorkerSet controller with its webhooks, and Volcano's scheduler and
controller manager. Used by the session fixture in tests/conftest.py and by `make cluster-up`:

    python -m tests.controlplane up DIR     # start; prints the kubeconfig path
    python -m tests.controlplane down DIR   # stop everything started in DIR
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "ci" / "cluster" / "build.sh"
VERSIONS = dict(line.split("=", 1) for line in (ROOT / "ci" / "cluster" / "versions.env").read_text().split()
                if "=" in line and not line.startswith("#"))
CACHE = Path(os.environ.get("CLUSTER_CACHE", Path(os.environ.get(
    "FUSION_CACHE", Path.home() / ".cache" / "fusioninfer")) / "cluster"))
TOKEN = "fusioninfer-test-admin-token"
GO_MODCACHE = Path(os.environ.get("GOMODCACHE", Path.home() / "go" / "pkg" / "mod"))


class ControlPlaneError(RuntimeError):
    pass


def binary(name: str, version_key: str) -> Path:
    path = CACHE / "bin" / f"{name}-{VERSIONS[version_key]}"
    if not path.is_file():
        raise ControlPlaneError(f"{path} is missing: build the test control plane with {BUILD} "
                                "(`make cluster-build`; needs Go and the Go module proxy)")
    return path


def etcd_binary() -> Path:
    found = shutil.which("etcd")
    if found is None:
        raise ControlPlaneError("etcd is missing: `apt-get install etcd-server` (`make cluster-build` does it)")
    return Path(found)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def openssl(*args: str | Path) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)


def self_signed_cert(directory: Path, name: str) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 (and localhost), its own CA: for the webhooks on loopback."""
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", f"/CN={name}",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", key, "-out", cert)
    return cert, key


@dataclass
class ControlPlane:
    workdir: Path
    kubeconfig: Path = field(init=False)
    server: str = ""
    ports: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.kubeconfig = self.workdir / "kubeconfig"

    # -- processes -------------------------------------------------------------------------------

    @property
    def pid_file(self) -> Path:
        return self.workdir / "pids.json"

    def _pids(self) -> dict[str, int]:
        return json.loads(self.pid_file.read_text()) if self.pid_file.exists() else {}

    def spawn(self, name: str, argv: list[str | Path]) -> None:
        log = open(self.workdir / f"{name}.log", "wb")  # noqa: SIM115 - the child keeps it open
        process = subprocess.Popen([str(a) for a in argv], stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        pids = self._pids()
        pids[name] = process.pid
        self.pid_file.write_text(json.dumps(pids))

    def alive(self, name: str) -> bool:
        pid = self._pids().get(name)
        if pid is None:
            return False
        try:
            waited, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not our child (make cluster-up started it): ask the kernel
            return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()
        return waited == 0

    def stop(self) -> None:
        """Stop every process started in this workdir, newest first."""
        for name, pid in reversed(list(self._pids().items())):
            try:
                os.killpg(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
                try:
                    if os.waitpid(pid, os.WNOHANG)[0]:
                        break
                except ChildProcessError:
                    pass
                time.sleep(0.1)
            else:
                if Path(f"/proc/{pid}").exists():
                    os.killpg(pid, signal.SIGKILL)
        self.pid_file.unlink(missing_ok=True)

    def wait(self, what: str, ready: Callable[[], bool], process: str, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive(process):
                raise ControlPlaneError(f"{process} exited while waiting for {what}:\n{self.tail(process)}")
            try:
                if ready():
                    return
            except (OSError, subprocess.CalledProcessError):
                pass
            time.sleep(0.3)
        raise ControlPlaneError(f"timed out waiting for {what}:\n{self.tail(process)}")

    def tail(self, name: str, lines: int = 30) -> str:
        path = self.workdir / f"{name}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    # -- API access ------------------------------------------------------------------------------

    def get(self, path: str) -> tuple[int, bytes]:
        request = urllib.request.Request(f"{self.server}{path}", headers={"Authorization": f"Bearer {TOKEN}"})
        context = ssl._create_unverified_context()  # loopback, self-signed serving certificate
        try:
            with urllib.request.urlopen(request, context=context, timeout=5) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        kubectl = binary("kubectl", "KUBERNETES_VERSION")
        return subprocess.run([kubectl, "--kubeconfig", str(self.kubeconfig), *args], input=stdin,
                              text=True, capture_output=True, check=check)

    def apply(self, objects: list[dict] | str) -> None:
        text = objects if isinstance(objects, str) else yaml.safe_dump_all(objects)
        self.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", stdin=text)


def write_kubeconfig(path: Path, server: str) -> None:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "fusioninfer-test",
        "clusters": [{"name": "fusioninfer-test",
                      "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
        "users": [{"name": "admin", "user": {"token": TOKEN}}],
        "contexts": [{"name": "fusioninfer-test",
                      "context": {"cluster": "fusioninfer-test", "user": "admin", "namespace": "default"}}],
    }))
    path.chmod(0o600)


# -- the components ------------------------------------------------------------------------------

def start_kubernetes(cp: ControlPlane) -> None:
    work = cp.workdir
    ports = cp.ports
    ports.update(etcd=free_port(), etcd_peer=free_port(), apiserver=free_port())
    cp.spawn("etcd", [
        etcd_binary(), "--name", "fusioninfer-test", "--data-dir", work / "etcd",
        "--listen-client-urls", f"http://127.0.0.1:{ports['etcd']}",
        "--advertise-client-urls", f"http://127.0.0.1:{ports['etcd']}",
        "--listen-peer-urls", f"http://127.0.0.1:{ports['etcd_peer']}",
        "--initial-advertise-peer-urls", f"http://127.0.0.1:{ports['etcd_peer']}",
        "--initial-cluster", f"fusioninfer-test=http://127.0.0.1:{ports['etcd_peer']}",
        "--unsafe-no-fsync",
    ])
    cp.wait("etcd", lambda: urllib.request.urlopen(
        f"http://127.0.0.1:{ports['etcd']}/health", timeout=2).status == 200, "etcd")

    pki = work / "pki"
    pki.mkdir(exist_ok=True)
    openssl("genrsa", "-out", pki / "sa.key", "2048")
    openssl("rsa", "-in", pki / "sa.key", "-pubout", "-out", pki / "sa.pub")
    (pki / "tokens.csv").write_text(f'{TOKEN},admin,admin,"system:masters"\n')
    cp.server = f"https://127.0.0.1:{ports['apiserver']}"
    write_kubeconfig(cp.kubeconfig, cp.server)
    cp.spawn("kube-apiserver", [
        binary("kube-apiserver", "KUBERNETES_VERSION"),
        "--etcd-servers", f"http://127.0.0.1:{ports['etcd']}",
        "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
        "--secure-port", str(ports["apiserver"]), "--cert-dir", pki / "apiserver",
        "--token-auth-file", pki / "tokens.csv", "--authorization-mode", "RBAC",
        "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
        "--service-account-key-file", pki / "sa.pub", "--service-account-signing-key-file", pki / "sa.key",
        "--service-cluster-ip-range", "10.96.0.0/16", "--allow-privileged=true",
    ])
    cp.wait("kube-apiserver /readyz", lambda: cp.get("/readyz")[0] == 200, "kube-apiserver")

    cp.spawn("kube-controller-manager", [
        binary("kube-controller-manager", "KUBERNETES_VERSION"),
        "--kubeconfig", cp.kubeconfig, "--leader-elect=false", "--bind-address", "127.0.0.1",
        "--secure-port", "0", "--service-account-private-key-file", pki / "sa.key",
        "--root-ca-file", pki / "apiserver" / "apiserver.crt", "--use-service-account-credentials=false",
        "--controllers", "*,-nodeipam,-nodelifecycle,-service-lb-controller,-cloud-node-lifecycle",
    ])
    cp.spawn("kube-scheduler", [
        binary("kube-scheduler", "KUBERNETES_VERSION"),
        "--kubeconfig", cp.kubeconfig, "--leader-elect=false", "--bind-address", "127.0.0.1",
        "--secure-port", "0",
    ])
    cp.wait("the default namespace", lambda: cp.get("/api/v1/namespaces/default")[0] == 200,
            "kube-controller-manager")
