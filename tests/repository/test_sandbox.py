"""The suite's sandbox (tests/sandbox.py): every packet stays on loopback, an attempt to leave it fails
the suite, and nothing the suite starts outlives it, however it ends."""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.builders import render, role, service
from tests.controlplane.cluster import Cluster, eventually
from tests.controlplane.components import NODE_IP, POD_CIDR
from tests.controlplane.pickers import running, serving
from tests.helm import ROOT
from tests.sandbox import LeftLoopback, LoopbackGuard, attempts_to_leave, inside, interfaces

LOOPBACK = ipaddress.ip_network("127.0.0.0/8")
AS_A_TERMINAL_STARTS_IT = [sys.executable, "-c", "import os, signal, sys; "
                           "signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])"]
"""Start a command with SIGINT at its default, as a terminal's foreground job has it: a suite started in
the background of a non-interactive shell (`make test &`, CI runners) inherits SIGINT ignored, and so
would the suites these tests start and stop with a Ctrl-C."""
SANDBOX = [*AS_A_TERMINAL_STARTS_IT, sys.executable, "-m", "tests.sandbox"]


def test_the_suite_runs_with_loopback_alone() -> None:
    assert inside()
    assert interfaces() == ["lo"]
    assert ipaddress.ip_network(POD_CIDR, strict=False).subnet_of(LOOPBACK)
    assert ipaddress.ip_address(NODE_IP) in LOOPBACK


def test_outside_its_sandbox_the_suite_refuses_to_run() -> None:
    env = {key: value for key, value in os.environ.items() if key != "FUSION_TEST_SANDBOX"}
    refused = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                              "tests/repository/test_sandbox.py"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert refused.returncode == pytest.ExitCode.USAGE_ERROR
    assert "the suite runs in a sandbox of its own" in refused.stderr


ATTEMPTS = {
    "a pod of the old pod CIDR": "socket.create_connection(('10.244.0.7', 8000), timeout=5)",
    "a Service's cluster IP": "socket.create_connection(('10.96.0.1', 443), timeout=5)",
    "a name server, over UDP": "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'?', ('10.0.0.2', 53))",
    "an IPv6 address": "socket.create_connection(('2001:db8::1', 443), timeout=5)",
}


@pytest.mark.parametrize("target", sorted(ATTEMPTS))
def test_an_attempt_to_leave_loopback_fails_at_once_and_fails_the_suite(
        network_guard: LoopbackGuard, tmp_path: Path, target: str) -> None:
    log = tmp_path / "dialer.log"
    with log.open("w") as out:
        tried = subprocess.run([sys.executable, "-c", f"import socket\n{ATTEMPTS[target]}"], stdout=out,
                               stderr=subprocess.STDOUT, timeout=10)
    assert tried.returncode != 0 and "Network is unreachable" in log.read_text()
    with pytest.raises(LeftLoopback) as caught:
        network_guard.check()
    assert str(caught.value).startswith("1 attempt(s) to reach an address outside 127.0.0.0/8")
    assert "dialer.log: OSError: [Errno 101] Network is unreachable" in str(caught.value)


def test_any_loopback_address_is_this_machine_s_and_no_attempt(network_guard: LoopbackGuard) -> None:
    with socket.socket() as server:
        server.bind(("127.244.0.7", 0))
        server.listen()
        socket.create_connection(server.getsockname(), timeout=5).close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.244.0.8", 9), timeout=5)
    network_guard.check()


# -- nothing outlives the suite -----------------------------------------------------------------------

def processes_naming(marker: str) -> dict[int, str]:
    """The processes whose command line holds MARKER: pid → command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:  # gone meanwhile
                continue
            if marker in command:
                found[int(entry.name)] = command
    return found


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:  # gone meanwhile
                continue
            if f"\nPPid:\t{pid}\n" in status:
                found.append(int(entry.name))
    return found


def command_of(sandbox: int) -> int:
    """The process a sandbox runs: its init's one child."""
    [init] = children(sandbox)
    [command] = children(init)
    return command


KILLS: dict[str, Callable[[subprocess.Popen[bytes]], None]] = {
    "SIGTERM to its process group, as a time-out sends it": lambda suite: os.killpg(suite.pid, signal.SIGTERM),
    "SIGINT to its process group, a terminal's Ctrl-C": lambda suite: os.killpg(suite.pid, signal.SIGINT),
    "SIGKILL to the suite's interpreter": lambda suite: os.kill(command_of(suite.pid), signal.SIGKILL),
    "SIGKILL to the sandbox": lambda suite: os.kill(suite.pid, signal.SIGKILL),
}

DETACHING = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", sys.argv[1]], start_new_session=True)
print("started", flush=True)
time.sleep(600)
"""
"""A suite in miniature: it starts a process in a session of its own, as the control plane's components
are started, and waits."""


@pytest.mark.parametrize("kill", sorted(KILLS))
def test_a_process_the_suite_started_ends_with_it(tmp_path: Path, kill: str) -> None:
    marker = str(tmp_path / "detached")
    with subprocess.Popen([*SANDBOX, sys.executable, "-c", DETACHING, marker], stdout=subprocess.PIPE,
                          start_new_session=True, cwd=ROOT) as suite:
        assert suite.stdout is not None and suite.stdout.readline() == b"started\n"
        assert len(processes_naming(marker)) == 4  # the sandbox, its init, the suite, what it detached
        KILLS[kill](suite)
        suite.wait(timeout=30)
    eventually("nothing of the suite left", lambda: not processes_naming(marker), timeout=10)


def test_without_the_sandbox_a_detached_process_outlives_the_suite(tmp_path: Path) -> None:
    """What the sandbox prevents, and what the test above would find."""
    marker = str(tmp_path / "detached")
    with subprocess.Popen([sys.executable, "-c", DETACHING, marker], stdout=subprocess.PIPE) as suite:
        assert suite.stdout is not None and suite.stdout.readline() == b"started\n"
        suite.kill()
        suite.wait(timeout=30)
    time.sleep(1)
    [left] = processes_naming(marker)
    os.kill(left, signal.SIGKILL)


# -- on the control plane -----------------------------------------------------------------------------

def test_the_test_cluster_s_pods_and_nodes_have_loopback_addresses(cluster: Cluster) -> None:
    namespace = "loopback-addresses"
    cluster.control_plane.kubectl("create", "namespace", namespace)
    try:
        cluster.control_plane.apply([pod(namespace, "probe", {"app": "probe"}, node="gpu-node-00")])
        probe = eventually("the pod's address", lambda: cluster.core.read_namespaced_pod("probe", namespace)
                           .status.pod_ip)
        [host] = {cluster.core.read_namespaced_pod("probe", namespace).status.host_ip}
        addresses = {a.address for node in cluster.core.list_node().items for a in node.status.addresses or []
                     if a.type != "Hostname"}
        assert addresses and all(ipaddress.ip_address(a) in LOOPBACK for a in {probe, host, *addresses}), (
            probe, host, addresses)
    finally:
        cluster.control_plane.kubectl("delete", "namespace", namespace, "--wait=false")


def pod(namespace: str, name: str, labels: dict[str, str], node: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"nodeName": node, "containers": [{"name": "vllm", "image": "vllm/vllm-openai:v0.11.0"}]}}


def test_a_picker_dialing_a_pod_of_the_old_pod_cidr_fails_the_suite(
        cluster: Cluster, network_guard: LoopbackGuard, tmp_path: Path) -> None:
    """What kwok's old `--cidr 10.244.0.1/16` made every picker of the suite do: scrape its pool's pods
    at private addresses, whose packets left the machine. A serving pod given such an address (on a node
    no kwok manages, its status written here as a kubelet would) is dialled by the real picker, and the
    guard fails the suite."""
    objects = render(service(role("w", "worker", ports=[{"containerPort": 8000, "name": "http"}]), {
        "name": "router", "componentType": "router", "strategy": "queue-size",
        "httproute": {"parentRefs": [{"name": "gw"}]}}))
    namespace, node = "old-pod-cidr", "outside-kwok"
    control_plane = cluster.control_plane
    control_plane.kubectl("create", "namespace", namespace)
    try:
        [pool] = [o for key, o in objects.items() if key.startswith("InferencePool/")]
        control_plane.apply([{**pool, "metadata": {**pool["metadata"], "namespace": namespace}},
                             {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}},
                             pod(namespace, "w-0", pool["spec"]["selector"]["matchLabels"], node)])
        control_plane.kubectl("patch", "pod", "w-0", "--namespace", namespace, "--subresource", "status",
                              "--type", "merge", "-p", json.dumps({"status": {
                                  "phase": "Running", "podIP": "10.244.0.7", "podIPs": [{"ip": "10.244.0.7"}],
                                  "conditions": [{"type": "Ready", "status": "True"}]}}))
        before = attempts_to_leave()
        with running(objects["Deployment/svc-router-epp"], objects["ConfigMap/svc-router-epp"], namespace,
                     cluster.kubeconfig, tmp_path) as picker:
            serving(picker)
            eventually("the picker to dial the pod", lambda: attempts_to_leave() > before,
                       describe=lambda: picker.output()[-2000:])
        with pytest.raises(LeftLoopback, match=r"attempt\(s\) to reach an address outside 127.0.0.0/8"):
            network_guard.check()
    finally:
        control_plane.kubectl("delete", "namespace", namespace, "--wait=false")
        control_plane.kubectl("delete", "node", node)


@pytest.mark.parametrize("kill", sorted(KILLS))
def test_a_suite_stopped_while_its_cluster_runs_leaves_nothing_of_it(
        control_plane_build: None, tmp_path: Path, kill: str) -> None:
    """A suite of its own (this repository's, one story's cluster test) in a sandbox of its own, stopped
    once its control plane is up: none of its processes is left."""
    basetemp = tmp_path / "suite"
    test = "tests/controlplane/test_cluster.py::test_story_installs_runs_and_uninstalls[helm3-story4]"
    with subprocess.Popen([*SANDBOX, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"--basetemp={basetemp}", test], cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, start_new_session=True) as suite:
        started = basetemp / "cluster0" / "pids.json"
        eventually("the suite's control plane up", lambda: started.is_file() and "vc-controller-manager" in
                   json.loads(started.read_text() or "{}"), timeout=120)
        running_then = processes_naming(str(basetemp))
        assert len(running_then) >= 10, running_then  # the sandbox, its init, pytest and eight components
        KILLS[kill](suite)
        suite.wait(timeout=90)
    eventually("nothing of the suite left", lambda: not processes_naming(str(basetemp)), timeout=30,
               describe=lambda: str(processes_naming(str(basetemp))))


def test_a_suite_whose_cluster_fails_to_start_leaves_nothing_of_it(control_plane_build: None,
                                                                  tmp_path: Path) -> None:
    """Its cluster fixture fails once etcd and the API server run (no upstream CRDs where it looks)."""
    basetemp = tmp_path / "suite"
    failed = subprocess.run([*SANDBOX, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             f"--basetemp={basetemp}",
                             "tests/controlplane/test_cluster.py::test_story_installs_runs_and_uninstalls[helm3-story4]"],
                            cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "FUSION_SHARED_CRDS": str(tmp_path / "absent")}, timeout=300)
    assert failed.returncode == pytest.ExitCode.TESTS_FAILED, failed.stdout[-3000:]
    assert "the upstream CRDs are not at" in failed.stdout
    assert {"etcd", "kube-apiserver"} <= {log.stem for log in (basetemp / "cluster0").glob("*.log")}
    assert not processes_naming(str(basetemp))

