"""A release served on the control plane: installed, its pods run (tests/controlplane/serving.py), its picker
run as its Deployment runs it, a gateway stand-in in front (``served``), and another picker beside it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.controlplane.clients import completion, gateway
from tests.controlplane.cluster import PICKERS, Cluster, Release, eventually, ready_pods, release
from tests.controlplane.pickers import Picker, kubeconfig_for, running, serving
from tests.controlplane.serving import SERVING, VLLM_PORT, ServedPod, ServingKubelet
from tests.helm import Helm

HEALTH = {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 2}
"""vLLM's (and the simulator's) readiness: the examples' probe."""

@dataclass
class Served:
    release: Release
    manifest: dict[str, dict[str, Any]]
    picker: Picker
    gateway: str
    kubelet: ServingKubelet
    namespace: str
    kubeconfig: Path
    """The picker's ServiceAccount's."""

    def pods(self, role: str) -> list[ServedPod]:
        return [pod for pod in self.kubelet.served(self.namespace) if pod.role == role]

    def port(self) -> int:
        [pool] = [o for key, o in self.manifest.items() if key.startswith("InferencePool/")]
        return int(pool["spec"]["targetPorts"][0]["number"])

    def ask(self, prompt: str, **body: Any) -> tuple[int, dict[str, str], dict[str, Any]]:
        return completion(self.gateway, {"model": self.model(), "prompt": prompt, "max_tokens": 4, **body})

    def model(self) -> str:
        """The model the engines serve: the first serving pod's --model (a LeaderWorkerSet's or a
        DisaggregatedSet role's)."""
        templates = [o["spec"]["leaderWorkerTemplate"] for o in self.manifest.values()
                     if o["kind"] == "LeaderWorkerSet"]
        templates += [r["spec"]["leaderWorkerTemplate"] for o in self.manifest.values()
                      if o["kind"] == "DisaggregatedSet" for r in o["spec"]["roles"]]
        args = templates[0]["workerTemplate"]["spec"]["containers"][0]["args"]
        return str(args[args.index("--model") + 1])

def engine_port(pod: ServedPod) -> int:
    """Where POD's engine (the simulator, or a real vLLM) listens, behind any sidecar of the pod."""
    [argv] = [words for words in list(pod.argv.values())
              if "llm-d-inference-sim" in words[0] or words[1:2] == ["serve"]]
    for index, arg in enumerate(argv):
        name, equals, value = arg.partition("=")
        if name == "--port":
            return int(value if equals else argv[index + 1])
    return VLLM_PORT

def serving_values(base: Path, tmp_path: Path, **router: Any) -> Path:
    """BASE's values, its serving pods run for real (tests/controlplane/serving.py) with vLLM's readiness probe, and
    ROUTER's fields over the router's."""
    values = yaml.safe_load(base.read_text())
    if not any(role["componentType"] == "router" for role in values["roles"]):
        values["roles"].append({"name": "router", "componentType": "router"})
    for role in values["roles"]:
        if role["componentType"] == "router":
            role.update(router)
            role.pop("gateway", None)
            role.setdefault("httproute", {})["parentRefs"] = [{"name": "gateway"}]
            continue
        role["template"].setdefault("metadata", {}).setdefault("annotations", {}).update(SERVING)
        engine = role["template"]["spec"]["containers"][0]
        engine.setdefault("readinessProbe", HEALTH)
        engine.setdefault("ports", [{"containerPort": 8000, "name": "http"}])
        engine["resources"] = {}  # the kwok nodes' GPUs are not what these tests are about
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    return path

@contextlib.contextmanager
def served(cluster: Cluster, helm: Helm, kubelet: ServingKubelet, values: Path, namespace: str,
           tmp_path: Path, backends: str = "http") -> Iterator[Served]:
    """VALUES installed as release svc in NAMESPACE, its pods run, its picker run as its Deployment runs it,
    and a gateway stand-in in front that calls the pods in BACKENDS' scheme."""
    spec = yaml.safe_load(values.read_text())
    pods = sum(r.get("replicas", 1) for r in spec["roles"] if r["componentType"] != "router")
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(values)
        manifest = {f"{o['kind']}/{o['metadata']['name']}": o for o in installed.manifest()}
        real = namespace in kubelet.real_engines  # vLLM's CPU build: minutes to start, two cores for them all
        ready_pods(cluster, namespace, pods + PICKERS, timeout=900 if real else 90)  # and the pickers' pods (kwok's)
        [deployment] = [o for key, o in manifest.items() if key.startswith("Deployment/")]
        [configmap] = [o for key, o in manifest.items() if key.startswith("ConfigMap/") and key.endswith("-epp")]
        account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
        kubeconfig = kubeconfig_for(cluster, namespace, account, tmp_path / "picker-kubeconfig")
        with running(deployment, configmap, namespace, kubeconfig, tmp_path, real_render=real) as picker:
            serving(picker)
            with gateway(picker.grpc, tmp_path, backends) as address:
                result = Served(installed, manifest, picker, address, kubelet, namespace, kubeconfig)
                eventually("a first answer through the gateway", lambda: result.ask("hello")[0] == 200,
                           describe=lambda: f"{result.ask('hello')}")
                yield result

RANDOM_CONFIG = """apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: random-picker
- type: single-profile-handler
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: random-picker
"""
"""The Inference Extension picker choosing at random: routing without any of the rendered scorers."""

@contextlib.contextmanager
def another_picker(service: Served, config: str, workdir: Path, offset: int = 100) -> Iterator[str]:
    """SERVICE's picker with CONFIG instead of its rendered configuration, on ports of its own, behind a
    gateway stand-in of its own: that gateway's address."""
    [deployment] = [o for key, o in service.manifest.items() if key.startswith("Deployment/")]
    [configmap] = [o for key, o in service.manifest.items() if key.startswith("ConfigMap/") and key.endswith("-epp")]
    workdir.mkdir(parents=True, exist_ok=True)
    mine = {**configmap, "data": {**configmap["data"], "config.yaml": config}}
    with running(deployment, mine, service.namespace, service.kubeconfig, workdir, offset=offset) as picker:
        serving(picker)
        with gateway(picker.grpc, workdir) as address:
            yield address
