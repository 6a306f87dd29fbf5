"""The commands a multi-node replica's pods run, per bootstrap (``multinode.bootstrap``).

Each pod runs ``/bin/sh -c SCRIPT NAME ARGV...``: SCRIPT is ours and fixed (what it computes per pod
comes from the variables LWS sets in every pod: LWS_LEADER_ADDRESS, LWS_GROUP_SIZE, LWS_WORKER_INDEX),
and the server's argv — the user's words — reaches it as the positional parameters, never as shell
text. The flags a bootstrap writes that are the same on every pod are words of that argv too.
"""

from __future__ import annotations

from collections.abc import Sequence

from fusion_helm.model.bootstrap import Bootstrap, MultiNode
from fusion_helm.records import record

SHELL = "/bin/sh"
JOIN_TIMEOUT = 300
"""Seconds a Ray worker keeps trying to join, and the Ray head waits for every node (vLLM's
multi-node-serving.sh waits as long)."""
RETRY_INTERVAL = 5
EXECUTOR_FLAG = "--distributed-executor-backend"


@record
class Command:
    """A container's command and args."""

    command: list[str]
    args: list[str]


def leader(multinode: MultiNode, serve: Sequence[str]) -> Command:
    """The leader pod's: the server, after what its bootstrap starts first."""
    return _run(multinode, serve, worker=False)


def worker(multinode: MultiNode, serve: Sequence[str]) -> Command:
    """A worker pod's."""
    if multinode.bootstrap is Bootstrap.RAY:
        return Command([SHELL, "-c", _ray_worker(multinode.port), "ray-worker"], [])
    return _run(multinode, serve, worker=True)


def written_flags(multinode: MultiNode) -> tuple[str, ...]:
    """The server flags the bootstrap writes itself: a user's own would be overridden, so they are refused."""
    match multinode.bootstrap:
        case Bootstrap.VLLM:
            return ("--nnodes", "--node-rank", "--master-addr", "--master-port", "--headless")
        case Bootstrap.VLLM_DATA_PARALLEL:
            return ("--data-parallel-size", "--data-parallel-size-local", "--data-parallel-start-rank",
                    "--data-parallel-address", "--data-parallel-rpc-port", "--data-parallel-hybrid-lb", "--headless")
        case Bootstrap.SGLANG:
            return ("--dist-init-addr", "--nnodes", "--node-rank")
    return ()


def _run(multinode: MultiNode, serve: Sequence[str], worker: bool) -> Command:
    argv = list(serve)
    name = f"{multinode.bootstrap}-{'worker' if worker else 'leader'}"
    match multinode.bootstrap:
        case Bootstrap.RAY:
            if EXECUTOR_FLAG not in argv and not any(arg.startswith(f"{EXECUTOR_FLAG}=") for arg in argv):
                argv += [EXECUTOR_FLAG, "ray"]
            return Command([SHELL, "-c", _ray_head(multinode.port), name], argv)
        case Bootstrap.VLLM:
            script = ('exec "$@" --nnodes "$LWS_GROUP_SIZE" --node-rank "$LWS_WORKER_INDEX" '
                      '--master-addr "$LWS_LEADER_ADDRESS"')
            return Command([SHELL, "-c", script, name],
                           [*argv, "--master-port", str(multinode.port), *(["--headless"] if worker else [])])
        case Bootstrap.VLLM_DATA_PARALLEL:
            assert multinode.data_parallel is not None
            ranks = multinode.data_parallel.ranks_per_node
            hybrid = multinode.data_parallel.hybrid_load_balancing
            script = (f'exec "$@" --data-parallel-size "$((LWS_GROUP_SIZE * {ranks:d}))" '
                      '--data-parallel-address "$LWS_LEADER_ADDRESS"')
            if worker or hybrid:  # a start rank, even 0, puts a leader that serves in hybrid mode
                script += f' --data-parallel-start-rank "$((LWS_WORKER_INDEX * {ranks:d}))"'
            mode = ["--data-parallel-hybrid-lb"] if hybrid else ["--headless"] if worker else []
            return Command([SHELL, "-c", script, name], [
                *argv, "--data-parallel-size-local", str(ranks), "--data-parallel-rpc-port", str(multinode.port),
                *mode])
        case Bootstrap.SGLANG:
            script = (f'exec "$@" --dist-init-addr "$LWS_LEADER_ADDRESS:{multinode.port:d}" '
                      '--nnodes "$LWS_GROUP_SIZE" --node-rank "$LWS_WORKER_INDEX"')
            return Command([SHELL, "-c", script, name], argv)
    raise ValueError(f"bootstrap {multinode.bootstrap} runs its templates as written")


def _ray_head(port: int) -> str:
    """Start the Ray head, wait until every node of the replica has joined (bounded), then the server."""
    alive = ("python3 -c 'import ray; ray.init(address=\"auto\", logging_level=\"ERROR\"); "
             "print(sum(node[\"Alive\"] for node in ray.nodes()))'")
    return "\n".join([
        f"ray start --head --port={port:d} || exit 1",
        f"deadline=$(($(date +%s) + {JOIN_TIMEOUT:d}))",
        f"until [ \"$({alive} 2>/dev/null)\" -ge \"$LWS_GROUP_SIZE\" ] 2>/dev/null; do",
        "  if [ \"$(date +%s)\" -ge \"$deadline\" ]; then",
        f"    echo \"ray: not every one of the replica's $LWS_GROUP_SIZE nodes joined within {JOIN_TIMEOUT:d} s\" >&2",
        "    exit 1",
        "  fi",
        f"  sleep {RETRY_INTERVAL:d}",
        "done",
        'exec "$@"',
    ])


def _ray_worker(port: int) -> str:
    """Join the replica's Ray head, retrying until it answers (bounded); --block keeps the pod running."""
    return "\n".join([
        f"deadline=$(($(date +%s) + {JOIN_TIMEOUT:d}))",
        f"until ray start --address=\"$LWS_LEADER_ADDRESS:{port:d}\" --block; do",
        "  if [ \"$(date +%s)\" -ge \"$deadline\" ]; then",
        f"    echo \"ray: the head at $LWS_LEADER_ADDRESS:{port:d} took no node within {JOIN_TIMEOUT:d} s\" >&2",
        "    exit 1",
        "  fi",
        f"  sleep {RETRY_INTERVAL:d}",
        "done",
    ])
