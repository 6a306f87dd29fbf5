"""Hook Jobs that really run on the test control plane.

kwok leaves alone the pods annotated ``kwok.x-k8s.io/status: custom`` (its
``--disregard-status-with-annotation-selector``); for those, this runner does a kubelet's part: once the
scheduler has bound a pod, it lays out the pod's ConfigMap volume, runs its container's command — the
chart's standard-library Python, by this interpreter without site-packages — as the pod's
ServiceAccount against the API server, and writes the pod's phase and exit code, from which the Job
controller marks the Job complete or failed and Helm goes on or stops. A chart opts its hook pods in
with ``hooks.podAnnotations`` (``REAL_HOOKS``); other pods stay kwok's.

A Job's pod whose container runs its image's ``python3`` (the fetch Job's, annotated through
``modelCache.fetch.podAnnotations``) runs by the interpreter here that has what a serving image has for it,
with its volumes at their paths and its env as the kubelet sets it (tests/controlplane/kubelet.py); its termination
message is what it wrote there.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubernetes
import yaml

from tests.controlplane import kubelet
from tests.controlplane.cluster import Cluster, Release
from tests.controlplane.processes import TOKEN
from tests.engines import SOURCES, built
from tests.helm import ROOT

CUSTOM = ("kwok.x-k8s.io/status", "custom")
SERVICE_LABEL = "fusioninfer.io/service"
BBR_LABEL = ("app.kubernetes.io/name", "fusioninfer-bbr")
"""The shared Gateway's body-based router's pods (charts/fusioninfer-bbr)."""
MODELS_LABEL = ("app.kubernetes.io/name", "fusioninfer-gateway-models")
"""The shared Gateway's /v1/models pods (charts/fusioninfer-bbr)."""
REAL_HOOKS = {"hooks": {"podAnnotations": {CUSTOM[0]: CUSTOM[1]}, "ttlSecondsAfterFinished": 3}}
"""Values that have the chart's hook Jobs run for real here (a failed one gone soon after)."""


def hook_environment(cluster: Cluster, namespace: str, account: str | None, into: Path) -> dict[str, str]:
    """What a pod of ACCOUNT sees: the API server's address, and the account's token and CA (ACCOUNT
    None: the control plane's admin)."""
    mounted = into / "serviceaccount"
    mounted.mkdir(parents=True, exist_ok=True)
    token = TOKEN if account is None else cluster.control_plane.kubectl(
        "create", "token", account, "--namespace", namespace).stdout
    (mounted / "token").write_text(token)
    assert cluster.control_plane.ca is not None
    (mounted / "ca.crt").write_bytes(cluster.control_plane.ca.read_bytes())
    return {"PATH": "/usr/bin:/bin", "KUBERNETES_SERVICE_HOST": "127.0.0.1",
            "KUBERNETES_SERVICE_PORT": str(cluster.control_plane.ports["apiserver"]),
            "FUSION_HOOK_SERVICEACCOUNT_DIR": str(mounted)}


class HookKubelet(threading.Thread):
    """Runs the pods annotated ``kwok.x-k8s.io/status: custom``; keeps what each printed."""

    def __init__(self, cluster: Cluster, workdir: Path) -> None:
        super().__init__(daemon=True)
        self.cluster, self.workdir = cluster, workdir
        self.ran: dict[str, subprocess.CompletedProcess[str]] = {}
        """namespace/pod → what its container printed and returned."""
        self.done = threading.Event()
        self.lock = threading.Lock()

    def outputs(self, namespace: str) -> list[subprocess.CompletedProcess[str]]:
        with self.lock:
            return [result for key, result in self.ran.items() if key.startswith(f"{namespace}/")]

    def run(self) -> None:
        while not self.done.is_set():
            try:
                self._watch()
            except Exception as error:  # a watch broken off, a call refused: noted, and resumed as a kubelet does
                with (self.workdir / "kubelet.log").open("a") as log:
                    log.write(f"{_now()} {error!r}\n")
                time.sleep(0.5)

    def _watch(self) -> None:
        """Five seconds of the pods' events (a watch without a resource version begins with every pod)."""
        watch = kubernetes.watch.Watch()
        for event in watch.stream(self.cluster.core.list_pod_for_all_namespaces, timeout_seconds=5):
            pod = event["object"]
            if (pod.metadata.annotations or {}).get(CUSTOM[0]) != CUSTOM[1] or event["type"] == "DELETED" \
                    or serving_pod(pod):  # tests/controlplane/serving.py runs those
                continue
            key = f"{pod.metadata.namespace}/{pod.metadata.name}"
            if pod.metadata.deletion_timestamp is not None:  # no kubelet confirms it: the runner does
                self._forget(pod)
            elif pod.spec.node_name and key not in self.ran and (pod.status.phase or "Pending") == "Pending":
                with self.lock:
                    self.ran[key] = subprocess.CompletedProcess([], -1, "", "running")
                threading.Thread(target=self._run_pod, args=(pod, key), daemon=True).start()
            if self.done.is_set():
                watch.stop()

    def stop(self) -> None:
        self.done.set()
        self.join(15)

    def _forget(self, pod: kubernetes.client.V1Pod) -> None:
        try:
            self.cluster.core.delete_namespaced_pod(pod.metadata.name, pod.metadata.namespace, grace_period_seconds=0)
        except kubernetes.client.ApiException as error:
            if error.status != 404:
                raise

    def _run_pod(self, pod: kubernetes.client.V1Pod, key: str) -> None:
        [container] = pod.spec.containers
        directory = self.workdir / key.replace("/", "_")
        directory.mkdir(parents=True, exist_ok=True)
        logs = self._logs_file(pod, container.name, directory)
        started = _now()
        self._status(pod, "Running", {"running": {"startedAt": started}}, started)
        timeout = pod.spec.active_deadline_seconds or 300
        try:
            if container.command[0] == "python3":
                result, said = self._run_image_program(pod, directory, timeout)
            else:
                result, said = self._run_hook(pod, directory, timeout), ""
        except subprocess.TimeoutExpired as expired:
            result, said = subprocess.CompletedProcess([], 137, str(expired.stdout or ""), "deadline exceeded"), ""
        except Exception as error:  # the runner could not start it (a volume it cannot lay out): the pod fails
            result, said = subprocess.CompletedProcess([], 128, "", f"not started here: {error!r}"), ""
        with self.lock:
            self.ran[key] = result
        finished = _now()
        logs.write_text("".join(f"{finished} {stream} F {line}\n" for stream, text in (
            ("stdout", result.stdout), ("stderr", result.stderr)) for line in text.splitlines()))
        terminated = {"exitCode": result.returncode, "reason": "Completed" if result.returncode == 0 else "Error",
                      "startedAt": started, "finishedAt": finished}
        if said:
            terminated["message"] = said
        elif result.returncode != 0 and container.termination_message_policy == "FallbackToLogsOnError":
            # a kubelet's, for a container that wrote no termination message: the log's last 80 lines, at
            # most 2048 bytes
            tail = "\n".join((result.stdout + result.stderr).splitlines()[-80:]).encode()[-2048:]
            terminated["message"] = tail.decode(errors="ignore")
        self._status(pod, "Succeeded" if result.returncode == 0 else "Failed", {"terminated": terminated}, started)

    def _run_hook(self, pod: kubernetes.client.V1Pod, directory: Path, timeout: float
                  ) -> subprocess.CompletedProcess[str]:
        """A hook Job's container: the chart's standard-library Python, by this interpreter without
        site-packages, its ConfigMap laid out where its arguments name it."""
        namespace, spec = pod.metadata.namespace, pod.spec
        [container] = spec.containers
        mount = next(m for m in container.volume_mounts if m.name == spec.volumes[0].name)
        configmap = self.cluster.core.read_namespaced_config_map(spec.volumes[0].config_map.name, namespace).data
        for item in spec.volumes[0].config_map.items:
            (directory / item.path).parent.mkdir(parents=True, exist_ok=True)
            (directory / item.path).write_text(configmap[item.key])
        python, *argv = [*container.command, *(container.args or [])]
        assert python == "python", container.command  # the image's; here this interpreter
        argv = [arg.replace(f"{mount.mount_path}/", f"{directory}/") for arg in argv]
        workdir = directory / Path(container.working_dir).relative_to(mount.mount_path)
        env = hook_environment(self.cluster, namespace, spec.service_account_name, directory)
        return subprocess.run([sys.executable, "-S", "-E", *argv], env=env, text=True, capture_output=True,
                              cwd=workdir, timeout=timeout)

    def _run_image_program(self, pod: kubernetes.client.V1Pod, directory: Path, timeout: float
                           ) -> tuple[subprocess.CompletedProcess[str], str]:
        """A container running its image's ``python3`` (the fetch Job's: a serving image, which has the hub's
        client and the object store's): the interpreter here that has those (tests/engines.py SOURCES), with
        the pod's volumes at their paths and its env as the kubelet sets it; what it printed, and its
        termination message."""
        spec = self.cluster.api.sanitize_for_serialization(pod)["spec"]
        [container] = spec["containers"]
        folders = kubelet.volumes(self.cluster.core, pod.metadata.namespace, spec, directory)
        env = kubelet.environment(self.cluster.core, pod, "127.0.0.1", container)
        termination = directory / "termination-log"
        argv = kubelet.in_mounts(container, folders, termination, [
            str(built(SOURCES) / "bin" / "python"), *container["command"][1:], *(container.get("args") or [])])
        result = subprocess.run(argv, env={"PATH": "/usr/bin:/bin", **env}, text=True, capture_output=True,
                                timeout=timeout)
        return result, termination.read_text()

    def _logs_file(self, pod: kubernetes.client.V1Pod, container: str, directory: Path) -> Path:
        """Where the container's log goes, in the CRI format, named to kwok by a Logs object the pod owns:
        kwok serves it as the pod's node would (`kubectl logs`, Helm's hook output)."""
        path = directory / f"{container}.log"
        path.write_text("")
        kubernetes.client.CustomObjectsApi(self.cluster.api).create_namespaced_custom_object(
                "kwok.x-k8s.io", "v1alpha1", pod.metadata.namespace, "logs", {
            "apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Logs",
            "metadata": {"name": pod.metadata.name, "ownerReferences": [{
                "apiVersion": "v1", "kind": "Pod", "name": pod.metadata.name, "uid": pod.metadata.uid}]},
            "spec": {"logs": [{"containers": [container], "logsFile": str(path)}]}})
        return path

    def _status(self, pod: kubernetes.client.V1Pod, phase: str, state: dict[str, Any], started: str) -> None:
        [container] = pod.spec.containers
        self.cluster.core.patch_namespaced_pod_status(pod.metadata.name, pod.metadata.namespace, {"status": {
            "phase": phase, "startTime": started, "containerStatuses": [{
                "name": container.name, "image": container.image, "imageID": "", "ready": phase == "Running",
                "restartCount": 0, "started": phase == "Running", "state": state}]}})


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def hook_runner(cluster: Cluster, installed: Release, service: str, tmp_path: Path
                ) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run a hook Job of INSTALLED as the Job would — its ConfigMap laid out as its volume, its service
    account's token, a Python without site-packages — against the API server: run("status", *extra)."""
    namespace = installed.namespace
    hooks = [o for o in yaml.safe_load_all(installed.run("get", "hooks", installed.name)) if o]
    # Hook objects are deleted once their phase succeeds: lay the RBAC and code out again as rendered.
    cluster.control_plane.apply([{**o, "metadata": {**o["metadata"], "namespace": o["metadata"].get(
        "namespace", namespace)}} for o in hooks if o["kind"] != "Job"])
    jobs = {o["metadata"]["name"]: o["spec"]["template"]["spec"] for o in hooks if o["kind"] == "Job"}
    configmap = cluster.core.read_namespaced_config_map(f"{service}-hooks", namespace).data
    env = hook_environment(cluster, namespace, f"{service}-hooks", tmp_path)

    def run(job: str, *extra: str, service_spec: dict[str, Any] | None = None) -> subprocess.CompletedProcess[str]:
        """The Job JOB (check, status) with EXTRA arguments; SERVICE_SPEC, if given, in place of the spec
        the chart rendered."""
        spec = jobs[f"{service}-hooks-{job}"]
        mounted = tmp_path / job
        for item in spec["volumes"][0]["configMap"]["items"]:
            (mounted / item["path"]).parent.mkdir(parents=True, exist_ok=True)
            (mounted / item["path"]).write_text(configmap[item["key"]])
        if service_spec is not None:
            (mounted / "spec.json").write_text(json.dumps(service_spec))
        [container], [mount] = spec["containers"], spec["containers"][0]["volumeMounts"]
        python, *args = [*container["command"], *container["args"], *extra]
        assert python == "python"  # the image's; here this interpreter, without site-packages
        args = [arg.replace(f"{mount['mountPath']}/", f"{mounted}/") for arg in args]
        return subprocess.run([sys.executable, "-S", "-E", *args], env=env, text=True, capture_output=True,
                              cwd=mounted / Path(container["workingDir"]).relative_to(mount["mountPath"]), timeout=120)
    return run


def run_check(cluster: Cluster, tmp_path: Path, spec: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """The chart's check hook for a service of SPEC, as its Job runs it: this repository's package (what the
    ConfigMap carries), by a Python without site-packages, as the control plane's admin."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    env = hook_environment(cluster, "default", None, tmp_path)
    return subprocess.run([sys.executable, "-S", "-E", "-m", "fusion_helm.programs.check",
                           "--spec", str(tmp_path / "spec.json")],
                          cwd=ROOT, env=env, text=True, capture_output=True, timeout=120)


def serving_pod(pod: kubernetes.client.V1Pod) -> bool:
    """A pod tests/controlplane/serving.py runs: a service's, or a shared Gateway's (its body-based router's, its
    /v1/models')."""
    labels = pod.metadata.labels or {}
    return SERVICE_LABEL in labels or any(labels.get(key) == value for key, value in (BBR_LABEL, MODELS_LABEL))
