"""Model sources and the model cache: what the expansion makes of spec.model, roles[].model and
spec.modelCache — the claim, the fetch Job, the serving pods that wait for and read the weights — and what
it refuses, by field."""

from __future__ import annotations

from typing import Any

import pytest

from fusion_helm import InvalidSpec
from fusion_helm.expand.cache import PROGRAM_SOURCE, Fetch, FetchJob
from tests.builders import SERVES_EVERYWHERE, every_bootstrap, render, role, service
from tests.expand import alone

COMMIT = "b968826d9c46dd6066d109eabc6255188de91218"
HUB = {"source": "hf://Qwen/Qwen3-8B", "revision": COMMIT, "credentials": {"secretName": "hf-token"}}
CACHE = {"size": "200Gi"}
FOLDER = f"/models/hf/Qwen/Qwen3-8B/{COMMIT}"
CONTAINER = "spec.roles[0].template.spec.containers[0]"


def engine_of(obj: dict[str, Any], template: str = "workerTemplate") -> dict[str, Any]:
    spec: dict[str, Any] = obj["spec"]["leaderWorkerTemplate"][template]["spec"]
    return spec


def jobs(objects: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [obj for key, obj in objects.items() if key.startswith("Job/")]


def test_a_hub_model_is_fetched_once_onto_the_cache_and_read_from_it() -> None:
    objects = render(service(role("chat", "worker", args=["--model", "Qwen/Qwen3-8B"]), model=HUB, modelCache=CACHE))
    claim = objects["PersistentVolumeClaim/svc-model-cache"]
    assert claim["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"}
    assert claim["spec"] == {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "200Gi"}}}
    assert objects["ConfigMap/svc-fetch"]["data"] == {"fetch.py": PROGRAM_SOURCE.read_text()}
    [job] = jobs(objects)
    fetch = job["spec"]["template"]["spec"]["containers"][0]
    assert fetch["image"] == "vllm/vllm-openai:v0.11.0"  # the serving image has the hub's client
    assert fetch["args"] == ["--source", "hf://Qwen/Qwen3-8B", "--revision", COMMIT, "--root", "/cache",
                             "--into", f"hf/Qwen/Qwen3-8B/{COMMIT}"]
    assert {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}}} in fetch["env"]
    assert job["spec"]["template"]["spec"]["automountServiceAccountToken"] is False  # it never reads the API
    assert fetch["resources"] == {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "4Gi"}}
    pod = engine_of(objects["LeaderWorkerSet/svc-chat-0"])
    serving = pod["containers"][0]
    assert serving["args"] == ["--model", FOLDER, "--served-model-name=Qwen/Qwen3-8B"]  # the name clients use, kept
    assert {"name": "HF_HUB_OFFLINE", "value": "1"} in serving["env"]
    assert not any(entry["name"] == "HF_TOKEN" for entry in serving["env"])  # only the Job reads the hub
    assert {"name": "fusioninfer-weights", "mountPath": "/models", "readOnly": True} in serving["volumeMounts"]
    [wait] = pod["initContainers"]
    assert wait["command"][-3:] == ["5", FOLDER, job["metadata"]["name"]]
    # Requests and limits stated: a namespace whose ResourceQuota asks every container for them takes the pod.
    assert set(wait["resources"]) == {"requests", "limits"} and all(
        set(wait["resources"][kind]) == {"cpu", "memory"} for kind in ("requests", "limits"))
    assert pod["volumes"] == [{"name": "fusioninfer-weights",
                               "persistentVolumeClaim": {"claimName": "svc-model-cache"}}]


def test_the_compile_caches_are_kept_per_engine_image() -> None:
    objects = render(service(role("chat", "worker"), model=HUB, modelCache=CACHE))
    serving = engine_of(objects["LeaderWorkerSet/svc-chat-0"])["containers"][0]
    [compile_cache] = [mount for mount in serving["volumeMounts"] if mount["mountPath"] == "/compile-cache"]
    assert compile_cache["subPath"].startswith("compile/vllm/vllm_vllm-openai_v0.11.0-")
    assert {entry["name"]: entry["value"] for entry in serving["env"] if entry["value"].startswith("/compile-cache")
            } == {"VLLM_CACHE_ROOT": "/compile-cache/vllm", "TRITON_CACHE_DIR": "/compile-cache/triton",
                  "TORCHINDUCTOR_CACHE_DIR": "/compile-cache/inductor"}
    without = render(service(role("chat", "worker"), model=HUB, modelCache={**CACHE, "compileCache": False}))
    serving = engine_of(without["LeaderWorkerSet/svc-chat-0"])["containers"][0]
    assert [mount["mountPath"] for mount in serving["volumeMounts"]] == ["/models"]


def test_a_fetch_job_is_named_for_what_it_runs() -> None:
    """A Job's pod template cannot change: a new revision or image is a new Job; the same spec, the same name."""
    def job_name(model: dict[str, Any], image: str = "vllm/vllm-openai:v0.11.0") -> str:
        [job] = jobs(render(service(role("chat", "worker", image=image), model=model, modelCache=CACHE)))
        return str(job["metadata"]["name"])

    first = job_name(HUB)
    assert first == job_name(HUB) and first.startswith("svc-fetch-")
    assert len({first, job_name({**HUB, "revision": "1" * 40}), job_name(HUB, "vllm/vllm-openai:v0.11.1")}) == 3


def test_the_fetch_pod_carries_the_annotations_given_for_it() -> None:
    """A mesh told to leave the fetch pod alone (a Job whose pod has a mesh's sidecar never completes)."""
    leave_out = {"sidecar.istio.io/inject": "false"}
    [job] = jobs(render(service(role("chat", "worker"), model=HUB,
                                modelCache={**CACHE, "fetch": {"podAnnotations": leave_out}})))
    assert job["spec"]["template"]["metadata"] == {"annotations": leave_out,
                                                   "labels": {"fusioninfer.io/fetches-for": "svc"}}


def test_roles_reading_one_source_share_its_job() -> None:
    objects = render(service(role("prefill", "prefiller"), role("decode"), model=HUB, modelCache=CACHE))
    assert len(jobs(objects)) == 1
    for lws in ("LeaderWorkerSet/svc-prefill-0", "LeaderWorkerSet/svc-decode-0"):
        assert engine_of(objects[lws])["containers"][0]["args"][:2] == ["--model", FOLDER]


def test_a_role_of_its_own_source_reads_it() -> None:
    draft = {"source": "s3://weights/models/draft", "revision": "v2"}
    objects = render(service(role("chat", "worker"), {**role("draft", "worker"), "model": draft}, model=HUB,
                             modelCache={"claimName": "shared-weights"}))
    assert "PersistentVolumeClaim/svc-model-cache" not in objects  # the named claim is used
    assert sorted(job["spec"]["template"]["spec"]["containers"][0]["args"][1] for job in jobs(objects)) == [
        "hf://Qwen/Qwen3-8B", "s3://weights/models/draft"]
    serving = engine_of(objects["LeaderWorkerSet/svc-draft-0"])["containers"][0]
    assert serving["args"] == ["--model", "/models/s3/weights/models/draft/v2", "--served-model-name=m"]


def test_weights_on_a_claim_are_read_where_they_are() -> None:
    objects = render(service(role("chat", "worker", args=["--port", "8000"]),
                             model={"source": "pvc://models/qwen/qwen3-8b"}))
    assert not jobs(objects) and "PersistentVolumeClaim/svc-model-cache" not in objects
    pod = engine_of(objects["LeaderWorkerSet/svc-chat-0"])
    assert pod["volumes"] == [{"name": "fusioninfer-weights",
                               "persistentVolumeClaim": {"claimName": "models", "readOnly": True}}]
    assert "initContainers" not in pod  # nothing to wait for
    assert pod["containers"][0]["args"] == ["--port", "8000", "--model=/models/qwen/qwen3-8b",
                                            "--served-model-name=qwen/qwen3-8b"]


def test_without_a_cache_the_engine_fetches_the_pinned_revision_itself() -> None:
    objects = render(service(role("chat", "worker", args=["Qwen/Qwen3-8B", "--revision", "main"],
                                  command=["vllm", "serve"]), model=HUB))
    serving = engine_of(objects["LeaderWorkerSet/svc-chat-0"])["containers"][0]
    assert serving["command"] + serving["args"] == ["vllm", "serve", "Qwen/Qwen3-8B", "--revision", COMMIT,
                                                    "--served-model-name=Qwen/Qwen3-8B"]
    # the hub's token a file of the engine's container, never its environment
    pod = engine_of(objects["LeaderWorkerSet/svc-chat-0"])
    assert {"name": "HF_TOKEN_PATH", "value": "/var/run/secrets/fusioninfer.io/hub/token"} in serving["env"]
    assert not [entry for entry in serving["env"] if "valueFrom" in entry]
    assert {"name": "hub-token", "secret": {"secretName": "hf-token", "items": [{"key": "token", "path": "token"}]}} \
        in pod["volumes"]
    assert {"name": "hub-token", "mountPath": "/var/run/secrets/fusioninfer.io/hub", "readOnly": True} in serving[
        "volumeMounts"]


def test_the_engines_own_spellings_are_rewritten() -> None:
    positional = role("chat", "worker", command=["vllm", "serve"], args=["Qwen/Qwen3-8B", "--served-model-name", "q"])
    sglang = role("sg", "worker", image="lmsysorg/sglang:v0.5.23", command=["python3", "-m", "sglang.launch_server"],
                  args=["--model-path", "Qwen/Qwen3-8B"])
    objects = render(service(positional, sglang, model=HUB, modelCache=CACHE))
    assert engine_of(objects["LeaderWorkerSet/svc-chat-0"])["containers"][0]["args"] == [
        FOLDER, "--served-model-name", "q"]  # the user's own name stands
    sglang_engine = engine_of(objects["LeaderWorkerSet/svc-sg-0"])["containers"][0]
    assert sglang_engine["args"] == ["--model-path", FOLDER, "--served-model-name=Qwen/Qwen3-8B"]
    assert "SGLANG_DG_CACHE_DIR" in {entry["name"] for entry in sglang_engine["env"]}


def test_every_pod_of_a_multi_node_replica_waits_for_and_reads_the_weights() -> None:
    roles = [r for r in every_bootstrap() if r["name"] != "custom"]
    objects = render(service(*roles, model=HUB, modelCache=CACHE))
    for spec in roles:
        lws = objects[f"LeaderWorkerSet/svc-{spec['name']}-0"]
        templates = ["workerTemplate"] + (["leaderTemplate"] if "leaderTemplate" in lws["spec"]["leaderWorkerTemplate"]
                                          else [])
        for template in templates:
            pod = engine_of(lws, template)
            assert [c["name"] for c in pod["initContainers"]][-1] == "wait-for-weights", (spec["name"], template)
            assert any(m["mountPath"] == "/models" for m in pod["containers"][0]["volumeMounts"])
            assert FOLDER in " ".join(pod["containers"][0].get("args") or []) or spec["name"] == "ray", (
                spec["name"], template, pod["containers"][0].get("args"))
    assert SERVES_EVERYWHERE in {r["name"] for r in roles}


@pytest.mark.parametrize(("spec", "field", "message"), [
    ({"model": {"source": "s3://weights/m"}}, "spec.model.source", "add spec.modelCache"),
    ({"model": {**HUB, "revision": "main"}}, "spec.model.revision", "40 hexadecimal digits"),
    ({"model": {"source": "pvc://c/m", "credentials": {"secretName": "x"}}}, "spec.model.credentials",
     "read where it is"),
    ({"model": HUB, "modelCache": {"claimName": "c", "size": "1Gi"}}, "spec.modelCache.size", "names one that exists"),
    ({"model": HUB, "modelCache": {"size": "lots"}}, "spec.modelCache.size", "a quantity such as 200Gi"),
    ({"model": HUB, "modelCache": {**CACHE, "fetch": {"resources": {"limits": {"cpu": "x"}}}}},
     "spec.modelCache.fetch.resources.limits.cpu", "not a quantity"),
    ({"model": HUB, "modelCache": {**CACHE, "fetch": {"podAnnotations": {"bad key!": "x"}}}},
     "spec.modelCache.fetch.podAnnotations", "key 'bad key!' is not a valid label or annotation key"),
])
def test_what_cannot_work_is_refused_by_field(spec: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(InvalidSpec) as raised:
        render(service(role("chat", "worker"), **spec))
    assert raised.value.path == field and message in str(raised.value), str(raised.value)


def test_a_command_naming_another_hub_model_than_the_source_is_refused() -> None:
    """8B weights served as "Qwen/Qwen3-32B" to clients asking for that; the same repository in other case
    letters is the hub's same model, and a name of no hub form (an alias) is the user's to give."""
    with pytest.raises(InvalidSpec) as raised:
        render(service(role("chat", "worker", args=["--model", "Qwen/Qwen3-32B"]), model=HUB))
    assert raised.value.path == f"{CONTAINER}.args[0]"
    assert "clients asking for Qwen/Qwen3-32B would be answered by Qwen/Qwen3-8B" in str(raised.value)
    for named in ("qwen/qwen3-8b", "chat-model"):
        assert render(service(role("chat", "worker", args=["--model", named]), model=HUB))


def test_a_pod_that_cannot_read_the_weights_is_refused_by_field() -> None:
    taken = role("chat", "worker", volumeMounts=[])
    taken["template"]["spec"]["volumes"] = [{"name": "fusioninfer-weights", "emptyDir": {}}]
    script = role("sh", "worker", command=["sh", "-c", 'exec vllm serve Qwen/Qwen3-8B "$@"'], args=[])
    custom = role("cpp", "worker", image="ghcr.io/ggml-org/llama.cpp:server", command=["/app/llama-server"],
                  args=["-m", "/m.gguf"])
    for spec, field in ((taken, "spec.roles[0].template.spec.volumes"),
                        (script, "spec.roles[0].template.spec.containers[0].command[2]"),
                        (custom, "spec.roles[0].template.spec.containers[0].command")):
        with pytest.raises(InvalidSpec) as raised:
            render(service(spec, model=HUB, modelCache=CACHE))
        assert raised.value.path == field, str(raised.value)


def test_streaming_load_is_the_engine_s_load_format() -> None:
    sglang = role("sg", "worker", image="lmsysorg/sglang:v0.5.23", command=["python3", "-m", "sglang.launch_server"],
                  args=["--model-path", "Qwen/Qwen3-8B", "--load-format", "auto"])
    objects = render(service(role("chat", "worker"), sglang, model={**HUB, "loadFormat": "runai_streamer"},
                             modelCache=CACHE))
    assert engine_of(objects["LeaderWorkerSet/svc-chat-0"])["containers"][0]["args"][-1] == \
        "--load-format=runai_streamer"
    assert engine_of(objects["LeaderWorkerSet/svc-sg-0"])["containers"][0]["args"][:4] == [
        "--model-path", FOLDER, "--load-format", "runai_streamer"]


ADAPTERS = [{"name": "sql", "source": "hf://org/qwen3-8b-sql-lora", "revision": "1" * 40},
            {"name": "legal", "source": "s3://adapters/legal", "revision": "v3"}]


ADAPTERS_IN = f"lora/svc/hf/Qwen/Qwen3-8B/{COMMIT}"
SGLANG = {"image": "lmsysorg/sglang:v0.5.23", "command": ["python3", "-m", "sglang.launch_server"],
          "args": ["--model-path", "Qwen/Qwen3-8B"]}


def env_of(container: dict[str, Any]) -> dict[str, str]:
    return {entry["name"]: entry.get("value") for entry in container["env"]}


def test_adapters_are_fetched_beside_their_model_and_placed_under_their_names() -> None:
    """Each adapter's Job places it, named as clients ask for it, in the folder its model's Job makes; vLLM
    loads it from there when first asked (its filesystem resolver), SGLang at start."""
    objects = render(service(role("chat", "worker"), role("sg", "worker", **SGLANG),
                             model={**HUB, "adapters": ADAPTERS}, modelCache=CACHE))
    fetching = {job["metadata"]["name"]: job["spec"]["template"]["spec"]["containers"][0]["args"][1::2]
                for job in jobs(objects)}
    base_job, sql_job, legal_job = sorted(fetching, key=lambda name: fetching[name][0])
    assert [fetching[name] for name in (base_job, sql_job, legal_job)] == [
        ["hf://Qwen/Qwen3-8B", COMMIT, "/cache", f"hf/Qwen/Qwen3-8B/{COMMIT}", ADAPTERS_IN],
        ["hf://org/qwen3-8b-sql-lora", "1" * 40, "/cache", f"hf/org/qwen3-8b-sql-lora/{'1' * 40}", FOLDER,
         f"{ADAPTERS_IN}/sql"],
        ["s3://adapters/legal", "v3", "/cache", "s3/adapters/legal/v3", FOLDER, f"{ADAPTERS_IN}/legal"]]
    vllm = engine_of(objects["LeaderWorkerSet/svc-chat-0"])
    assert vllm["containers"][0]["args"][-1] == "--enable-lora" and not any(
        "lora-modules" in word for word in vllm["containers"][0]["args"])
    env = env_of(vllm["containers"][0])
    assert (env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"], env["VLLM_LORA_RESOLVER_CACHE_DIR"]) == (
        "true", f"/models/{ADAPTERS_IN}")
    [wait] = vllm["initContainers"]
    assert wait["command"][5:] == [FOLDER, base_job, f"/models/{ADAPTERS_IN}", base_job]
    sglang = engine_of(objects["LeaderWorkerSet/svc-sg-0"])
    assert sglang["containers"][0]["args"][-4:] == [
        "--enable-lora", "--lora-paths", f"sql=/models/{ADAPTERS_IN}/sql", f"legal=/models/{ADAPTERS_IN}/legal"]
    assert "VLLM_LORA_RESOLVER_CACHE_DIR" not in env_of(sglang["containers"][0])
    [wait] = sglang["initContainers"]
    assert wait["command"][5:] == [FOLDER, base_job, f"/models/{ADAPTERS_IN}/sql", sql_job,
                                   f"/models/{ADAPTERS_IN}/legal", legal_job]


def test_adding_an_adapter_runs_a_job_and_changes_no_vllm_pod() -> None:
    """vLLM's replicas are untouched by a new adapter (its resolver loads it by name); SGLang's restart on it."""
    one, two = (render(service(role("chat", "worker"), role("sg", "worker", **SGLANG),
                               model={**HUB, "adapters": adapters}, modelCache=CACHE))
                for adapters in (ADAPTERS[:1], ADAPTERS))
    assert len(jobs(two)) == len(jobs(one)) + 1 and all(job in jobs(two) for job in jobs(one))
    assert one["LeaderWorkerSet/svc-chat-0"] == two["LeaderWorkerSet/svc-chat-0"]
    assert one["LeaderWorkerSet/svc-sg-0"] != two["LeaderWorkerSet/svc-sg-0"]


def test_prefill_and_decode_both_load_every_adapter() -> None:
    """A request for an adapter is prefilled and decoded with it: both roles resolve every adapter, from the
    same folder."""
    objects = render(service(role("prefill", "prefiller"), role("decode", "decoder"),
                             model={**HUB, "adapters": ADAPTERS}, modelCache=CACHE))
    for name in ("svc-prefill-0", "svc-decode-0"):
        serving = engine_of(objects[f"LeaderWorkerSet/{name}"])["containers"][0]
        assert "--enable-lora" in serving["args"], serving["args"]
        assert env_of(serving)["VLLM_LORA_RESOLVER_CACHE_DIR"] == f"/models/{ADAPTERS_IN}"


@pytest.mark.parametrize("env", [[{"name": "VLLM_PLUGINS", "value": "lora_filesystem_resolver, my_plugin"}],
                                 [{"name": "VLLM_ALLOW_RUNTIME_LORA_UPDATING", "value": "true"}]])
def test_an_environment_that_keeps_the_resolver_on_stands(env: list[dict[str, str]]) -> None:
    objects = render(service(role("chat", "worker", env=env), model={**HUB, "adapters": ADAPTERS}, modelCache=CACHE))
    serving = engine_of(objects["LeaderWorkerSet/svc-chat-0"])["containers"][0]
    assert serving["env"][:1] == env


@pytest.mark.parametrize(("model", "cache", "given", "field"), [
    ({**HUB, "adapters": ADAPTERS}, None, [], "spec.model.adapters"),
    ({"source": "pvc://weights/qwen", "adapters": ADAPTERS}, CACHE, [], "spec.model.adapters"),
    ({**HUB, "adapters": [{"name": "x", "source": "pvc://c/x"}]}, CACHE, [], "spec.model.adapters[0].source"),
    ({**HUB, "adapters": [ADAPTERS[0], {**ADAPTERS[1], "name": "sql"}]}, CACHE, [], "spec.model.adapters[1].name"),
    ({**HUB, "adapters": ADAPTERS}, CACHE, ["--lora-modules", "a=/x"], f"{CONTAINER}.args[2]"),
    ({**HUB, "adapters": ADAPTERS}, CACHE, ["--no-enable-lora"], f"{CONTAINER}.args[2]"),
    ({**HUB, "adapters": ADAPTERS}, CACHE, {"name": "VLLM_PLUGINS", "value": "my_plugin"}, f"{CONTAINER}.env[0]"),
    ({**HUB, "adapters": ADAPTERS}, CACHE, {"name": "VLLM_ALLOW_RUNTIME_LORA_UPDATING", "value": "0"},
     f"{CONTAINER}.env[0]"),
    ({**HUB, "adapters": ADAPTERS}, CACHE, {"name": "VLLM_LORA_RESOLVER_CACHE_DIR", "value": "/adapters"},
     f"{CONTAINER}.env[0]"),
    # Named like the served model (the builder's --model m): a request for it would reach the model.
    ({**HUB, "adapters": [{**ADAPTERS[0], "name": "m"}]}, CACHE, [], "spec.model.adapters[0].name"),
])
def test_adapters_that_cannot_be_loaded_are_refused_by_field(model: dict[str, Any], cache: dict[str, Any] | None,
                                                             given: list[str] | dict[str, str], field: str) -> None:
    """GIVEN: the engine's further arguments, or an entry of its environment."""
    spec = {"model": model, **({"modelCache": cache} if cache else {})}
    container = {"env": [given]} if isinstance(given, dict) else {"args": ["--model", "m", *given]}
    with pytest.raises(InvalidSpec) as raised:
        render(service(role("chat", "worker", **container), **spec))
    assert raised.value.path == field, str(raised.value)


@pytest.mark.parametrize("image", [{"containerPort": 0}, 2147483647, ""])
def test_a_serving_image_that_is_no_name_is_refused_by_field(image: Any) -> None:
    """The fetch Job, the wait and the compile cache's folder are the serving image's (found by the fuzzer)."""
    with pytest.raises(InvalidSpec) as raised:
        render(service(role("chat", "worker", image=image), model={**HUB, "adapters": ADAPTERS}, modelCache=CACHE))
    assert raised.value.path == f"{CONTAINER}.image", str(raised.value)


def test_the_stage_alone_reads_what_the_fetch_jobs_it_is_given_fetch() -> None:
    """The serving pods wait for the folder the fetch Job of the facts fills, named as that Job is; the
    stage's objects are the cache's claim, the program, and those Jobs as given."""
    service_model = alone.model(service(role("w", "worker"), model={"source": "hf://org/m", "revision": "a" * 40},
                                        modelCache={"size": "10Gi"}))
    [source] = {role.weights for role in service_model.roles}
    assert source is not None
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "made-by-hand"}, "spec": {}}
    facts = alone.facts(service_model, fetch_jobs=(FetchJob(Fetch(source), job),))
    pod = alone.pods("weights", facts)["w"].worker.template
    [wait] = pod["spec"]["initContainers"]
    assert wait["command"][-2:] == [f"/models/{source.cache_folder}", "made-by-hand"]
    assert [obj["kind"] for obj in alone.objects("weights", facts)] == ["PersistentVolumeClaim", "ConfigMap", "Job"]
    assert alone.objects("weights", facts)[-1] == job
