"""Weights fetched once onto a volume and served from it, on the control plane: a service installed with
helm 3 as a user installs it, its model a commit of a hub served on loopback (olah, tests/model_sources.py,
holding the suite's tiny model), its cache an existing claim (a PersistentVolume over a folder here). The
fetch Job's pod runs for real (tests/controlplane/hook_kubelet.py): the hub's own client, every file verified, into the
folder of its commit. The serving pod (tests/controlplane/serving.py) waits for that folder in its init container as
rendered, then the real vLLM CPU build serves the model from the volume, read-only at /models, under the name
the command gave. The serving pod has no hub address: were the engine to ask a hub, it would ask the
public one, which the suite's sandbox refuses and counts (tests/sandbox.py), failing the test.

The service has a LoRA adapter (made here) on the hub: its Job places it, named as clients ask for it,
beside the model, and the real vLLM serves a request through it, loaded by its filesystem resolver on
the first request. helm 4 adds a second adapter: its Job runs, no replica restarts, and the same engine
serves it.

Then helm 4 upgrades the service to the hub's next commit: a new Job fetches it beside the first, and the
replica restarts on it, ready from the volume; the time to Ready is printed. A second service on the same
claim has its model in an S3-compatible store (moto on loopback) and an adapter the hub does not have: the
store's Job fills its folder, and the service's status names the adapter's failure in the fetch's words."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml

from tests import engines, model_sources
from tests.controlplane.clients import completion
from tests.controlplane.cluster import Cluster, Release, eventually, ready, release
from tests.controlplane.hook_kubelet import CUSTOM, REAL_HOOKS, HookKubelet, hook_runner
from tests.controlplane.scenarios import HEALTH
from tests.controlplane.serving import SERVING, ServingKubelet
from tests.helm import Helm, make_helm
from tests.model_sources import Hub, files_of, put

# The service's NetworkPolicies enforced while it serves (tests/controlplane/network_policies.py).
pytestmark = [pytest.mark.engines, pytest.mark.usefixtures("network_policies")]

NAMESPACE = "weights"
CLAIM = "weights"
VOLUME = "fusioninfer-test-weights"
SERVED_NAME = "org/tiny"
NEXT_README = b"# tiny, the next commit\n"
STARTING = {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 2, "failureThreshold": 300}
"""vLLM's start on two cores, model load included: up to 10 minutes."""


def values(tmp_path: Path, hub: Hub, commit: str, adapters: dict[str, str]) -> Path:
    """The service serving COMMIT of the hub's model, with ADAPTERS (name: the commit of org/tiny-NAME)."""
    spec: dict[str, Any] = {
        "name": "tiny",
        "model": {"source": f"hf://{SERVED_NAME}", "revision": commit, "endpoint": hub.endpoint,
                  "credentials": {"secretName": "hub-token"},
                  "adapters": [{"name": name, "source": f"hf://{SERVED_NAME}-{name}", "revision": revision,
                                "endpoint": hub.endpoint, "credentials": {"secretName": "hub-token"}}
                               for name, revision in adapters.items()]},
        "modelCache": {"claimName": CLAIM, "fetch": {"podAnnotations": dict([CUSTOM])}},
        "roles": [{"name": "worker", "componentType": "worker", "replicas": 1, "template": {
            "metadata": {"annotations": SERVING},
            "spec": {"containers": [{
                "name": "vllm", "image": f"vllm/vllm-openai:v{engines.VERSIONS['VLLM_VERSION']}",
                # The tiny model's own dtype: the CPU build's bfloat16 path (its default for a float32
                # model) dies of SIGILL on some AVX-512 machines at the first request.
                "args": ["--model", SERVED_NAME, "--max-model-len", "256", "--enforce-eager", "--dtype", "float32"],
                "env": [{"name": "VLLM_CPU_KVCACHE_SPACE", "value": "1"}],
                "ports": [{"containerPort": 8000, "name": "http"}],
                "startupProbe": STARTING, "readinessProbe": HEALTH}]}}}],
        "hooks": {**REAL_HOOKS["hooks"], "statusWaitSeconds": 1},
    }
    path = tmp_path / f"values-{commit[:8]}-{len(adapters)}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.fixture
def claim(cluster: Cluster, tmp_path: Path) -> Iterator[Path]:
    """An existing claim in NAMESPACE, bound to a volume over a folder here (and the hub's token, the store's
    keys): the folder."""
    folder = tmp_path / "volume"
    folder.mkdir()
    cluster.control_plane.apply([
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": VOLUME}, "spec": {
            "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"], "storageClassName": "",
            "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": str(folder), "type": "Directory"},
            "claimRef": {"namespace": NAMESPACE, "name": CLAIM}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": CLAIM, "namespace": NAMESPACE},
         "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": VOLUME,
                  "resources": {"requests": {"storage": "1Gi"}}}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hub-token", "namespace": NAMESPACE},
         "stringData": {"token": "hf_test"}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "store-keys", "namespace": NAMESPACE},
         "stringData": {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}}])
    eventually("the claim bound", lambda: cluster.core.read_namespaced_persistent_volume_claim(
        CLAIM, NAMESPACE).status.phase == "Bound")
    try:
        yield folder
    finally:
        cluster.core.delete_namespaced_persistent_volume_claim(CLAIM, NAMESPACE)
        cluster.core.delete_persistent_volume(VOLUME)


def store_values(tmp_path: Path, endpoint: str, hub: Hub) -> Path:
    """A service of no replicas (its weights alone) whose model is in the store at ENDPOINT, with an adapter
    the hub does not have."""
    spec: dict[str, Any] = {
        "name": "tiny-store",
        "model": {"source": "s3://weights/models/tiny", "endpoint": endpoint,
                  "credentials": {"secretName": "store-keys"},
                  "adapters": [{"name": "missing", "source": "hf://org/missing", "revision": "1" * 40,
                                "endpoint": hub.endpoint}]},
        "modelCache": {"claimName": CLAIM, "fetch": {"podAnnotations": dict([CUSTOM]), "backoffLimit": 0}},
        "roles": [{"name": "worker", "componentType": "worker", "replicas": 0, "template": {"spec": {"containers": [{
            "name": "vllm", "image": f"vllm/vllm-openai:v{engines.VERSIONS['VLLM_VERSION']}",
            "args": ["--model", SERVED_NAME]}]}}}],
        "hooks": {**REAL_HOOKS["hooks"], "statusWaitSeconds": 1},
    }
    path = tmp_path / "values-store.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def fetch_status(cluster: Cluster, of: Release, tmp_path: Path) -> dict[str, Any] | None:
    """OF's WeightsReady condition, as the status hook writes it."""
    hook_runner(cluster, of, of.name, tmp_path / f"status-{of.name}")("status")
    service = next(o for o in cluster.custom(("fusioninfer.io", "v1alpha1", "inferenceservices"), NAMESPACE)
                   if o["metadata"]["name"] == of.name)
    return next((c for c in (service.get("status") or {}).get("conditions") or [] if c["type"] == "WeightsReady"),
                None)


def serving_pod(cluster: Cluster) -> kubernetes.client.V1Pod | None:
    pods = [pod for pod in cluster.pods(NAMESPACE) if "fusioninfer.io/role-name" in (pod.metadata.labels or {})
            and pod.metadata.deletion_timestamp is None]
    return pods[0] if len(pods) == 1 else None


def completed_job(cluster: Cluster, kubelet: HookKubelet, commit: str) -> str:
    """The name of the Job that fetched COMMIT (a revision, or a source), once it has completed."""
    def done() -> str | None:
        for job in kubernetes.client.BatchV1Api(cluster.api).list_namespaced_job(NAMESPACE).items:
            if commit in job.spec.template.spec.containers[0].args and (job.status.succeeded or 0) == 1:
                return str(job.metadata.name)
        return None

    def said() -> str:
        return "; ".join(f"{key}: {result.returncode} {result.stderr[-500:]}" for key, result in kubelet.ran.items()
                         if "-fetch-" in key)
    return eventually(f"the Job fetching {commit} complete", done, timeout=180, describe=said)


def engine_process(kubelet: ServingKubelet, pod: kubernetes.client.V1Pod) -> tuple[list[str], dict[str, str]]:
    """The serving engine's command line and environment, as its process has them."""
    [served] = [p for p in kubelet.served(NAMESPACE) if p.key.endswith(pod.metadata.name)]
    pid = served.processes["vllm"].pid
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")[:-1]
    return [word.decode() for word in cmdline], dict(entry.decode().partition("=")[::2] for entry in environ)


def asked(pod: kubernetes.client.V1Pod, model: str = SERVED_NAME) -> tuple[int, dict[str, Any]]:
    status, _, answer = completion(f"{pod.status.pod_ip}:8000", {"model": model, "prompt": "hello world the",
                                                                  "max_tokens": 5, "temperature": 0}, timeout=120)
    return status, answer


def ask(pod: kubernetes.client.V1Pod, model: str = SERVED_NAME) -> dict[str, Any]:
    status, answer = asked(pod, model)
    assert status == 200, answer
    assert answer["model"] == model, answer
    return answer


def adapter_repository(hub: Hub, tmp_path: Path, name: str, seed: int) -> str:
    """A LoRA adapter of the tiny model, made here (its weights drawn from SEED), on the hub as
    org/tiny-NAME: its commit."""
    files = files_of(engines.tiny_adapter(tmp_path / f"adapter-{name}", SERVED_NAME, seed))
    return hub.repository(f"{SERVED_NAME}-{name}", {"adapter_config.json": files["adapter_config.json"]},
                          {"adapter_model.safetensors": files["adapter_model.safetensors"]})


def test_weights_are_fetched_once_onto_a_volume_and_a_real_vllm_serves_them_with_the_hub_off(
        cluster: Cluster, hook_kubelet: HookKubelet, serving_kubelet: ServingKubelet, claim: Path,
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    helm3: Helm = make_helm(3, tmp_path_factory.mktemp("weights-helm3"))
    helm4: Helm = make_helm(4, tmp_path_factory.mktemp("weights-helm4"))
    model = files_of(engines.tiny_model(tmp_path / "tiny"))
    serving_kubelet.real_engines.add(NAMESPACE)
    try:
        hub = model_sources.unserved_hub(tmp_path / "hub")
        first = hub.repository(SERVED_NAME, {k: v for k, v in model.items() if not k.endswith(".safetensors")},
                               {k: v for k, v in model.items() if k.endswith(".safetensors")})
        second = hub.commit(SERVED_NAME, {"README.md": NEXT_README})
        sql, chat = (adapter_repository(hub, tmp_path, name, seed) for name, seed in (("sql", 1), ("chat", 2)))
        adapters = claim / "lora" / "tiny" / "hf" / SERVED_NAME
        with release(cluster, helm3, "tiny", NAMESPACE) as installed:
            # Installed while the hub does not answer yet: the serving pod waits for the weights, its engine
            # not started (without the wait it would start on a folder that is not there).
            installed.install(values(tmp_path, hub, first, {"sql": sql}))
            waiting = eventually("the serving pod waiting for the weights", lambda: next(
                (p for p in serving_kubelet.served(NAMESPACE) if "wait-for-weights" in p.processes
                 and "waiting for /models/hf/org/tiny/" in p.log("wait-for-weights")), None))
            assert "vllm" not in waiting.processes and not (claim / "hf").exists()
            with model_sources.serve(hub):
                # Fetched once, whole and verified, into its commit's folder; nothing half-written left.
                job = completed_job(cluster, hook_kubelet, first)
                assert files_of(claim / "hf" / SERVED_NAME / first) == model
                # Its lock left, and nothing half-fetched.
                assert (claim / ".partial" / "hf" / SERVED_NAME / f"{first}.lock").is_file()
                assert [p for p in (claim / ".partial").rglob("*") if p.is_file() and p.suffix != ".lock"] == []
                tries = [out for key, out in hook_kubelet.ran.items() if key.startswith(f"{NAMESPACE}/{job}-")]
                assert "each verified" in tries[-1].stdout.splitlines()[-2], tries[-1]
                assert tries[-1].stdout.splitlines()[-1] == \
                    f"its adapters are placed in lora/tiny/hf/{SERVED_NAME}/{first}"
                for failed in tries[:-1]:  # a pod that found no hub: one line, the Job's next pod retried
                    assert failed.stderr.strip().splitlines()[-1].startswith(
                        f"cannot fetch hf://{SERVED_NAME} at {first}: ConnectError"), failed.stderr

                # The serving pod waited for the folder, then the engine serves from the volume, offline.
                pod = eventually("the serving pod Ready", lambda: (p := serving_pod(cluster)) and ready(p)
                                 and p, timeout=660)
                argv, env = engine_process(serving_kubelet, pod)
                assert argv[argv.index("--model") + 1] == f"/models/hf/{SERVED_NAME}/{first}"
                assert env["HF_HUB_OFFLINE"] == "1" and "HF_TOKEN" not in env and "HF_ENDPOINT" not in env
                answer = ask(pod)
                assert answer["model"] == SERVED_NAME and answer["usage"]["completion_tokens"] == 5, answer
                with urllib.request.urlopen(f"http://{pod.status.pod_ip}:8000/v1/models", timeout=10) as listed:
                    assert [m["id"] for m in yaml.safe_load(listed.read())["data"]] == [SERVED_NAME]
                assert (claim / "compile" / "vllm").is_dir()  # the compile cache's folder of this image

                # The adapter, placed under its name for this commit of its base, served through the engine's
                # resolver on the first request for it: its own answer, not the model's.
                completed_job(cluster, hook_kubelet, sql)
                assert set(files_of(adapters / first / "sql")) == {"adapter_config.json", "adapter_model.safetensors"}
                assert "--lora-modules" not in argv and env["VLLM_LORA_RESOLVER_CACHE_DIR"] == \
                    f"/models/lora/tiny/hf/{SERVED_NAME}/{first}"
                adapted = ask(pod, "sql")
                assert adapted["choices"][0]["text"] != answer["choices"][0]["text"], (adapted, answer)
                [served] = [p for p in serving_kubelet.served(NAMESPACE) if p.key.endswith(pod.metadata.name)]
                assert "Resolved and loaded LoRA adapter 'sql' using FilesystemResolver" in served.log("vllm")

                # helm 4 adds an adapter: its Job places it, and the same engine, not restarted, serves it.
                Release(cluster, helm4, "tiny", NAMESPACE).install(values(tmp_path, hub, first, {"sql": sql,
                                                                                                 "chat": chat}),
                                                                   verb="upgrade")
                completed_job(cluster, hook_kubelet, chat)
                assert ask(pod, "chat")["choices"][0]["text"] not in (adapted["choices"][0]["text"],
                                                                       answer["choices"][0]["text"])
                again = serving_pod(cluster)
                assert again is not None and again.metadata.uid == pod.metadata.uid and ready(again)
                assert served.processes["vllm"].poll() is None and engine_process(serving_kubelet, pod)[0] == argv

                # The status the hooks write says so.
                hook_runner(cluster, installed, "tiny", tmp_path / "status")("status")
                service = cluster.custom(("fusioninfer.io", "v1alpha1", "inferenceservices"), NAMESPACE)[0]
                [weights] = [c for c in service["status"]["conditions"] if c["type"] == "WeightsReady"]
                assert (weights["status"], weights["reason"]) == ("True", "WeightsFetched"), weights

                # helm 4 upgrades to the next commit: fetched beside the first, and the replica restarts on it.
                upgraded_at = time.monotonic()
                Release(cluster, helm4, "tiny", NAMESPACE).install(values(tmp_path, hub, second, {"sql": sql}),
                                                                   verb="upgrade")
                completed_job(cluster, hook_kubelet, second)
                fetched_at = time.monotonic()
                assert files_of(claim / "hf" / SERVED_NAME / first) == model  # the first commit kept as it was
                assert files_of(claim / "hf" / SERVED_NAME / second) == {**model, "README.md": NEXT_README}
                pod = eventually("the replica Ready on the next commit", lambda: (p := serving_pod(cluster))
                                 and ready(p) and p.metadata.uid != pod.metadata.uid and p, timeout=660)
                ready_at = time.monotonic()
                argv, _ = engine_process(serving_kubelet, pod)
                assert argv[argv.index("--model") + 1] == f"/models/hf/{SERVED_NAME}/{second}"
                assert ask(pod)["model"] == SERVED_NAME
                # The adapter placed anew for the next commit (its config names the base the engine serves).
                eventually("the adapter served on the next commit", lambda: asked(pod, "sql")[0] == 200, timeout=120)
                assert (adapters / second / "sql").is_dir()
                print(f"\nhelm upgrade to the next commit: fetched {fetched_at - upgraded_at:.1f} s after it began, "
                      f"the replica Ready on it from the volume after {ready_at - upgraded_at:.1f} s")

                # A second service on the claim: its model from an S3-compatible store (moto on loopback) with
                # keys from a Secret, an adapter from a repository the hub does not have. The store's Job
                # fetches beside the hub's; the adapter's fails, and the status says why in its own words.
                store_release = Release(cluster, helm4, "tiny-store", NAMESPACE)  # its pods go with the first's
                with model_sources.store(tmp_path) as endpoint:
                    put(endpoint, "weights", b"")
                    for name, content in model.items():
                        put(endpoint, f"weights/models/tiny/{name}", content)
                    try:
                        store_release.install(store_values(tmp_path, endpoint, hub))
                        completed_job(cluster, hook_kubelet, "s3://weights/models/tiny")
                        assert files_of(claim / "s3" / "weights" / "models" / "tiny" / "current") == model
                        status = eventually("the adapter's fetch failed", lambda: (s := fetch_status(
                            cluster, store_release, tmp_path)) and s["reason"] == "FetchFailed" and s)
                        assert status["status"] == "False", status
                        assert f"cannot fetch hf://org/missing at {'1' * 40}: not found on {hub.endpoint}: " \
                               "neither the repository nor that revision of it" in status["message"], status
                    finally:
                        if store_release.exists():
                            store_release.uninstall()
    finally:
        serving_kubelet.real_engines.discard(NAMESPACE)
