"""The processes of a control plane started in one work directory, and access to its API server.

Every process started is recorded in WORKDIR/pids.json, so `down` can stop what another Python
process (`make cluster-up`) started.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.controlplane.builds import binary

TOKEN = "fusioninfer-test-admin-token"


class ControlPlaneError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class ControlPlane:
    workdir: Path
    server: str = ""
    ca: Path | None = None
    ports: dict[str, int] = field(default_factory=dict)

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig"

    @property
    def pid_file(self) -> Path:
        return self.workdir / "pids.json"

    # -- processes -------------------------------------------------------------------------------

    def _pids(self) -> dict[str, int]:
        return json.loads(self.pid_file.read_text()) if self.pid_file.exists() else {}

    def spawn(self, name: str, argv: list[str | Path], env: dict[str, str] | None = None) -> None:
        with open(self.workdir / f"{name}.log", "wb") as log:
            process = subprocess.Popen([str(a) for a in argv], stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True,
                                       env={**os.environ, **(env or {})})
        self.pid_file.write_text(json.dumps({**self._pids(), name: process.pid}))

    def alive(self, name: str) -> bool:
        pid = self._pids().get(name)
        if pid is None:
            return False
        try:
            waited, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not our child (`make cluster-up` started it): ask the kernel
            status = Path(f"/proc/{pid}/status")
            return status.exists() and "zombie" not in status.read_text()
        return waited == 0

    def stop(self) -> None:
        """Stop every process started in this work directory, newest first."""
        for name, pid in reversed(list(self._pids().items())):
            try:
                os.killpg(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.alive(name):
                time.sleep(0.1)
            if self.alive(name):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        self.pid_file.unlink(missing_ok=True)

    def wait(self, what: str, ready: Callable[[], bool], process: str, timeout: float = 120) -> None:
        """Poll `ready` until it holds; fail early, with the log, if `process` exits."""
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
        raise ControlPlaneError(f"timed out after {timeout:.0f}s waiting for {what}:\n{self.tail(process)}")

    def tail(self, name: str, lines: int = 40) -> str:
        path = self.workdir / f"{name}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    # -- the API server --------------------------------------------------------------------------

    def get(self, path: str) -> tuple[int, bytes]:
        request = urllib.request.Request(f"{self.server}{path}", headers={"Authorization": f"Bearer {TOKEN}"})
        context = ssl.create_default_context(cafile=self.ca)
        try:
            with urllib.request.urlopen(request, context=context, timeout=5) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([str(binary("kubectl")), "--kubeconfig", str(self.kubeconfig), *args],
                                input=stdin, text=True, capture_output=True)
        if check and result.returncode != 0:
            raise ControlPlaneError(f"kubectl {' '.join(args)} failed:\n{result.stderr}")
        return result

    def established(self, *crds: str, timeout: float = 60) -> None:
        """Wait until the API server serves each of CRDS (by name; none: every CRD). Polled, not
        `kubectl wait`: that fails at once on a CRD whose status has no conditions yet, as one just
        created may not."""
        deadline = time.monotonic() + timeout
        while True:
            listed = json.loads(self.kubectl("get", "crd", *crds, "-o", "json").stdout)
            found = listed.get("items", [listed])
            waiting = [crd["metadata"]["name"] for crd in found if not any(
                condition["type"] == "Established" and condition["status"] == "True"
                for condition in (crd.get("status") or {}).get("conditions") or [])]
            if not waiting:
                return
            if time.monotonic() > deadline:
                raise ControlPlaneError(f"CRDs not established after {timeout:.0f}s: {waiting}")
            time.sleep(0.2)

    def apply(self, objects: list[dict[str, Any]] | str) -> None:
        text = objects if isinstance(objects, str) else yaml.safe_dump_all(objects)
        self.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager", "fusioninfer-test",
                     "-f", "-", stdin=text)

    def items(self, resource: str, namespace: str | None = None, selector: str = "") -> list[dict[str, Any]]:
        args = ["get", resource, "-o", "json"]
        args += ["--namespace", namespace] if namespace else ["--all-namespaces"]
        if selector:
            args += ["--selector", selector]
        items: list[dict[str, Any]] = json.loads(self.kubectl(*args).stdout)["items"]
        return items


def write_kubeconfig(path: Path, server: str, ca: Path) -> None:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "fusioninfer-test",
        "clusters": [{"name": "fusioninfer-test", "cluster": {
            "server": server, "certificate-authority-data": base64.b64encode(ca.read_bytes()).decode()}}],
        "users": [{"name": "admin", "user": {"token": TOKEN}}],
        "contexts": [{"name": "fusioninfer-test",
                      "context": {"cluster": "fusioninfer-test", "user": "admin", "namespace": "default"}}],
    }))
    path.chmod(0o600)
