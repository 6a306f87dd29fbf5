"""An endpoint picker run as a process against the test control plane, exactly as the chart's
Deployment runs it: its image's binary (built by ci/cluster/build.sh), its args, its ConfigMap at the
mount path, its ServiceAccount's credentials. Only the kubelet's part is done here: ``$(NAMESPACE)``
expanded, the ConfigMap mounted (under a work directory), and a kubeconfig in place of the in-cluster
configuration."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fusion_helm.expand.router import ports
from tests import engines
from tests.controlplane.builds import picker, picker_probe
from tests.controlplane.cluster import Cluster, eventually
from tests.controlplane.simulator import render_argv, render_servers

GRPC_PORT, HEALTH_PORT, METRICS_PORT = ports.PICKER_GRPC_PORT, ports.GRPC_HEALTH_PORT, ports.METRICS_PORT
"""The ports the expansion gives the picker; another picker running beside it is moved off them."""
CONFIG_LOADED = "loaded configuration from file/text successfully"
DESTINATION, PREFILL_HOST = "x-gateway-destination-endpoint", "x-prefiller-host-port"
"""Where a picker answers with the endpoint it chose, and a prefill/decode picker with the prefill pod."""
REFRESHER = re.compile(r'(Starting|Stopping) refresher\W.*?"pod":\s*(\{[^}]*\})')
"""The picker scrapes each endpoint of its pool while it holds it: these lines follow its endpoint set."""


@dataclass
class Routes:
    destinations: set[str]
    prefill_hosts: set[str]
    refused: list[dict[str, Any]]
    """The answers that chose no endpoint."""


class Picker:
    def __init__(self, process: subprocess.Popen[bytes], log: Path, offset: int = 0) -> None:
        self.process = process
        self.log = log
        self.grpc = f"127.0.0.1:{GRPC_PORT + offset}"
        self.health_address = f"127.0.0.1:{HEALTH_PORT + offset}"

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
        done = ask("health", self.health_address, service)
        return str(json.loads(done.stdout)["status"]) if done.returncode == 0 else "UNREACHABLE"

    def routes_command(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> list[str]:
        """`picker-probe routes`: the request of `route`, asked again and again until its stdin closes."""
        return [str(picker_probe()), "routes", self.grpc, json.dumps(body),
                *(f"{k}={v}" for k, v in (headers or {}).items())]

    def routed(self, body: dict[str, Any], headers: dict[str, str] | None = None, answers: int = 500
               ) -> Routes:
        """The destinations and the prefill hosts the picker chose in ANSWERS requests of BODY (its
        prompt numbered by ``{n}``, so that no prefix cache pins them): with the scores alike, every
        endpoint it holds, whether or not it logs them. A picker still taking its pods refuses some."""
        with RequestStream(self.routes_command(body, headers)) as stream:
            eventually(f"{answers} answers", lambda: len(stream.answers) >= answers)
        chosen = [a.answer["headers"] for a in stream.answers if "headers" in a.answer]
        return Routes({h[DESTINATION] for h in chosen}, {h[PREFILL_HOST] for h in chosen if PREFILL_HOST in h},
                      [a.answer for a in stream.answers if "headers" not in a.answer])

    def routing_to(self, endpoints: set[str], body: dict[str, Any]) -> Routes:
        """The routes of BODY's requests once the picker routes them to every one of ENDPOINTS and refuses
        none: until it has taken its pods, it may refuse (a prefill/decode picker that holds no decoder yet
        screens out every candidate)."""
        last: Routes | None = None

        def everywhere() -> Routes | None:
            nonlocal last
            last = self.routed(body)
            return last if not last.refused and last.destinations | last.prefill_hosts == endpoints else None

        def describe() -> str:
            if last is None:
                return "no answers"
            return (f"last routed to {sorted(last.destinations | last.prefill_hosts)} of {sorted(endpoints)}, "
                    f"{len(last.refused)} refused: {last.refused[:2]}")
        return eventually("the picker to route to every endpoint", everywhere, describe=describe)

    def route(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
        """What the picker answers a gateway's ext-proc request with this body and these headers."""
        done = ask("route", self.grpc, json.dumps(body), *(f"{k}={v}" for k, v in (headers or {}).items()))
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


READ_ONLY = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
             'mount --bind "$1" "$1" && mount -o remount,bind,ro / && shift && exec "$@"', "read-only"]
"""Runs its arguments after the first with every file system read-only but the directory it names (a
mount namespace of their own): a picker whose container says readOnlyRootFilesystem runs so here."""


def command(pod: dict[str, Any], configmap: dict[str, Any], namespace: str, workdir: Path
            ) -> tuple[list[str], dict[str, str]]:
    """The picker container of POD's spec as the kubelet runs it, here: its command line and the
    environment it adds. Its ConfigMap is written under WORKDIR and the args name it there; its scratch
    emptyDir at /tmp is a directory of its own, as TMPDIR (where Go writes temporary files); a container
    that says readOnlyRootFilesystem runs with every file system read-only but that directory."""
    [container] = pod["containers"]
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    [mount] = [m for m in container["volumeMounts"] if "configMap" in volumes[m["name"]]]
    [scratch] = [m for m in container["volumeMounts"] if "emptyDir" in volumes[m["name"]]]
    assert scratch["mountPath"] == "/tmp", scratch
    (workdir / "tmp").mkdir(parents=True, exist_ok=True)
    mounted = workdir / "mounted"
    for key, text in configmap["data"].items():
        (mounted / key).parent.mkdir(parents=True, exist_ok=True)
        (mounted / key).write_text(text)
    args = [arg.replace("$(NAMESPACE)", namespace).replace(f"={mount['mountPath']}/", f"={mounted}/")
            for arg in container["args"]]
    argv = [str(picker(container["image"])), *args]
    if container.get("securityContext", {}).get("readOnlyRootFilesystem"):
        argv = [*READ_ONLY, str(workdir / "tmp"), *argv]
    return argv, {"TMPDIR": str(workdir / "tmp")}


@contextmanager
def running(deployment: dict[str, Any], configmap: dict[str, Any], namespace: str, kubeconfig: Path,
            workdir: Path, offset: int = 0, real_render: bool = False) -> Iterator[Picker]:
    """The picker as its Deployment runs it; OFFSET moves its gRPC, health and metrics ports by that much
    (a picker with the chart's flag names), so that two can run at once; and its render server
    (precise-prefix-cache's tokenizer), as llm-d's simulator (REAL_RENDER: vLLM's own, for real engines),
    on its port moved so too."""
    spec = deployment["spec"]["template"]["spec"]
    renders = []
    for sidecar in render_servers(spec):
        render_command, port, configmap = _rendering(sidecar, configmap, offset)
        env = dict(os.environ)
        if real_render:  # its rendered command line, on the port moved
            words = [str(word) for word in sidecar["command"]]
            words[words.index("--port") + 1] = str(port)
            render_command = [str(engines.built(engines.VLLM) / "bin" / "vllm"), *words[1:]]
            env |= {**engines.REAL_ENGINE_ENV, "HOME": str(workdir), "HF_HUB_OFFLINE": "1"}
        renders.append(subprocess.Popen(render_command, stdout=(workdir / f"{sidecar['name']}.log").open("wb"),
                                        stderr=subprocess.STDOUT, env=env))
        eventually(f"the render server {sidecar['name']} listening", lambda port=port: listening(
            f"127.0.0.1:{port}"), timeout=300)
    argv, env = command(spec, configmap, namespace, workdir)
    moved = {f"--grpc-port={GRPC_PORT}": f"--grpc-port={GRPC_PORT + offset}",
             f"--grpc-health-port={HEALTH_PORT}": f"--grpc-health-port={HEALTH_PORT + offset}"} if offset else {}
    argv = [moved.get(arg, arg) for arg in argv]
    assert len(set(moved.values()) & set(argv)) == len(moved), f"the picker's ports are not where expected: {argv}"
    if offset:
        argv.append(f"--metrics-port={METRICS_PORT + offset}")
    log = workdir / "picker.log"
    with open(log, "wb") as out:
        # In KUBECONFIG, which controller-runtime reads when no flag names one: llm-d-router has no such flag.
        process = subprocess.Popen(argv, env={**os.environ, **env, "KUBECONFIG": str(kubeconfig)}, stdout=out,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        yield Picker(process, log, offset)
    finally:
        for render in renders:
            render.terminate()
            render.wait(10)
        process.terminate()
        try:  # llm-d-router drains for 30 s (--drain-timeout) before it stops; no request is in flight here
            process.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        time.sleep(0.2)  # its ports free again for the next picker


def _rendering(sidecar: dict[str, Any], configmap: dict[str, Any], offset: int
               ) -> tuple[list[str], int, dict[str, Any]]:
    """SIDECAR's render server on its port moved by OFFSET, that port, and CONFIGMAP with its picker's token
    producer asking it there."""
    argv, port = render_argv(sidecar, offset)
    own = render_argv(sidecar)[1]
    config = configmap["data"]["config.yaml"].replace(f"http://127.0.0.1:{own}", f"http://127.0.0.1:{port}")
    return argv, port, {**configmap, "data": {**configmap["data"], "config.yaml": config}}


def serving(found: Picker, timeout: float = 120) -> None:
    """Wait until the picker reports SERVING (it has loaded its configuration and synced its pool) and
    takes ext-proc connections."""
    def probe() -> bool | None:
        assert found.process.poll() is None, f"the picker exited:\n{found.output()[-3000:]}"
        return (found.health("inference-extension") == "SERVING" and listening(found.grpc)) or None
    eventually("the picker serving", probe, timeout=timeout)


def listening(address: str) -> bool:
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
    except OSError:
        return False
    return True


@dataclass
class Answer:
    at: float
    answer: dict[str, Any]


class RequestStream:
    """COMMAND (`picker-probe routes …`) run until the stream ends: the same request again and again, each
    answer kept with the time it came."""

    def __init__(self, command: list[str]) -> None:
        self.command = command
        self.answers: list[Answer] = []

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.answers.append(Answer(time.monotonic(), json.loads(line)))

    def __enter__(self) -> RequestStream:
        self.process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(30)
        self.reader.join(30)

    def between(self, start: float, end: float) -> list[Answer]:
        return [a for a in self.answers if start <= a.at <= end]

    def failures(self, start: float, end: float) -> list[Answer]:
        """The answers between START and END that routed nowhere: an error, or an immediate response."""
        return [a for a in self.between(start, end) if "headers" not in a.answer]
