"""Serving pods that serve, on the test control plane.

kwok leaves alone the pods annotated ``kwok.x-k8s.io/status: custom``; for the serving pods among them
(those labelled with their service), this runner does a kubelet's part, once the scheduler has bound a
pod:

- **A network of the pod's own.** Each pod gets a network namespace with its own loopback, joined to
  the suite's by a veth pair, and an address of 127.246.0.0/16 (routed to that pair: the suite's
  namespace forwards between pods, ``route_localnet`` letting 127/8 cross the pairs). So, as in a
  cluster, every pod may listen on the same port, ``localhost`` is the pod itself, and a pod reaches
  another by its address. Packets never leave the machine.
- **Its containers, as rendered.** The engine (the first container) runs as llm-d's vLLM simulator,
  llm-d-inference-sim, with the model name and the flags the simulator shares with vLLM taken from the
  rendered command line (the simulator's own ``--help`` says which), plus the simulation options a test
  gives for the role (latencies, KV cache). The prefill/decode sidecar (an init container of
  llm-d-router's sidecar image) runs the sidecar binary with exactly its rendered arguments, its
  ``$(VAR)`` references resolved from its env as the kubelet resolves them, and the pod's
  ServiceAccount's token (llm-d's older llm-d-routing-sidecar image, which the proxy does not serve, runs
  as that binary too: a test gives it only the flags both releases take).
- **An endpoint picker's pod** (labelled component-type router) runs the picker built for its image with
  its rendered arguments, its ConfigMap and its ServiceAccount's credentials (tests/controlplane/pickers.py), in the
  pod's network.
- **A frontend's pod** (labelled component-type frontend) runs SGLang's router from PyPI (``sglang-router``,
  ci/engines/build.sh) with its rendered arguments and its ServiceAccount's credentials: it finds the
  serving pods through the API server as it would in a cluster.
- **Status.** The pod is Running with its address at once, and Ready when its rendered startup and
  readiness probes answer (or, without them, once its containers run), as the kubelet reports it.

Deleting a pod stops its processes and removes its network. ``tests/controlplane/test_cluster_serving.py`` uses it.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kubernetes
import urllib3
import yaml

from fusion_helm.base.labels import LABEL_COMPONENT_TYPE
from fusion_helm.expand.generations import GENERATIONS, PD_GENERATION
from tests import engines
from tests.controlplane import kubelet
from tests.controlplane.builds import binary, picker
from tests.controlplane.clients import UNVERIFIED
from tests.controlplane.cluster import Cluster
from tests.controlplane.hook_kubelet import BBR_LABEL, CUSTOM, MODELS_LABEL, hook_environment, serving_pod
from tests.controlplane.network import GATEWAY_ADDRESS, NETNS_DIR, POD_NETWORK, PodNetwork, Relay
from tests.controlplane.pickers import ask, command
from tests.controlplane.simulator import SIMULATOR_BASE, render_argv, render_servers

SERVING = {CUSTOM[0]: CUSTOM[1]}
"""Pod annotations (a role's ``template.metadata.annotations``) that have this runner run the pods."""

VLLM_PORT = 8000
"""Where vLLM (and the simulator) serve without --port."""

SIDECAR_IMAGE = re.compile(r"(^|/)llm-d-router-disagg-sidecar[:@]")

OLDER_SIDECAR_IMAGE = re.compile(r"(^|/)llm-d-routing-sidecar[:@]")
"""llm-d's routing sidecar before v0.10, which the Go module proxy does not serve: run as llm-d-router
v0.10.0's sidecar, which takes its flags but the removed --connector and its TLS switches (a test gives it
only flags both take) and speaks the same prefill/decode protocol."""

FRONTEND_MODULE = "sglang_router.launch_router"

KV_RELAY = Path(__file__).resolve().parent / "kv_relay.py"
RELAY_IN = "tcp://127.0.0.1:15557"
"""Where a simulator publishing its KV-cache events dials its relay, on its pod's own loopback."""

NETWORK_ONLY = ("fusioninfer.test/network-only", "true")
"""A pod annotation: the pod gets its network and turns Ready, and none of its containers runs (a test's
client, tests/controlplane/network_policies.py)."""

@dataclass
class ServedPod:
    key: str
    role: str
    address: str
    network: PodNetwork
    workdir: Path
    labels: dict[str, str] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    argv: dict[str, list[str]] = field(default_factory=dict)
    """Each container's command line as it runs here."""

    def log(self, container: str) -> str:
        return (self.workdir / f"{container}.log").read_text(errors="replace")

    def sidecars(self) -> list[dict[str, Any]]:
        """The pod's native sidecars (restartable init containers)."""
        return [c for c in self.spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]

    def stop(self, grace: bool = False) -> None:
        """As a kubelet stops a pod: with GRACE, each container's preStop sleep first (the pod, being
        deleted, is no longer Ready to the pickers meanwhile); then SIGTERM to the main containers, and to
        the sidecars once those have exited."""
        if grace:
            time.sleep(max((float(c.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0))
                            for c in self.spec.get("containers", [])), default=0))
        sidecars = {c["name"] for c in self.sidecars()}
        for group in ([n for n in self.processes if n not in sidecars], [n for n in self.processes if n in sidecars]):
            for name in group:
                if self.processes[name].poll() is None:
                    os.killpg(self.processes[name].pid, signal.SIGTERM)
            for name in group:
                try:
                    self.processes[name].wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(self.processes[name].pid, signal.SIGKILL)
                    self.processes[name].wait()
        self.network.delete()

class ServingKubelet(threading.Thread):
    """Runs the serving pods annotated SERVING (see the module's docstring)."""

    def __init__(self, cluster: Cluster, workdir: Path) -> None:
        super().__init__(daemon=True)
        self.cluster, self.workdir = cluster, workdir
        self.engine_options: dict[str, list[str]] = {}
        """Role name → the simulator's own options for that role's engines (latencies, KV cache …)."""
        self.real_engines: set[str] = set()
        """Namespaces whose engines run as the real vLLM (its CPU build, tests/engines.py) rather than the
        simulator."""
        self.pods: dict[str, ServedPod] = {}
        self.by_address: dict[str, ServedPod] = {}
        """Every pod this runner ran, gone or not, by its address (no address is given twice)."""
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.next_address = iter(POD_NETWORK.hosts())
        # The pods' namespaces are named under /run/netns: a file system of the sandbox's own there.
        NETNS_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "netns", str(NETNS_DIR)], check=True)
        self.relay = Relay(cluster.control_plane.ports["apiserver"])
        self.relay.start()
        self.simulator_flags = _simulator_flags()
        self.secret_mounts: dict[str, str] = {}
        """Mount path → the Secret bound there (in the sandbox's own mount namespace)."""

    def served(self, namespace: str) -> list[ServedPod]:
        with self.lock:
            return [pod for key, pod in self.pods.items() if key.startswith(f"{namespace}/")]

    def run(self) -> None:
        while not self.done.is_set():
            try:
                self._watch()
            except Exception as error:  # a broken watch: noted, and resumed as a kubelet does
                self._note(error)
                time.sleep(0.5)

    def stop(self) -> None:
        self.done.set()
        self.join(15)
        with self.lock:
            pods, self.pods = list(self.pods.values()), {}
        for pod in pods:
            pod.stop()
        self.relay.close()
        for path in self.secret_mounts:
            subprocess.run(["umount", "--lazy", path], check=False)
        subprocess.run(["umount", "--lazy", str(NETNS_DIR)], check=False)

    def _watch(self) -> None:
        watch = kubernetes.watch.Watch()
        for event in watch.stream(self.cluster.core.list_pod_for_all_namespaces, timeout_seconds=5):
            pod = event["object"]
            if not _ours(pod):
                continue
            key = f"{pod.metadata.namespace}/{pod.metadata.name}"
            if event["type"] == "DELETED" or pod.metadata.deletion_timestamp is not None:
                self._forget(key, pod, event["type"] != "DELETED")
            elif pod.spec.node_name and (pod.status.phase or "Pending") == "Pending":
                with self.lock:
                    if key in self.pods:
                        continue
                    address = str(next(self.next_address))
                    name = f"pod-{hashlib.sha256(f'{key}/{pod.metadata.uid}'.encode()).hexdigest()[:12]}"
                    directory = self.workdir / key.replace("/", "_")
                    directory.mkdir(parents=True, exist_ok=True)
                    served = ServedPod(key, pod.metadata.labels.get("fusioninfer.io/role-name", ""), address,
                                       PodNetwork(name, address), directory, dict(pod.metadata.labels))
                    self.pods[key] = served
                    self.by_address[address] = served
                threading.Thread(target=self._start, args=(pod, served), daemon=True).start()
            if self.done.is_set():
                watch.stop()

    def _forget(self, key: str, pod: kubernetes.client.V1Pod, delete: bool) -> None:
        with self.lock:
            served = self.pods.pop(key, None)
        if delete:  # stopped gracefully, and the deletion confirmed, apart from the watch
            threading.Thread(target=self._terminate, args=(served, pod), daemon=True).start()
        elif served is not None:
            served.stop()

    def _terminate(self, served: ServedPod | None, pod: kubernetes.client.V1Pod) -> None:
        if served is not None:
            served.stop(grace=True)
        try:  # no kubelet confirms it: the runner does (a deletion the API server no longer takes is noted)
            self.cluster.core.delete_namespaced_pod(pod.metadata.name, pod.metadata.namespace, grace_period_seconds=0)
        except kubernetes.client.ApiException as error:
            if error.status != 404:
                self._note(error)
        except urllib3.exceptions.HTTPError as error:  # the control plane stopped meanwhile
            self._note(error)

    def _note(self, error: Exception) -> None:
        with (self.workdir / "kubelet.log").open("a") as log:
            log.write(f"{_now()} {error!r}\n")

    def _start(self, pod: kubernetes.client.V1Pod, served: ServedPod) -> None:
        spec = self.cluster.api.sanitize_for_serialization(pod)["spec"]
        served.spec = spec
        started = _now()
        try:  # a pod deleted meanwhile ends here (its status is refused): noted in its log
            self._status(pod, served, started, ready=False)
            self._mount_secrets(pod, served)
            if (pod.metadata.annotations or {}).get(NETWORK_ONLY[0]) == NETWORK_ONLY[1]:
                self._status(pod, served, started, ready=True)  # a network alone, to connect from: nothing to probe
                return
            if served.labels.get(LABEL_COMPONENT_TYPE) == "router":
                self._run_picker(pod, served)
            elif served.labels.get(LABEL_COMPONENT_TYPE) == "frontend":
                self._run_frontend(pod, served)
            elif served.labels.get(BBR_LABEL[0]) == BBR_LABEL[1]:
                self._run_body_router(pod, served)
            elif served.labels.get(MODELS_LABEL[0]) == MODELS_LABEL[1]:
                self._run_gateway_models(pod, served)
            else:
                for container in spec.get("initContainers") or []:  # in order, as the kubelet starts them
                    if container.get("restartPolicy") == "Always":
                        self._run(pod, served, container, sidecar=True)
                    else:
                        self._run_to_completion(pod, served, container)
                self._run(pod, served, spec["containers"][0], sidecar=False)
            # Ready once every container that runs is: the engine and each sidecar, by its readiness probe
            # once its startup probe has passed (the kubelet reads none before).
            for container in [*served.sidecars(), spec["containers"][0]]:
                for probe in ("startupProbe", "readinessProbe"):
                    if container.get(probe) is not None:
                        _wait_ready(served, container, container[probe], _patience(container[probe], probe))
            self._status(pod, served, started, ready=True)
        except Exception as error:
            with (served.workdir / "kubelet.log").open("a") as log:
                log.write(f"{_now()} {error!r}\n")

    def _run(self, pod: kubernetes.client.V1Pod, served: ServedPod, container: dict[str, Any], sidecar: bool) -> None:
        env = kubelet.environment(self.cluster.core, pod, served.address, container)
        if sidecar:
            image = container["image"]
            if OLDER_SIDECAR_IMAGE.search(image):
                image = str(GENERATIONS[PD_GENERATION].pd_sidecar.image)  # type: ignore[union-attr]
            if not SIDECAR_IMAGE.search(image):
                raise RuntimeError(f"no binary here for the sidecar image {container['image']}")
            argv = [str(picker(image)), *(kubelet.expand(arg, env) for arg in container.get("args") or [])]
            if _has_token(served.spec, container):  # as the kubelet mounts it, or not
                env["KUBECONFIG"] = str(self._kubeconfig(pod, served))
        elif pod.metadata.namespace in self.real_engines:
            argv = [kubelet.expand(str(word), env) for word in [*(container.get("command") or ["vllm", "serve"]),
                                                                *(container.get("args") or [])]]
            if argv[0] != "vllm":
                raise RuntimeError(f"no real engine here for the command {argv[:2]}")
            argv[0] = str(engines.built(engines.VLLM) / "bin" / "vllm")
            env |= {**engines.REAL_ENGINE_ENV, "HOME": str(served.workdir)}
        else:
            model, flags = _engine(container, env, self.simulator_flags)
            # What llm-d's manifests give the simulator from the downward API (its KV cache needs POD_IP).
            env |= {"POD_NAME": pod.metadata.name, "POD_NAMESPACE": pod.metadata.namespace, "POD_IP": served.address}
            flags += self._publishing(served, container, env)
            argv = [str(binary("llm-d-inference-sim")), "--model", model, *flags, *SIMULATOR_BASE,
                    *self.engine_options.get(served.role, [])]
        _spawn(served, container["name"], self._in_volumes(pod, served, container, argv), env)

    def _publishing(self, served: ServedPod, container: dict[str, Any], env: dict[str, str]) -> list[str]:
        """Where the engine's command line has vLLM publish its KV-cache events (``--kv-events-config``), the
        simulator's flags that do so, its own KV cache on, through a relay that binds, numbers and announces
        as vLLM does (kv_relay.py); none otherwise."""
        config = _events_config(container, env)
        if not config.get("enable_kv_cache_events"):
            return []
        relay = [sys.executable, str(KV_RELAY), RELAY_IN, str(config["endpoint"]),
                 str(config.get("replay_endpoint") or "")]
        _spawn(served, f"{container['name']}-events", relay, env)
        # vLLM publishes each engine step's events as it ends; the simulator batches 16 unless told otherwise.
        return ["--enable-kvcache", f"--zmq-endpoint={RELAY_IN}", "--event-batch-size=1"]

    def _run_to_completion(self, pod: kubernetes.client.V1Pod, served: ServedPod, container: dict[str, Any]) -> None:
        """An init container: run to its end before the next starts (a shell script runs by this machine's
        shell, as the image's would)."""
        env = kubelet.environment(self.cluster.core, pod, served.address, container)
        argv = [kubelet.expand(str(word), env) for word in [*(container.get("command") or []),
                                                            *(container.get("args") or [])]]
        if argv[:1] not in (["sh"], ["bash"]):
            raise RuntimeError(f"no runner here for the init container {container['name']}: {argv[:2]}")
        _spawn(served, container["name"], self._in_volumes(pod, served, container, argv), env)
        if served.processes[container["name"]].wait() != 0:
            raise RuntimeError(f"init container {container['name']} failed: {served.log(container['name'])[-2000:]}")

    def _in_volumes(self, pod: kubernetes.client.V1Pod, served: ServedPod, container: dict[str, Any],
                    argv: list[str]) -> list[str]:
        """ARGV in CONTAINER's volumes, where the pod reads a claim (tests/controlplane/kubelet.py; its Secrets are
        where `_mount_secrets` put them)."""
        if not any("persistentVolumeClaim" in volume for volume in served.spec.get("volumes") or []):
            return argv
        folders = kubelet.volumes(self.cluster.core, pod.metadata.namespace, served.spec, served.workdir)
        return kubelet.in_mounts(container, folders, served.workdir / f"{container['name']}.termination", argv)

    def _mount_secrets(self, pod: kubernetes.client.V1Pod, served: ServedPod) -> None:
        """The pod's Secret volumes, each at its containers' mount path: the Secret's keys as files, as the
        kubelet writes them. The pods share this machine's file system, so a path is one Secret's for all
        of them (tests give every pod the same, spec.tls's)."""
        secrets = {volume["name"]: volume["secret"]["secretName"] for volume in served.spec.get("volumes") or []
                   if "secret" in volume}
        for container in [*(served.spec.get("initContainers") or []), *served.spec["containers"]]:
            for mount in container.get("volumeMounts") or []:
                if mount["name"] not in secrets:
                    continue
                name = secrets[mount["name"]]
                with self.lock:
                    mounted = self.secret_mounts.get(mount["mountPath"])
                    if mounted is None:
                        data = self.cluster.core.read_namespaced_secret(name, pod.metadata.namespace).data or {}
                        directory = self.workdir / "secrets" / f"{pod.metadata.namespace}-{name}"
                        directory.mkdir(parents=True, exist_ok=True)
                        for key, value in data.items():
                            (directory / key).write_bytes(base64.b64decode(value))
                        Path(mount["mountPath"]).mkdir(parents=True, exist_ok=True)
                        subprocess.run(["mount", "--bind", "-o", "ro", str(directory), mount["mountPath"]], check=True)
                        self.secret_mounts[mount["mountPath"]] = name
                    elif mounted != name:
                        raise RuntimeError(f"{mount['mountPath']} holds Secret {mounted} already, not {name}")

    def _run_picker(self, pod: kubernetes.client.V1Pod, served: ServedPod) -> None:
        """An endpoint picker's pod: its container as tests.controlplane.pickers runs a picker, in the pod's network,
        with its ConfigMap as the API server has it now and its ServiceAccount's credentials; its render server
        (``vllm launch render MODEL``, precise routing's tokenizer) first, as llm-d's simulator, which renders
        prompts with the tokenizer the simulated engines use."""
        renders = render_servers(served.spec)
        if len(renders) != len(served.sidecars()):
            raise RuntimeError(f"no runner here for the picker's sidecars {[c['name'] for c in served.sidecars()]}")
        for sidecar in renders:
            _spawn(served, sidecar["name"], render_argv(sidecar)[0], {})
        [configmap] = [volume["configMap"]["name"] for volume in served.spec["volumes"] if "configMap" in volume]
        data = self.cluster.core.read_namespaced_config_map(configmap, pod.metadata.namespace).data
        argv, env = command(served.spec, {"data": data}, pod.metadata.namespace, served.workdir)
        env["KUBECONFIG"] = str(self._kubeconfig(pod, served))
        _spawn(served, served.spec["containers"][0]["name"], argv, env)

    def _run_frontend(self, pod: kubernetes.client.V1Pod, served: ServedPod) -> None:
        """A frontend's pod: SGLang's router as its container's rendered command line runs it (the words
        after ``python3 -m sglang_router.launch_router``), in the pod's network, with its ServiceAccount's
        credentials."""
        container = served.spec["containers"][0]
        env = kubelet.environment(self.cluster.core, pod, served.address, container)
        words = [kubelet.expand(str(word), env)
                 for word in [*(container.get("command") or []), *(container.get("args") or [])]]
        if words[:3] != ["python3", "-m", FRONTEND_MODULE]:
            raise RuntimeError(f"no router here for the frontend command {words[:3]}")
        env["KUBECONFIG"] = str(self._kubeconfig(pod, served))
        _spawn(served, container["name"], [str(engines.built(engines.SGLANG_ROUTER) / "bin" / "python"), "-m",
                                          FRONTEND_MODULE, *words[3:]], env)

    def _run_body_router(self, pod: kubernetes.client.V1Pod, served: ServedPod) -> None:
        """A shared Gateway's body-based router's pod: the bbr built for its image, with its rendered args,
        in the pod's network, with its ServiceAccount's credentials."""
        [container] = served.spec["containers"]
        env = kubelet.environment(self.cluster.core, pod, served.address, container)
        argv = [str(picker(container["image"])), *(kubelet.expand(arg, env) for arg in container.get("args") or [])]
        env["KUBECONFIG"] = str(self._kubeconfig(pod, served))
        _spawn(served, container["name"], argv, env)

    def _run_gateway_models(self, pod: kubernetes.client.V1Pod, served: ServedPod) -> None:
        """A shared Gateway's /v1/models pod: the chart's standard-library program, laid out from its
        ConfigMap as its volume lays it out, by this interpreter without site-packages, in the pod's
        network, reaching the API server as a pod does (its ServiceAccount's token, the API server's CA)."""
        [container] = served.spec["containers"]
        [volume] = [v for v in served.spec["volumes"] if "configMap" in v]  # beside the API server's token
        [mount] = [m for m in container["volumeMounts"] if m["name"] == volume["name"]]
        program = kubelet.volumes(self.cluster.core, pod.metadata.namespace, {"volumes": [volume]},
                                  served.workdir)[volume["name"]]
        python, *argv = [*container["command"], *container.get("args", [])]
        assert python == "python", container["command"]  # the image's; here this interpreter
        env = {**hook_environment(self.cluster, pod.metadata.namespace, pod.spec.service_account_name, served.workdir),
               "KUBERNETES_SERVICE_HOST": GATEWAY_ADDRESS, "KUBERNETES_SERVICE_PORT": str(self.relay.port),
               "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}  # hook_environment's PATH has no `ip`
        _spawn(served, container["name"], [sys.executable, "-S", "-E", *argv], env,
               cwd=program / Path(container["workingDir"]).relative_to(mount["mountPath"]))

    def _kubeconfig(self, pod: kubernetes.client.V1Pod, served: ServedPod) -> Path:
        account = pod.spec.service_account_name or "default"
        token = self.cluster.control_plane.kubectl("create", "token", account, "--namespace",
                                                   pod.metadata.namespace).stdout.strip()
        path = served.workdir / "kubeconfig"
        ca = self.cluster.control_plane.ca
        assert ca is not None
        path.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "pod",
            "clusters": [{"name": "cluster", "cluster": {
                "server": f"https://{GATEWAY_ADDRESS}:{self.relay.port}", "tls-server-name": "localhost",
                "certificate-authority": str(ca)}}],
            "users": [{"name": "pod", "user": {"token": token}}],
            "contexts": [{"name": "pod", "context": {"cluster": "cluster", "user": "pod",
                                                     "namespace": pod.metadata.namespace}}]}))
        return path

    def _status(self, pod: kubernetes.client.V1Pod, served: ServedPod, started: str, ready: bool) -> None:
        state = {"running": {"startedAt": started}}
        conditions = [{"type": kind, "status": "True" if value else "False", "lastTransitionTime": _now()}
                      for kind, value in (("PodScheduled", True), ("Initialized", True),
                                          ("ContainersReady", ready), ("Ready", ready))]
        self.cluster.core.patch_namespaced_pod_status(pod.metadata.name, pod.metadata.namespace, {"status": {
            "phase": "Running", "startTime": started, "podIP": served.address, "podIPs": [{"ip": served.address}],
            "hostIP": "127.0.1.1", "conditions": conditions,
            "containerStatuses": [{"name": c.name, "image": c.image, "imageID": "", "ready": ready,
                                   "restartCount": 0, "started": True, "state": state}
                                  for c in pod.spec.containers]}})

def _spawn(served: ServedPod, name: str, argv: list[str], env: dict[str, str], cwd: Path | None = None) -> None:
    """Container NAME of SERVED, running ARGV in the pod's network (in CWD), its output in <name>.log."""
    log = (served.workdir / f"{name}.log").open("wb")
    served.argv[name] = argv
    served.processes[name] = subprocess.Popen(
        ["ip", "netns", "exec", served.network.name, *argv], stdout=log, stderr=subprocess.STDOUT,
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", **env}, cwd=cwd, start_new_session=True)

def _has_token(spec: dict[str, Any], container: dict[str, Any]) -> bool:
    """Whether the kubelet gives CONTAINER its pod's ServiceAccount token: the pod mounts it in every container
    (its default), or the container mounts a projected volume of it."""
    if spec.get("automountServiceAccountToken", True):
        return True
    projected = {volume["name"] for volume in spec.get("volumes") or [] if any(
        "serviceAccountToken" in source for source in (volume.get("projected") or {}).get("sources") or [])}
    return any(mount["name"] in projected for mount in container.get("volumeMounts") or [])


def _ours(pod: kubernetes.client.V1Pod) -> bool:
    """A serving pod left to this runner (hook Jobs' pods are the hook kubelet's)."""
    return (pod.metadata.annotations or {}).get(CUSTOM[0]) == CUSTOM[1] and serving_pod(pod)

def _engine(container: dict[str, Any], env: dict[str, str], simulator: frozenset[str]) -> tuple[str, list[str]]:
    """The model and the flags the simulator shares with vLLM — those of the engine's rendered command
    line the simulator takes too — from that command line (vLLM's image runs ``vllm serve`` when the
    container gives no command)."""
    words = [kubelet.expand(str(word), env)
             for word in [*(container.get("command") or []), *(container.get("args") or [])]]
    if words[:2] == ["vllm", "serve"]:
        words = words[2:]
    model = words.pop(0) if words and not words[0].startswith("-") else None
    flags: list[str] = []
    index = 0
    while index < len(words):
        name, equals, value = words[index][2:].partition("=")
        values = [value] if equals else []
        index += 1
        while not equals and index < len(words) and not words[index].startswith("--"):  # nargs: one or more
            values.append(words[index])
            index += 1
        if name == "model":
            model = values[0]
        elif name in simulator:
            flags += [f"--{name}={values[0]}"] if len(values) == 1 else [f"--{name}", *values]
    if model is None:
        raise RuntimeError(f"no model in {words}")
    return model, flags

def _events_config(container: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """The engine's ``--kv-events-config`` (vLLM's JSON), or {} where it gives none."""
    words = [kubelet.expand(str(word), env) for word in [*(container.get("command") or []),
                                                         *(container.get("args") or [])]]
    for index, word in enumerate(words):
        name, equals, value = word.partition("=")
        if name == "--kv-events-config":
            config: dict[str, Any] = json.loads(value if equals else words[index + 1])
            return config
    return {}


def _simulator_flags() -> frozenset[str]:
    """The flags llm-d-inference-sim takes, as its --help lists them."""
    done = subprocess.run([str(binary("llm-d-inference-sim")), "--help"], capture_output=True, text=True, timeout=30)
    return frozenset(re.findall(r"^\s+(?:-\w, )?--([a-z0-9-]+)", done.stdout + done.stderr, re.MULTILINE))

def _patience(probe: dict[str, Any], kind: str) -> float:
    """How long the kubelet lets PROBE (of KIND) fail: a startup probe its failureThreshold of periods, at
    least the 120 s the runner gives any probe."""
    if kind != "startupProbe":
        return 120
    return max(120, probe.get("failureThreshold", 3) * probe.get("periodSeconds", 10) + probe.get(
        "initialDelaySeconds", 0))

def _wait_ready(served: ServedPod, container: dict[str, Any], probe: dict[str, Any], timeout: float = 120) -> None:
    """Until the readiness probe passes: an HTTP GET answered 2xx/3xx, a TCP port accepting, or a gRPC
    health check SERVING."""
    handler = probe.get("httpGet") or probe.get("tcpSocket") or probe.get("grpc") or {}
    time.sleep(probe.get("initialDelaySeconds", 0))  # the kubelet asks no probe before
    port = handler.get("port")
    if isinstance(port, str):
        port = next(p["containerPort"] for p in container.get("ports") or [] if p.get("name") == port)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if "grpc" in probe:
                checked = ask("health", f"{served.address}:{port}", handler.get("service", ""))
                if checked.returncode == 0 and json.loads(checked.stdout)["status"] == "SERVING":
                    return
            elif "httpGet" in probe:
                scheme = handler.get("scheme", "HTTP").lower()  # the kubelet verifies no certificate
                url = f"{scheme}://{served.address}:{port}{handler.get('path', '/')}"
                with urllib.request.urlopen(url, timeout=2, context=UNVERIFIED) as answer:
                    if 200 <= answer.status < 400:
                        return
            else:
                socket.create_connection((served.address, port), timeout=2).close()
                return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{served.key}: not ready by its probe {handler} after {timeout:.0f}s")

def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
