"""Advice on valid services: a routed role whose serving pods have no readiness probe is warned about,
by field, in every layout and bootstrap; a probed one, a role the router does not route to, and a
multi-node role's non-serving workers (which lose their probes) are not. Prefill and decode roles without
each other, without KV transfer or without a router, and an engine that leaves GPUs of its replica idle,
are warned about too; one that asks for more GPUs than its replica has is refused."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fusion_helm.advice import warnings
from fusion_helm.errors import InvalidSpec
from tests.builders import every_bootstrap, role, service
from tests.builders import render as expand
from tests.helm import CHART, VALUES, Helm
from tests.support import router

PROBE = {"httpGet": {"path": "/health", "port": "http"}}
PORTS = [{"containerPort": 8000, "name": "http"}]


def advice(obj: dict[str, Any]) -> list[str]:
    return warnings([obj, *expand(obj).values()])


def unprobed(index: int) -> str:
    return f"InferenceService svc: spec.roles[{index}].template.spec.containers[0].readinessProbe: not set"


@pytest.mark.parametrize("layout", ["replica", "role", "disaggregated"])
def test_routed_roles_without_a_probe_are_named(layout: str) -> None:
    roles = [role("p", "prefiller", ports=PORTS), role("d", "decoder", ports=PORTS, readinessProbe=PROBE)]
    spec = {"layout": layout} if layout != "replica" else {}
    if layout == "role":  # the role layout routes no prefill/decode service: a monolithic one
        roles = [role("w", "worker", ports=PORTS), role("v", "worker", ports=PORTS, readinessProbe=PROBE)]
    lines = advice(service(*roles, router(), **spec))
    assert [line.split(": not set")[0] + ": not set" for line in lines] == [unprobed(0)]
    assert "before the engine has loaded its model" in lines[0]


def test_nothing_to_say_when_every_routed_role_is_probed_or_nothing_is_routed() -> None:
    probed = [role("p", "prefiller", ports=PORTS, readinessProbe=PROBE),
              role("d", "decoder", ports=PORTS, readinessProbe=PROBE)]
    assert advice(service(*probed, router())) == []
    # without a router nothing is routed: a probe is the user's own choice
    assert advice(service(role("w", "worker", ports=PORTS), role("v", "worker", ports=PORTS))) == []


def test_multi_node_roles_are_judged_by_the_pods_that_serve() -> None:
    """Each bootstrap's template carries a probe: the leader (or every pod, where each serves) keeps it,
    the workers that lose it are not routed to; without it, each role is named once."""
    probed = every_bootstrap()
    assert advice(service(*probed, router())) == []
    bare = copy.deepcopy(probed)
    for spec in bare:
        del spec["template"]["spec"]["containers"][0]["readinessProbe"]
    assert [line.split(": not set")[0] + ": not set" for line in advice(service(*bare, router()))] == [
        unprobed(index) for index in range(len(bare))]


# Serving mistakes that render, and the one that does not.

def gpus(count: int) -> dict[str, Any]:
    return {"resources": {"limits": {"nvidia.com/gpu": str(count)}}}


def test_prefill_and_decode_apart_from_each_other_are_named() -> None:
    lonely = advice(service(role("d", "decoder", ports=PORTS, readinessProbe=PROBE), router()))
    assert lonely == ["InferenceService svc: spec.roles[0].componentType: a decoder and no prefiller: nothing "
                      "prefills for it, and it serves whole requests as a worker would; add a prefiller role, or "
                      "make it componentType worker"]
    unrouted = advice(service(role("p", "prefiller"), role("d", "decoder")))
    assert unrouted == ["InferenceService svc: spec.roles: prefill and decode roles with no router or frontend: "
                        "nothing sends a request's prefill and its decode to different pods unless a router of your "
                        "own does; add a role of componentType router (or frontend)"]
    no_kv = advice(service(role("p", "prefiller", args=["m"]), role("d", "decoder", args=["m"])))
    assert no_kv[:2] == [f"InferenceService svc: spec.roles[{index}].template.spec.containers[0].args: a {kind} "
                         "whose engine moves no KV cache cannot hand a prefill to a decode; give vLLM "
                         "--kv-transfer-config (a kv_connector) or SGLang --disaggregation-mode"
                         for index, kind in enumerate(("prefiller", "decoder"))]


@pytest.mark.parametrize(("args", "nodes", "per_pod", "idle"), [
    (["m", "--tensor-parallel-size", "16"], 4, 8, "--tensor-parallel-size 16 x --pipeline-parallel-size 1 asks for 16 "
                                                  "GPUs, and a replica has 32 (4 pods x 8 nvidia.com/gpu): 16 of them "
                                                  "idle"),
    (["m", "-tp", "4", "-dp", "1"], 1, 8, "-tp 4 x --pipeline-parallel-size 1 x -dp 1 asks for 4 GPUs, and a "
                                          "replica has 8 (1 pod x 8 nvidia.com/gpu)"),
])
def test_an_engine_that_leaves_gpus_idle_is_named(args: list[str], nodes: int, per_pod: int, idle: str) -> None:
    spec = role("w", "worker", nodes=nodes, image="vllm/vllm-openai:v0.32.0", args=args, **gpus(per_pod))
    [line] = advice(service(spec))
    assert line.startswith("InferenceService svc: spec.roles[0].template.spec.containers[0].args[1]")
    assert idle in line


@pytest.mark.parametrize(("args", "nodes", "per_pod", "multinode", "message"), [
    (["m", "--tensor-parallel-size", "32"], 1, 8, {},
     "--tensor-parallel-size 32 x --pipeline-parallel-size 1 asks for 32 GPUs, and a replica has 8 (1 pod x 8 "
     "nvidia.com/gpu): the engine cannot start"),
    (["m", "--tensor_parallel_size=8", "-pp", "2"], 1, 8, {}, "asks for 16 GPUs, and a replica has 8"),
    (["m", "-tp", "2"], 2, 8, {"bootstrap": "vllm-data-parallel", "dataParallel": {"ranksPerNode": 8}},
     "-tp 2 x --pipeline-parallel-size 1 x 8 data-parallel ranks a node asks for 16 GPUs, and a replica has 8 (8 "
     "nvidia.com/gpu a node)"),
])
def test_an_engine_that_asks_for_more_gpus_than_its_replica_has_is_refused(
        args: list[str], nodes: int, per_pod: int, multinode: dict[str, Any], message: str) -> None:
    spec = role("w", "worker", nodes=nodes, image="vllm/vllm-openai:v0.32.0", args=args, **gpus(per_pod))
    if multinode:
        spec["multinode"].update(multinode)
    with pytest.raises(InvalidSpec) as error:
        expand(service(spec))
    assert error.value.path == "spec.roles[0].template.spec.containers[0].args[1]"
    assert message in str(error.value)


def test_sglang_s_tensor_parallel_size_is_read_as_its_parser_reads_it() -> None:
    spec = role("w", "worker", nodes=2, command=["python3", "-m", "sglang.launch_server"],
                args=["--model-path", "m", "--tp", "32"], **gpus(8))
    with pytest.raises(InvalidSpec, match=r"--tp 32 x --pp-size 1 asks for 32 GPUs, and a replica has 16"):
        expand(service(spec))
    data_parallel = role("w", "worker", command=["python3", "-m", "sglang.launch_server"],
                         args=["--model-path", "m", "--tp", "32", "--dp-size", "4"], **gpus(8))
    assert expand(service(data_parallel))  # its ranks may share tensor-parallel GPUs: not judged


def test_the_engine_s_own_data_parallel_ranks_are_the_role_s() -> None:
    """llm-d's wide-EP manifests give the engine --data-parallel-size-local: read as ranksPerNode where the role
    gives none or the same, and then not written again; refused only where the two disagree."""
    def dp(*args: str, **data_parallel: Any) -> dict[str, Any]:
        spec = role("w", "worker", nodes=2, image="vllm/vllm-openai:v0.32.0", args=["m", *args], **gpus(8))
        spec["multinode"]["bootstrap"] = "vllm-data-parallel"
        if data_parallel:
            spec["multinode"]["dataParallel"] = data_parallel
        return spec

    for spec in (dp("--data-parallel-size-local", "8"), dp("--data_parallel_size_local=8", ranksPerNode=8)):
        lws = expand(service(spec))["LeaderWorkerSet/svc-w-0"]["spec"]["leaderWorkerTemplate"]
        args = lws["leaderTemplate"]["spec"]["containers"][0]["args"]
        assert sum(arg.replace("_", "-").startswith("--data-parallel-size-local") for arg in args) == 1
        assert "$((LWS_GROUP_SIZE * 8))" in lws["leaderTemplate"]["spec"]["containers"][0]["command"][2]
    with pytest.raises(InvalidSpec) as error:
        expand(service(dp("-dpl", "4", ranksPerNode=8)))
    assert error.value.path == "spec.roles[0].template.spec.containers[0].args[1]"
    assert "-dpl 4 and spec.roles[0].multinode.dataParallel.ranksPerNode 8 disagree" in str(error.value)
    with pytest.raises(InvalidSpec, match="dataParallel: is required with bootstrap vllm-data-parallel"):
        expand(service(dp()))


def on_a_terminal(command: list[str], env: dict[str, str]) -> tuple[str, str, str]:
    """COMMAND run as from a terminal (a pseudo-terminal its session's controlling one), its standard output
    and error piped apart: (what the terminal showed, standard output, standard error)."""
    import fcntl
    import os
    import subprocess
    import termios

    main, terminal = os.openpty()

    def controlled() -> None:
        os.setsid()
        fcntl.ioctl(terminal, termios.TIOCSCTTY, 0)

    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                          preexec_fn=controlled, pass_fds=(terminal,), env=env)
    os.close(terminal)
    shown = b""
    os.set_blocking(main, False)
    try:
        while chunk := os.read(main, 65536):
            shown += chunk
    except OSError:
        pass
    os.close(main)
    assert done.returncode == 0, done.stderr
    return shown.decode(), done.stdout, done.stderr


def test_helm_install_shows_the_post_renderer_s_warnings_on_the_terminal(helm: Helm) -> None:
    """Helm (3 and 4) keeps a post-renderer's standard error to itself when it succeeds: the warnings
    `fusion-helm validate` gives reach the user's terminal all the same, and nothing else changes."""
    command = [str(helm.path), "template", "qwen", str(CHART), "-f", str(VALUES / "story2-pd-qwen3-8b.yaml"),
               "--post-renderer", "fusion-postrender"]
    shown, manifest, errors = on_a_terminal(command, helm.env())
    words = "fusion-postrender: warning: InferenceService qwen-inference-service: spec.roles: prefill and decode roles"
    # Helm 3 passes none of it on: the terminal shows it. Helm 4's plugin hands it to helm's standard error.
    assert (shown + errors).count(words) == 1, (shown, errors)
    assert (words in shown) == (helm.major == 3)
    assert words not in manifest and "kind: LeaderWorkerSet" in manifest
    quiet, _, _ = on_a_terminal([*command[:5], str(VALUES / "router-pd-qwen3-8b.yaml"), *command[6:]], helm.env())
    assert "warning" not in quiet, quiet
