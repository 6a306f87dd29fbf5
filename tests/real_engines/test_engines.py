"""The engines themselves read what we render: each bootstrap's leader and worker command lines go
through the real engine's own argument parser (vLLM's CPU build, SGLang) at the pinned releases
(ci/engines/versions.env), and a real vLLM started from the rendered commands serves a completion — a
replica of two pods joined by vLLM's own multi-node launch — its processes on loopback addresses with the
environment LWS gives each pod. (One pod serving from the model cache, on the control plane:
tests/controlplane/test_cluster_weights.py.)"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fusion_helm import parse_inference_service
from fusion_helm.expand import expand
from fusion_helm.expand.generations import GENERATIONS
from fusion_helm.model.engine_flags import API_SERVER_ONLY, OPTIONS, Engine
from tests import engines
from tests.builders import SERVES_EVERYWHERE, every_bootstrap, service
from tests.helm import VALUES

pytestmark = pytest.mark.engines

LEADER_ADDRESS = "engines-0.engines.llm"
MULTI_NODE_EXAMPLES = ["story3-multinode-deepseek-r1.yaml", "story4-pd-multinode-deepseek-r1.yaml",
                       "wide-ep-pd-deepseek-r1.yaml", "sglang-multinode-deepseek-r1.yaml"]


def pods(obj: dict[str, Any]) -> Iterator[tuple[str, int, int, dict[str, Any]]]:
    """(role, worker index, pods per replica, serving container) of one replica of each role."""
    for made in expand(parse_inference_service(obj)):
        if made["kind"] != "LeaderWorkerSet":
            continue
        template = made["spec"]["leaderWorkerTemplate"]
        role = made["metadata"]["labels"]["fusioninfer.io/role-name"]
        size = template["size"]
        leader = template.get("leaderTemplate", template["workerTemplate"])
        yield role, 0, size, leader["spec"]["containers"][0]
        for index in range(1, size):
            yield role, index, size, template["workerTemplate"]["spec"]["containers"][0]


def lws_env(index: int, size: int) -> dict[str, str]:
    return {"LWS_LEADER_ADDRESS": LEADER_ADDRESS, "LWS_GROUP_SIZE": str(size), "LWS_WORKER_INDEX": str(index)}


def server_argv(container: dict[str, Any], index: int, size: int, recorder: Path) -> list[str] | None:
    """The server's argv as the pod runs it: its bootstrap script run by a real /bin/sh with LWS's
    variables, up to the `exec` of the server (recorded, not run); None for a pod that starts no server."""
    command, args = container.get("command") or ["vllm", "serve"], container.get("args") or []
    if command[:2] != ["/bin/sh", "-c"]:
        return [*command, *args]
    if command[3] == "ray-worker":
        return None
    if command[3] == "ray-leader":  # its script waits for Ray, then runs exactly ARGS (tests/expand/test_bootstrap.py)
        return args
    result = subprocess.run([*command, *args], capture_output=True, timeout=30,
                            env={"PATH": f"{recorder}:/usr/bin:/bin", **lws_env(index, size)})
    assert result.returncode == 0, result.stderr
    return result.stdout.decode().split("\0")[:-1]


SERVERS = {("vllm", "serve"): "vllm", ("python3", "-m", "sglang.launch_server"): "sglang"}


def parsed_by_the_engines(lines: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Each named server argv, as its engine's own parser reads it."""
    by_engine: dict[str, list[tuple[str, list[str]]]] = {}
    for name, argv in lines.items():
        [(prefix, engine)] = [(p, e) for p, e in SERVERS.items() if tuple(argv[:len(p)]) == p]
        by_engine.setdefault(engine, []).append((name, argv[len(prefix):]))
    venvs = {"vllm": engines.built(engines.VLLM), "sglang": engines.built(engines.SGLANG)}
    out = {}
    for engine, named in by_engine.items():
        for (name, _), answer in zip(named, engines.parse(venvs[engine], engine, [argv for _, argv in named]),
                                     strict=True):
            out[name] = answer
    return out


def command_lines(obj: dict[str, Any], recorder: Path) -> dict[str, list[str]]:
    return {f"{role}/{index}": argv for role, index, size, container in pods(obj)
            if (argv := server_argv(container, index, size, recorder)) is not None}


def test_every_bootstrap_s_commands_are_what_the_engines_take(recorder: Path) -> None:
    lines = {name: argv for name, argv in command_lines(service(*every_bootstrap()), recorder).items()
             if not name.startswith("custom/")}  # llama.cpp's programs, as written
    parsed = parsed_by_the_engines(lines)
    refused = {name: answer["error"] for name, answer in parsed.items() if not answer["ok"]}
    assert refused == {}
    got = {name: answer["args"] for name, answer in parsed.items()}
    assert got["ray/0"]["distributed_executor_backend"] == "ray"
    assert {k: got["vllm/1"][k] for k in ("nnodes", "node_rank", "master_addr", "master_port", "headless")} == {
        "nnodes": 2, "node_rank": 1, "master_addr": LEADER_ADDRESS, "master_port": 29501, "headless": True}
    assert (got["vllm/0"]["node_rank"], got["vllm/0"]["headless"]) == (0, False)
    for name, start, headless in (("dp/0", None, False), ("dp/1", 1, True)):
        assert {k: got[name][k] for k in ("data_parallel_size", "data_parallel_size_local", "data_parallel_address",
                                          "data_parallel_rpc_port", "data_parallel_start_rank", "headless",
                                          "data_parallel_hybrid_lb")} == {
            "data_parallel_size": 2, "data_parallel_size_local": 1, "data_parallel_address": LEADER_ADDRESS,
            "data_parallel_rpc_port": 29550, "data_parallel_start_rank": start, "headless": headless,
            "data_parallel_hybrid_lb": False}
    for index in (0, 1):
        hybrid = got[f"{SERVES_EVERYWHERE}/{index}"]
        assert (hybrid["data_parallel_hybrid_lb"], hybrid["data_parallel_start_rank"], hybrid["headless"]) == (
            True, index, False)
        assert {k: got[f"sglang/{index}"][k] for k in ("dist_init_addr", "nnodes", "node_rank", "tp_size")} == {
            "dist_init_addr": f"{LEADER_ADDRESS}:20000", "nnodes": 2, "node_rank": index, "tp_size": 2}


@pytest.mark.parametrize("example", MULTI_NODE_EXAMPLES)
def test_the_multi_node_examples_are_what_the_engines_take(recorder: Path, example: str) -> None:
    values = yaml.safe_load((VALUES / example).read_text())
    obj = {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
           "metadata": {"name": values["name"]}, "spec": {k: v for k, v in values.items() if k != "name"}}
    parsed = parsed_by_the_engines(command_lines(obj, recorder))
    assert {name: answer.get("error") for name, answer in parsed.items() if not answer["ok"]} == {}
    assert parsed, "a server starts on some pod"


def test_a_flag_the_engine_does_not_take_fails_the_check(recorder: Path) -> None:
    """The check can fail: an unknown flag, and what SGLang was given before it had a bootstrap of its
    own (the Ray bootstrap's --distributed-executor-backend ray)."""
    roles = every_bootstrap()
    vllm = next(role for role in roles if role["name"] == "vllm")
    vllm["template"]["spec"]["containers"][0]["args"].append("--no-such-flag")
    sglang = next(role for role in roles if role["name"] == "sglang")
    sglang["multinode"]["bootstrap"] = "ray"
    lines = command_lines(service(vllm, sglang), recorder)
    parsed = parsed_by_the_engines({name: lines[name] for name in ("vllm/0", "vllm/1", "sglang/0")})
    assert parsed["vllm/0"] == {"ok": False, "error": "vllm: error: unrecognized arguments: --no-such-flag",
                                "exit_code": 2}
    assert not parsed["vllm/1"]["ok"]
    assert not parsed["sglang/0"]["ok"]
    assert "unrecognized arguments: --distributed-executor-backend ray" in parsed["sglang/0"]["error"]


# A real vLLM serving from the rendered commands.

POD_ADDRESSES = ["127.245.0.1", "127.245.0.2"]
"""Each pod's own loopback address (LWS_LEADER_ADDRESS is the leader's)."""
PORT = 8000
MACHINE_ENV = {"HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", "VLLM_TARGET_DEVICE": "cpu"}
"""What this test machine sets for any engine it runs: nothing is fetched, nothing reported."""


def serving_service(model: Path) -> dict[str, Any]:
    """A replica of two pods, one node each."""
    container = {"name": "vllm", "image": "vllm/vllm-openai:v0.27.1",
                 "args": [str(model), "--host", POD_ADDRESSES[0], "--port", str(PORT), "--max-model-len", "256",
                          "--enforce-eager", "--tensor-parallel-size", str(len(POD_ADDRESSES))],
                 "env": [{"name": "VLLM_CPU_KVCACHE_SPACE", "value": "1"},
                         {"name": "VLLM_HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
                 "ports": [{"containerPort": PORT, "name": "http"}]}
    role: dict[str, Any] = {"name": "engine", "componentType": "worker", "template": {"spec": {
        "containers": [container]}}, "multinode": {"nodeCount": len(POD_ADDRESSES)}}
    return {**service(role), "metadata": {"name": "engines", "namespace": "llm"}}


def container_env(container: dict[str, Any], address: str) -> dict[str, str]:
    """The container's env as the kubelet resolves it (values, and the pod's IP from the downward API)."""
    env = {}
    for entry in container.get("env") or []:
        source = (entry.get("valueFrom") or {}).get("fieldRef", {}).get("fieldPath")
        assert "value" in entry or source == "status.podIP", entry
        env[entry["name"]] = entry.get("value", address)
    return env


def start_pods(obj: dict[str, Any], workdir: Path) -> list[subprocess.Popen[bytes]]:
    started = []
    for role, index, size, container in pods(obj):
        command = container.get("command") or ["vllm", "serve"]
        log = (workdir / f"{role}-{index}.log").open("wb")
        env = {**os.environ, **MACHINE_ENV, **container_env(container, POD_ADDRESSES[index]), **lws_env(index, size),
               "LWS_LEADER_ADDRESS": POD_ADDRESSES[0], "PATH": f"{engines.VLLM / 'bin'}:/usr/bin:/bin",
               "VLLM_CPU_OMP_THREADS_BIND": str(index % (os.cpu_count() or 1))}  # a core each, as two machines
        started.append(subprocess.Popen([*command, *(container.get("args") or [])], env=env, stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True, cwd=workdir))
    return started


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def completion(processes: list[subprocess.Popen[bytes]], workdir: Path, timeout: float = 900) -> dict[str, Any]:
    """The leader's answer to /v1/completions, once /health answers."""
    deadline = time.monotonic() + timeout
    url = f"http://{POD_ADDRESSES[0]}:{PORT}"
    while True:
        exited = [p.args for p in processes if p.poll() is not None]
        assert not exited, f"exited: {exited}\n" + "\n".join(
            log.read_text()[-3000:] for log in sorted(workdir.glob("*.log")))
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=5) as answer:
                if answer.status == 200:
                    break
        except OSError:
            pass
        assert time.monotonic() < deadline, "no /health within the bound:\n" + "\n".join(
            log.read_text()[-3000:] for log in sorted(workdir.glob("*.log")))
        time.sleep(1)
    request = urllib.request.Request(f"{url}/v1/completions", method="POST", headers={
        "Content-Type": "application/json"}, data=json.dumps({
            "model": str(workdir / "model"), "prompt": "hello world the", "max_tokens": 5, "temperature": 0}).encode())
    with urllib.request.urlopen(request, timeout=120) as answer:
        body: dict[str, Any] = json.loads(answer.read())
        return body


@pytest.fixture
def pod_names(tmp_path: Path) -> Iterator[None]:
    """The pods' addresses named in /etc/hosts, as a cluster's DNS names pods, in IPv4 and in the
    IPv4-mapped IPv6 form torch's rendezvous reports a peer in (it looks the peer's name up for a log
    line, which would otherwise ask the machine's name server); 127.0.0.1 too, the source address of
    every connection on one machine. The hosts file is the sandbox's own (a mount namespace of its own,
    tests/sandbox.py): the machine's is untouched."""
    names = {address: f"engines-0-{index}.engines.llm" for index, address in enumerate(POD_ADDRESSES)}
    hosts = tmp_path / "hosts"
    lines = [f"{address} {name}\n::ffff:{address} {name}\n" for address, name in names.items()]
    hosts.write_text(Path("/etc/hosts").read_text() + "".join(lines) + "::ffff:127.0.0.1 localhost\n")
    subprocess.run(["mount", "--bind", str(hosts), "/etc/hosts"], check=True)
    try:
        yield
    finally:
        subprocess.run(["umount", "/etc/hosts"], check=True)


def test_a_real_vllm_serves_from_the_rendered_commands_across_two_pods(tmp_path: Path, pod_names: None) -> None:
    engines.built(engines.VLLM)
    model = engines.tiny_model(tmp_path / "model")
    obj = serving_service(model)
    rendered = list(pods(obj))
    assert len(rendered) == 2
    assert rendered[0][3]["command"][3] == "vllm-leader" and rendered[1][3]["command"][3] == "vllm-worker"
    processes = start_pods(obj, tmp_path)
    try:
        answer = completion(processes, tmp_path)
        with urllib.request.urlopen(f"http://{POD_ADDRESSES[0]}:{PORT}/metrics", timeout=10) as scraped:
            exposition = scraped.read().decode()
    finally:
        stop(processes)
    [choice] = answer["choices"]
    assert choice["text"] and answer["usage"]["completion_tokens"] == 5
    # What every picker generation scores by, under the names the router gives it, vLLM emits.
    emitted = {line.split("{")[0].split(" ")[0] for line in exposition.splitlines() if not line.startswith("#")}
    read = {metric for generation in GENERATIONS.values() for metric in generation.engine_metrics}
    assert read - {"vllm:lora_requests_info"} <= emitted, read - emitted  # LoRA info: with --enable-lora only


# The spellings the expansion reads, and the flags a headless worker is started without, held to the
# engines' own parsers and vLLM's own launch path.

@pytest.fixture(scope="module")
def engine_options() -> dict[Engine, dict[str, dict[str, Any]]]:
    return {Engine.VLLM: engines.options(engines.built(engines.VLLM), "vllm"),
            Engine.SGLANG: engines.options(engines.built(engines.SGLANG), "sglang")}


def test_every_option_the_expansion_reads_is_spelled_as_the_engines_parsers_spell_it(
        engine_options: dict[Engine, dict[str, dict[str, Any]]]) -> None:
    for name, option in OPTIONS.items():
        for engine, spellings in option.spellings.items():
            action = engine_options[engine].get(spellings[0])
            assert action is not None, f"{name}: {engine} has no {spellings[0]}"
            assert (set(action["spellings"]), action["takes_value"]) == (set(spellings), option.takes_value), name


def test_vllm_reads_underscores_for_dashes_and_sglang_does_not() -> None:
    """What the reader's spelling rules say of each engine (model/engine.py), by the engines themselves."""
    [vllm] = engines.parse(engines.built(engines.VLLM), "vllm", [[
        "m", "--kv_transfer_config.kv_connector", "NixlConnector", "--kv-transfer_config.kv_role=kv_both",
        "--data_parallel_size_local=2", "-n2", "--node_rank", "1"]])
    assert vllm["ok"], vllm
    assert (vllm["args"]["data_parallel_size_local"], vllm["args"]["nnodes"], vllm["args"]["node_rank"]) == (2, 2, 1)
    [sglang] = engines.parse(engines.built(engines.SGLANG), "sglang", [["--model-path", "m", "--node_rank", "1"]])
    assert not sglang["ok"] and "unrecognized arguments: --node_rank" in sglang["error"]


def sample(action: dict[str, Any]) -> list[str]:
    """A value vLLM's parser takes for most of the API server's options (a count, a port, a size)."""
    return ["2"] if action["takes_value"] else []


DATA_PARALLEL = ["m", "--data-parallel-size", "4", "--data-parallel-size-local", "2", "--data-parallel-address",
                 "127.0.0.1", "--data-parallel-rpc-port", "29550"]
LEADER = DATA_PARALLEL
HEADLESS_WORKER = [*DATA_PARALLEL, "--headless", "--data-parallel-start-rank", "2"]


def test_the_api_server_s_options_a_headless_worker_is_started_without_are_those_vllm_refuses_there(
        engine_options: dict[Engine, dict[str, dict[str, Any]]]) -> None:
    """Every option of vLLM's API server, given with the same value to a leader serving every rank and to a
    headless worker: those the leader's launch takes and the worker's refuses (or takes elsewhere than a
    headless node's engines) are exactly API_SERVER_ONLY."""
    frontend = {action["spellings"][0]: action for action in engine_options[Engine.VLLM].values()
                if action["frontend"] and action["spellings"][0] not in ("--headless", "--config")}
    tried = sorted(frontend)
    answers = engines.launch([[*base, name, *sample(frontend[name])] for base in (LEADER, HEADLESS_WORKER)
                              for name in tried])  # one vLLM import for all
    leaders, workers = answers[:len(tried)], answers[len(tried):]
    taken = {name for name, leader in zip(tried, leaders, strict=True) if leader["ok"]}
    refused = {name for name, worker in zip(tried, workers, strict=True)
               if name in taken and (not worker["ok"] or worker["launch"] != "headless")}
    assert refused == {option.spellings[Engine.VLLM][0] for option in API_SERVER_ONLY}
    # The options whose sample a leader refuses too are not tried so: a few that take a file, a JSON value,
    # a choice or another option with them.
    assert len(tried) - len(taken) < len(tried) // 5, sorted(set(tried) - taken)


def test_kserve_s_api_server_count_reaches_the_leader_and_spares_the_headless_workers(recorder: Path) -> None:
    """KServe's data-parallel leaders run --api-server-count 8; vLLM refuses it on a worker started
    --headless. The bootstrap leaves it out of the workers' argv, in either form a manifest gives it."""
    in_template = next(r for r in every_bootstrap() if r["name"] == "dp")
    in_template["template"]["spec"]["containers"][0]["args"] += ["--api-server-count", "8"]
    as_leader_args = copy.deepcopy(in_template)
    as_leader_args["name"] = "leader-args"
    as_leader_args["template"]["spec"]["containers"][0]["args"] = ["m", "--enable-expert-parallel"]
    as_leader_args["multinode"]["leaderArgs"] = ["--api_server_count=8"]
    script = copy.deepcopy(as_leader_args)
    script["name"] = "script"
    script["template"]["spec"]["containers"][0].update(
        command=["/bin/bash", "-c", 'export VLLM_LOGGING_LEVEL=INFO; exec vllm serve "$@"', "--"],
        args=["m", "--enable-expert-parallel"])
    lines = command_lines(service(in_template, as_leader_args, script), recorder)
    answers = dict(zip(lines, engines.launch([argv[2:] for argv in lines.values()]), strict=True))
    for role in ("dp", "leader-args", "script"):
        assert (answers[f"{role}/0"]["launch"], answers[f"{role}/0"]["args"]["api_server_count"]) == (
            "api-servers", 8), answers[f"{role}/0"]
        assert answers[f"{role}/1"]["launch"] == "headless", answers[f"{role}/1"]
    # Without the bootstrap leaving it out, vLLM's launch path refuses the worker.
    [unprotected] = engines.launch([[*lines["dp/1"][2:], "--api-server-count", "8"]])
    assert unprotected == {"ok": False, "error": "ValueError: --api-server-count=8 cannot be used with --headless "
                                                 "(no API servers are started in headless mode)."}


def test_an_engine_that_downloads_reads_the_hub_token_from_its_file(tmp_path: Path) -> None:
    """The hub's token reaches the engine as a file (HF_TOKEN_PATH), and the engines' own huggingface_hub reads
    it there; without the file it has none (no token in the environment to fall back on)."""
    obj = service({"name": "chat", "componentType": "worker", "template": {"spec": {"containers": [
        {"name": "vllm", "image": "vllm/vllm-openai:v0.11.0", "command": ["vllm", "serve"], "args": []}]}}},
        model={"source": "hf://Qwen/Qwen3-8B", "revision": "a" * 40, "credentials": {"secretName": "hf-token"}})
    [(_, _, _, container)] = list(pods(obj))
    [mount] = [mount for mount in container["volumeMounts"] if mount["name"] == "hub-token"]
    env = {entry["name"]: entry["value"] for entry in container["env"]}
    assert "HF_TOKEN" not in env
    # the volume's folder, here: the Secret's key at the path the engine is told
    folder = tmp_path / mount["mountPath"].lstrip("/")
    token_path = Path(env["HF_TOKEN_PATH"].replace(mount["mountPath"], str(folder)))
    read = ["-c", "from huggingface_hub import get_token; print(get_token())"]
    python = str(engines.built(engines.VLLM) / "bin" / "python")

    def engine_token() -> str:
        clean = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env, "HF_TOKEN_PATH": str(token_path)}
        return subprocess.run([python, *read], env=clean, capture_output=True, text=True, check=True).stdout.strip()

    assert engine_token() == "None"
    folder.mkdir(parents=True)
    token_path.write_text("hf_secret\n")
    assert engine_token() == "hf_secret"
