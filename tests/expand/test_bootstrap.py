"""Each multi-node bootstrap's commands, run through a real /bin/sh with the variables LWS sets in a
pod: every word of the server's argv reaches it unchanged, the per-pod flags are computed from LWS's
variables, and the Ray scripts wait and retry as vLLM's multi-node-serving.sh does. (What the engines
make of the flags, their own parsers check: tests/real_engines/test_engines.py.)"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from fusion_helm.errors import InvalidSpec
from fusion_helm.expand import bootstrap
from fusion_helm.model.bootstrap import Bootstrap, DataParallel, MultiNode
from fusion_helm.model.engine import ServerCommand, server_command
from tests.builders import SCRAPED_FROM_MONITORING, render, role, service

ARGS = [
    "--model", "deepseek-ai/DeepSeek-R1",
    "--kv-transfer-config", '{"kv_connector":"NixlConnector","kv_role":"kv_both"}',
    "--served-model-name", "name with spaces", "it's quoted", "$HOME", "`id`", "a;b && c", "$(id)", "",
]
LWS_ENV = {"LWS_LEADER_ADDRESS": "svc-0.svc.llm", "LWS_GROUP_SIZE": "4"}


def server(*words: str) -> ServerCommand:
    """A serving container's command line of WORDS (the engine's, in exec form)."""
    return server_command({"command": list(words)}, (), "test", "container")


def leader_command(multinode: MultiNode, *words: str) -> bootstrap.Command:
    return bootstrap.leader(multinode, server(*words)).command


def worker_command(multinode: MultiNode, *words: str) -> bootstrap.Command:
    launch = bootstrap.worker(multinode, server(*words))
    return launch.command if launch is not None else bootstrap.ray_worker(multinode)


def run(command: bootstrap.Command, path: Path, worker_index: int, **env: str) -> list[str]:
    result = subprocess.run([*command.command, *command.args], capture_output=True, timeout=30, env={
        "PATH": f"{path}:/usr/bin:/bin", **LWS_ENV, "LWS_WORKER_INDEX": str(worker_index), **env})
    assert result.returncode == 0, result.stderr
    return result.stdout.decode().split("\0")[:-1]


def test_vllm_native_launch(recorder: Path) -> None:
    multinode = MultiNode(Bootstrap.VLLM, 29501)
    common = ["--nnodes", "4", "--master-addr", "svc-0.svc.llm", "--master-port", "29501"]
    leader = run(leader_command(multinode, "vllm", "serve", *ARGS), recorder, 0)
    worker = run(worker_command(multinode, "vllm", "serve", *ARGS), recorder, 3)
    assert leader == ["vllm", "serve", *ARGS, "--master-port", "29501", "--nnodes", "4", "--node-rank", "0",
                      "--master-addr", "svc-0.svc.llm"]
    assert worker == ["vllm", "serve", *ARGS, "--master-port", "29501", "--headless", "--nnodes", "4",
                      "--node-rank", "3", "--master-addr", "svc-0.svc.llm"]
    assert set(common) <= set(leader)


@pytest.mark.parametrize("hybrid", [False, True])
def test_vllm_data_parallel_ranks_follow_the_worker_index(recorder: Path, hybrid: bool) -> None:
    multinode = MultiNode(Bootstrap.VLLM_DATA_PARALLEL, 5555, DataParallel(8, hybrid))
    leader = run(leader_command(multinode, "vllm", "serve", *ARGS), recorder, 0)
    worker = run(worker_command(multinode, "vllm", "serve", *ARGS), recorder, 2)
    common = ["--data-parallel-size-local", "8", "--data-parallel-rpc-port", "5555"]
    computed = ["--data-parallel-size", "32", "--data-parallel-address", "svc-0.svc.llm"]
    if hybrid:
        assert leader == ["vllm", "serve", *ARGS, *common, "--data-parallel-hybrid-lb", *computed,
                          "--data-parallel-start-rank", "0"]
        assert worker == ["vllm", "serve", *ARGS, *common, "--data-parallel-hybrid-lb", *computed,
                          "--data-parallel-start-rank", "16"]
    else:  # the leader serves every rank; a start rank, even 0, would put it in hybrid mode
        assert leader == ["vllm", "serve", *ARGS, *common, *computed]
        assert worker == ["vllm", "serve", *ARGS, *common, "--headless", *computed, "--data-parallel-start-rank", "16"]


def test_sglang_joins_at_the_leader_s_dist_init_address(recorder: Path) -> None:
    multinode = MultiNode(Bootstrap.SGLANG, 20000)
    serve = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "16", *ARGS]
    for index, command in ((0, leader_command(multinode, *serve)), (1, worker_command(multinode, *serve))):
        assert run(command, recorder, index) == [*serve, "--dist-init-addr", "svc-0.svc.llm:20000",
                                                 "--nnodes", "4", "--node-rank", str(index)]


# The Ray bootstrap: `ray` below answers as the head would after some failed attempts, and `python3`
# counts the nodes that joined. Both record what they were asked.

def ray_cluster(path: Path, failures: int, nodes: list[int]) -> Path:
    """A `ray` whose first FAILURES joins fail; `python3` reports NODES alive, one answer per call."""
    (path / "attempts").write_text("")
    (path / "ray").write_text(f"""#!/bin/sh
echo "$*" >> {path}/ray.log
[ "$1 $2" = "start --head" ] && exit 0
echo x >> {path}/attempts
[ "$(wc -l < {path}/attempts)" -gt {failures} ]
""")
    (path / "alive").write_text("".join(f"{n}\n" for n in nodes))
    (path / "python3").write_text(f"""#!/bin/sh
case "$1" in -c) head -n1 {path}/alive; sed -i 1d {path}/alive; exit 0;; esac
printf "%s\\0" python3 "$@"
""")
    for name in ("ray", "python3"):
        (path / name).chmod(0o755)
    return path


def no_sleep(path: Path) -> None:
    (path / "sleep").write_text("#!/bin/sh\nexit 0\n")
    (path / "sleep").chmod(0o755)


def test_the_ray_head_starts_the_server_once_every_node_joined(tmp_path: Path) -> None:
    path = ray_cluster(tmp_path, 0, [1, 2, 3, 4])
    no_sleep(path)
    command = leader_command(MultiNode(Bootstrap.RAY, 6379), "python3", "-m", "vllm.x", *ARGS)
    assert run(command, path, 0) == ["python3", "-m", "vllm.x", *ARGS, "--distributed-executor-backend", "ray"]
    assert (path / "ray.log").read_text() == "start --head --port=6379\n"
    assert (path / "alive").read_text() == "", "asked until all 4 nodes were alive"


def test_the_ray_head_gives_up_when_a_node_never_joins(tmp_path: Path) -> None:
    path = ray_cluster(tmp_path, 0, [3] * 1000)
    no_sleep(path)
    (path / "date").write_text(f"#!/bin/sh\necho x >> {path}/clock; wc -l < {path}/clock\n")  # a second a call
    (path / "date").chmod(0o755)
    command = leader_command(MultiNode(Bootstrap.RAY, 6379), "vllm", "serve")
    result = subprocess.run([*command.command, *command.args], capture_output=True, text=True, timeout=30, env={
        "PATH": f"{path}:/usr/bin:/bin", **LWS_ENV, "LWS_WORKER_INDEX": "0"})
    assert result.returncode == 1
    assert "not every one of the replica's 4 nodes joined within 300 s" in result.stderr


def test_a_ray_worker_retries_until_the_head_answers(tmp_path: Path) -> None:
    path = ray_cluster(tmp_path, 3, [])
    no_sleep(path)
    run(worker_command(MultiNode(Bootstrap.RAY, 6379), "vllm", "serve"), path, 1)
    assert (path / "ray.log").read_text() == 'start --address=svc-0.svc.llm:6379 --block\n' * 4


def test_a_ray_worker_gives_up_after_its_bound(tmp_path: Path) -> None:
    path = ray_cluster(tmp_path, 10**6, [])
    no_sleep(path)
    (path / "date").write_text(f"#!/bin/sh\necho x >> {path}/clock; expr $(wc -l < {path}/clock) \\* 60\n")
    (path / "date").chmod(0o755)
    command = worker_command(MultiNode(Bootstrap.RAY, 6379))
    result = subprocess.run(command.command, capture_output=True, text=True, timeout=30, env={
        "PATH": f"{path}:/usr/bin:/bin", **LWS_ENV, "LWS_WORKER_INDEX": "1"})
    assert result.returncode == 1
    assert "the head at svc-0.svc.llm:6379 took no node within 300 s" in result.stderr
    assert 3 <= len((path / "ray.log").read_text().splitlines()) <= 6


def test_an_explicit_executor_backend_is_not_overridden() -> None:
    for given in (["--distributed-executor-backend", "mp"], ["--distributed-executor-backend=mp"]):
        command = leader_command(MultiNode(Bootstrap.RAY, 6379), "vllm", "serve", *given)
        assert command.args == ["vllm", "serve", *given]


# The bootstrap a multi-node role gets, and what it refuses.

def leader_and_worker(obj: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    [lws] = [o for o in render(obj).values() if o["kind"] == "LeaderWorkerSet"]
    template = lws["spec"]["leaderWorkerTemplate"]
    return template["leaderTemplate"]["spec"]["containers"][0], template["workerTemplate"]["spec"]["containers"][0]


@pytest.mark.parametrize("image,chosen", [
    ("vllm/vllm-openai:v0.11.0", "ray"),
    ("docker.io/vllm/vllm-openai:v0.18.1", "ray"),
    ("vllm/vllm-openai:v0.19.0", "vllm"),
    ("registry.example/mirror/vllm/vllm-openai:v0.27.1-cu128", "vllm"),
    ("vllm/vllm-openai:0.32.0@sha256:" + "0" * 64, "vllm"),
    ("lmsysorg/sglang:v0.5.23-cu129", "sglang"),
])
def test_the_default_bootstrap_follows_the_image(image: str, chosen: str) -> None:
    leader, _ = leader_and_worker(service(role("a", "worker", nodes=2, image=image)))
    assert leader["command"][3] == f"{chosen}-leader"


def test_an_sglang_server_command_implies_sglang() -> None:
    leader, worker = leader_and_worker(service(role(
        "a", "worker", nodes=2, image="registry.example/team/engine:7",
        command=["python3", "-m", "sglang.launch_server"], args=["--model-path", "m"])))
    assert leader["command"][3] == "sglang-leader" and worker["command"][3] == "sglang-worker"
    assert leader["args"] == worker["args"] == ["python3", "-m", "sglang.launch_server", "--model-path", "m"]
    assert {"containerPort": 20000} in leader["ports"] and "ports" not in worker


@pytest.mark.parametrize("image", ["vllm/vllm-openai:latest", "vllm/vllm-openai@sha256:" + "0" * 64,
                                   "registry.example/team/engine:7"])
def test_an_image_that_does_not_say_needs_a_bootstrap(image: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        render(service(role("a", "worker", nodes=2, image=image)))
    assert error.value.path == "spec.roles[0].multinode.bootstrap"
    assert "choose ray (the image has Ray: vLLM before 0.19), vllm (vLLM's own multi-node launch), " \
           "vllm-data-parallel, sglang or custom" in str(error.value)


def test_one_node_needs_no_bootstrap() -> None:
    objects = render(service(role("a", "worker", image="registry.example/team/engine:7")))
    [lws] = [o for o in objects.values() if o["kind"] == "LeaderWorkerSet"]
    assert lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["args"] == ["--model", "m"]


def test_every_node_serves_under_hybrid_load_balancing() -> None:
    serving = role("a", "worker", nodes=2, image="vllm/vllm-openai:v0.27.1", ports=[{"containerPort": 8000}],
                   readinessProbe={"httpGet": {"path": "/health", "port": 8000}})
    serving["multinode"].update(bootstrap="vllm-data-parallel",
                                dataParallel={"ranksPerNode": 4, "hybridLoadBalancing": True})
    leader, worker = leader_and_worker(service(serving))
    assert worker["ports"] == [{"containerPort": 8000}] and "readinessProbe" in worker
    assert leader["ports"] == [{"containerPort": 8000}, {"containerPort": 29550}]


def data_parallel(*args: str, hybrid: bool = False, **multinode: Any) -> dict[str, Any]:
    """A role of vLLM data-parallel engines on 2 nodes, the leader serving every rank unless HYBRID."""
    spec = role("a", "worker", nodes=2, image="vllm/vllm-openai:v0.32.0", args=["m", *args])
    spec["multinode"].update(bootstrap="vllm-data-parallel",
                             dataParallel={"ranksPerNode": 8, "hybridLoadBalancing": hybrid}, **multinode)
    return spec


@pytest.mark.parametrize("given", [["--api-server-count", "8"], ["--api_server_count=8"], ["-asc", "8"],
                                   ["-asc=8"]])
def test_headless_workers_start_without_the_api_server_s_own_flags(given: list[str]) -> None:
    """KServe's data-parallel leaders run several API servers (--api-server-count 8); vLLM refuses that flag
    on a headless worker, which starts none (tests/real_engines/test_engines.py: by vLLM's own launch path)."""
    leader, worker = leader_and_worker(service(data_parallel(*given)))
    assert leader["args"][:4] == ["vllm", "serve", "m", *given][:4]
    assert given[0] in leader["args"] and "--headless" not in leader["args"]
    assert given[0] not in worker["args"] and "--headless" in worker["args"]
    # Where every node serves, every node runs API servers: nothing is left out.
    leader, worker = leader_and_worker(service(data_parallel(*given, hybrid=True)))
    assert given[0] in worker["args"] and given[0] in leader["args"]


def test_leader_and_worker_args_go_to_their_own_pods() -> None:
    leader, worker = leader_and_worker(service(data_parallel(
        "--max-model-len", "4096", leaderArgs=["--api-server-count", "4", "--enable-log-requests"],
        workerArgs=["--enable-dbo"])))
    assert leader["args"][:7] == ["vllm", "serve", "m", "--max-model-len", "4096", "--api-server-count", "4"]
    assert "--enable-log-requests" in leader["args"] and "--enable-dbo" not in leader["args"]
    assert worker["args"][:6] == ["vllm", "serve", "m", "--max-model-len", "4096", "--enable-dbo"]
    assert "--api-server-count" not in worker["args"]


def test_a_script_s_own_api_server_flag_cannot_be_left_out_of_headless_workers() -> None:
    spec = data_parallel()
    spec["template"]["spec"]["containers"][0].update(
        command=["/bin/bash", "-c", 'source "$BASH_ENV"; exec vllm serve m --api-server-count 8 "$@"'], args=[])
    with pytest.raises(InvalidSpec) as error:
        render(service(spec))
    assert error.value.path == "spec.roles[0].template.spec.containers[0].command[2]"
    assert "the script gives --api-server-count, which vLLM refuses on a headless worker (it starts no API " \
           "server); give it as an argument of the script instead" in str(error.value)


def test_a_script_that_execs_its_engine_gets_the_bootstrap_s_flags_as_its_arguments(recorder: Path) -> None:
    """Manifests that source a network set-up first (llm-d's wide-EP, KServe's presets) start the engine from a
    script: the bootstrap's flags, leader-only ones included, reach it through its "$@"."""
    script = 'export NCCL_DEBUG=WARN; exec vllm serve "$MODEL" --max-model-len ${LEN-4096} "$@"'
    spec = data_parallel(leaderArgs=["--api-server-count", "2"])
    # As KServe's presets run theirs: "--" the script's name ($0), the user's flags its arguments.
    spec["template"]["spec"]["containers"][0].update(command=["/bin/bash", "-c", script, "--"],
                                                     args=["--enforce-eager"])
    leader, worker = leader_and_worker(service(spec))
    lws = {**LWS_ENV, "LWS_GROUP_SIZE": "2", "MODEL": "m"}
    path = f"{recorder}:/usr/bin:/bin"
    ran = [subprocess.run([*pod["command"], *pod["args"]], capture_output=True, timeout=30, check=True, env={
        "PATH": path, **lws, "LWS_WORKER_INDEX": str(index)}).stdout.decode().split("\0")[:-1]
        for index, pod in ((0, leader), (1, worker))]
    assert ran[0] == ["vllm", "serve", "m", "--max-model-len", "4096", "--enforce-eager", "--api-server-count", "2",
                      "--data-parallel-size-local", "8", "--data-parallel-rpc-port", "29550",
                      "--data-parallel-size", "16", "--data-parallel-address", "svc-0.svc.llm"]
    assert ran[1] == ["vllm", "serve", "m", "--max-model-len", "4096", "--enforce-eager",
                      "--data-parallel-size-local", "8", "--data-parallel-rpc-port", "29550", "--headless",
                      "--data-parallel-size", "16", "--data-parallel-address", "svc-0.svc.llm",
                      "--data-parallel-start-rank", "8"]


def test_custom_runs_both_templates_as_written() -> None:
    leader = role("a", "worker", nodes=3, image="nvcr.io/nvidia/tritonserver:25.01-trtllm-python-py3",
                  command=["mpirun", "--allow-run-as-root", "-np", "3", "tritonserver"])
    leader["multinode"].update(bootstrap="custom", workerTemplate={"spec": {"containers": [
        {"name": "worker", "image": "nvcr.io/nvidia/tritonserver:25.01-trtllm-python-py3",
         "command": ["/usr/sbin/sshd", "-De"]}]}})
    got_leader, got_worker = leader_and_worker(service(leader))
    assert got_leader == {**leader["template"]["spec"]["containers"][0]}
    assert got_worker == leader["multinode"]["workerTemplate"]["spec"]["containers"][0]


@pytest.mark.parametrize("multinode,path,message", [
    ({"bootstrap": "vllm-data-parallel"}, "dataParallel", "is required with bootstrap vllm-data-parallel"),
    ({"bootstrap": "vllm", "dataParallel": {"ranksPerNode": 2}}, "dataParallel",
     "only applies to bootstrap vllm-data-parallel, not vllm"),
    ({"bootstrap": "custom"}, "workerTemplate", "is required with bootstrap custom"),
    ({"bootstrap": "ray", "workerTemplate": {"spec": {"containers": [{"name": "w", "image": "i"}]}}},
     "workerTemplate", "only applies to bootstrap custom, not ray"),
    ({"bootstrap": "custom", "rendezvousPort": 1, "workerTemplate": {"spec": {"containers": [
        {"name": "w", "image": "i"}]}}}, "rendezvousPort", "does not apply to bootstrap custom"),
    ({"nodeCount": 1, "dataParallel": {"ranksPerNode": 2}}, "dataParallel", "only applies to nodeCount 2 or more"),
    ({"nodeCount": 1, "leaderArgs": ["-asc", "2"]}, "leaderArgs", "only applies to nodeCount 2 or more"),
    ({"bootstrap": "ray", "workerArgs": ["--x"]}, "workerArgs",
     "does not apply to bootstrap ray: its workers run Ray, not the server"),
    ({"bootstrap": "custom", "leaderArgs": ["--x"], "workerTemplate": {"spec": {"containers": [
        {"name": "w", "image": "i"}]}}}, "leaderArgs", "does not apply to bootstrap custom"),
])
def test_fields_of_another_bootstrap_are_refused(multinode: dict[str, Any], path: str, message: str) -> None:
    spec = role("a", "worker", nodes=2)
    spec["multinode"].update(multinode)
    with pytest.raises(InvalidSpec) as error:
        render(service(spec))
    assert error.value.path == f"spec.roles[0].multinode.{path}"
    assert message in str(error.value)


@pytest.mark.parametrize("given", [["--nnodes", "2"], ["--node-rank=1"], ["--headless"], ["--node_rank", "1"],
                                   ["-n", "2"], ["-n2"], ["--master_addr=x"]])
def test_a_flag_the_bootstrap_writes_is_refused_in_every_spelling(given: list[str]) -> None:
    """vLLM takes each of these as the flag the bootstrap writes (tests/real_engines/test_engines.py asks its
    parser)."""
    spec = role("a", "worker", nodes=2, image="vllm/vllm-openai:v0.27.1", args=["--model", "m", *given])
    with pytest.raises(InvalidSpec) as error:
        render(service(spec))
    assert error.value.path == "spec.roles[0].template.spec.containers[0].args[2]"
    assert f"{given[0].partition('=')[0][:2 if given[0] == '-n2' else None]} is written by bootstrap vllm for each " \
           "pod: remove it" in str(error.value)


def test_the_pool_and_the_monitors_select_the_pods_that_serve() -> None:
    """Only where a role serves from every node do the serving pods carry a label of their own (a label
    added to a pod template restarts its pods): elsewhere the leaders are selected, as before."""
    from tests.support import router

    monitored = {"monitoring": {"podMonitor": {"enabled": True}}, **SCRAPED_FROM_MONITORING}
    leaders = render(service(role("a", "worker", nodes=2), router(), **monitored))
    assert leaders["InferencePool/svc-router"]["spec"]["selector"]["matchLabels"] == {
        "fusioninfer.io/service": "svc", "leaderworkerset.sigs.k8s.io/worker-index": "0"}
    assert leaders["PodMonitor/svc-a"]["spec"]["selector"]["matchLabels"][
        "leaderworkerset.sigs.k8s.io/worker-index"] == "0"
    assert not any("fusioninfer.io/serves" in str(o) for o in leaders.values())

    hybrid = role("b", "worker", nodes=2, image="vllm/vllm-openai:v0.27.1")
    hybrid["multinode"].update(bootstrap="vllm-data-parallel", dataParallel={"ranksPerNode": 2,
                                                                             "hybridLoadBalancing": True})
    mixed = render(service(role("a", "worker", nodes=2), hybrid, router(), **monitored))
    serves = {"fusioninfer.io/serves": "true"}
    assert mixed["InferencePool/svc-router"]["spec"]["selector"]["matchLabels"] == {
        "fusioninfer.io/service": "svc", **serves}
    for name in ("a", "b"):
        assert mixed[f"PodMonitor/svc-{name}"]["spec"]["selector"]["matchLabels"].items() >= serves.items()
        template = mixed[f"LeaderWorkerSet/svc-{name}-0"]["spec"]["leaderWorkerTemplate"]
        assert template["leaderTemplate"]["metadata"]["labels"].items() >= serves.items()
        assert (template["workerTemplate"]["metadata"]["labels"].get("fusioninfer.io/serves") == "true") == (
            name == "b")
