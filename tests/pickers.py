"""An endpoint picker run as a process against the test control plane, exactly as the chart's
Deployment runs it: its image's binary (built by ci/cluster/build.sh), its args, its ConfigMap at the
mount path, its ServiceAccount's credentials. Only the kubelet's part is done here: ``$(NAMESPACE)``
expanded, the ConfigMap mounted (under a work directory), and a kubeconfig in place of the in-cluster
configuration."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from tests.cluster import Cluster, eventually
from tests.controlplane.builds import picker, picker_probe

GRPC = "127.0.0.1:9002"
HEALTH = "127.0.0.1:9003"
CONFIG_LOADED = "loaded configuration from file/text successfully"
REFRESHER = re.compile(r'(Starting|Stopping) refresher\W.*?"pod":\s*(\{[^}]*\})')
"""The picker scrapes each endpoint of its pool while it holds it: these lines follow its endpoint set."""


class Picker:
    def __init__(self, process: subprocess.Popen[bytes], log: Path) -> None:
        self.process = process
        self.log = log

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def endpoints(self) -> set[str]:
        """The pods the picker holds as its pool's endpoints, as namespace/name."""
        held: set[str] = set()
        for found in REFRESHER.finditer(self.output()):
            pod = json.loads(found.group(2))
            name = f"{pod['namespace']}/{pod['name']}"
            (held.add if found.group(1) == "Starting" else held.discard)(name)
        return held

    def health(self, service: str) -> str:
        done = ask("health", HEALTH, service)
        return str(json.loads(done.stdout)["status"]) if done.returncode == 0 else "UNREACHABLE"

    def route(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
        """What the picker answers a gateway's ext-proc request with this body and these headers."""
        done = ask("route", GRPC, json.dumps(body), *(f"{k}={v}" for k, v in (headers or {}).items()))
        assert done.returncode == 0, f"{done.stderr}\n{self.output()[-2000:]}"
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer


def ask(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(picker_probe()), *args], capture_output=True, text=True, timeout=30)


def kubeconfig_for(cluster: Cluster, namespace: str, account: str, into: Path) -> Path:
    """A kubeconfig with ACCOUNT's token: the picker gets what its Role grants, nothing more."""
    config = yaml.safe_load(cluster.kubeconfig.read_text())
    token = cluster.control_plane.kubectl("create", "token", account, "--namespace", namespace).stdout.strip()
    config["users"] = [{"name": config["users"][0]["name"], "user": {"token": token}}]
    into.write_text(yaml.safe_dump(config))
    return into


@contextmanager
def running(deployment: dict[str, Any], configmap: dict[str, Any], namespace: str, kubeconfig: Path,
            workdir: Path) -> Iterator[Picker]:
    pod = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    [mount] = container["volumeMounts"]
    mounted = workdir / "mounted"
    for key, text in configmap["data"].items():
        (mounted / key).parent.mkdir(parents=True, exist_ok=True)
        (mounted / key).write_text(text)
    args = [arg.replace("$(NAMESPACE)", namespace).replace(f"={mount['mountPath']}/", f"={mounted}/")
            for arg in container["args"]]
    log = workdir / "picker.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([str(picker(container["image"])), *args, f"--kubeconfig={kubeconfig}"],
                                   stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        yield Picker(process, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        time.sleep(0.2)  # its ports free again for the next picker


def serving(found: Picker, timeout: float = 120) -> None:
    """Wait until the picker reports SERVING (it has loaded its configuration and synced its pool) and
    takes ext-proc connections."""
    def probe() -> bool | None:
        assert found.process.poll() is None, f"the picker exited:\n{found.output()[-3000:]}"
        return (found.health("inference-extension") == "SERVING" and listening(GRPC)) or None
    eventually("the picker serving", probe, timeout=timeout)


def listening(address: str) -> bool:
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
    except OSError:
        return False
    return True
