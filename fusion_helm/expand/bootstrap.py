"""The commands a multi-node replica's pods run, per bootstrap (``multinode.bootstrap``).

Each pod runs ``/bin/sh -c SCRIPT NAME ARGV...``: SCRIPT is ours and fixed (what it computes per pod
comes from the variables LWS sets in every pod: LWS_LEADER_ADDRESS, LWS_GROUP_SIZE, LWS_WORKER_INDEX),
and the server's argv — the user's words — reaches it as the positional parameters, never as shell
text. The flags a bootstrap writes that are the same on every pod are words of that argv too, and so
are the role's leader-only and worker-only flags (``multinode.leaderArgs``, ``workerArgs``). A server
started from a shell script of the user's (``sh -c SCRIPT``) gets them all as that script's arguments,
which its ``exec … "$@"`` passes on.
"""

from __future__ import annotations

from fusion_helm.model.bootstrap import Bootstrap, MultiNode
from fusion_helm.model.engine import ServerCommand
from fusion_helm.model.engine_flags import (
    API_SERVER_ONLY,
    DATA_PARALLEL_ADDRESS,
    DATA_PARALLEL_HYBRID_LB,
    DATA_PARALLEL_RPC_PORT,
    DATA_PARALLEL_SIZE,
    DATA_PARALLEL_SIZE_LOCAL,
    DATA_PARALLEL_START_RANK,
    DIST_INIT_ADDR,
    DISTRIBUTED_EXECUTOR_BACKEND,
    HEADLESS,
    MASTER_ADDR,
    MASTER_PORT,
    NNODES,
    NODE_RANK,
    Option,
)
from fusion_helm.records import record

SHELL = "/bin/sh"
JOIN_TIMEOUT = 300
"""Seconds a Ray worker keeps trying to join, and the Ray head waits for every node (vLLM's
multi-node-serving.sh waits as long)."""
RETRY_INTERVAL = 5


@record
class Command:
    """A container's command and args."""

    command: list[str]
    args: list[str]


@record
class Launch:
    """A pod's command, and its server's command line as the engine reads it (the words the command's
    script runs, with the flags the script adds after them left out)."""

    command: Command
    server: ServerCommand


def leader(multinode: MultiNode, server: ServerCommand) -> Launch:
    """The leader pod's: the server, after what its bootstrap starts first."""
    return _run(multinode, server.appended(multinode.leader_args, "multinode.leaderArgs are given to it"),
                worker=False)


def worker(multinode: MultiNode, server: ServerCommand) -> Launch | None:
    """A worker pod's; None for a Ray worker, which runs Ray, not the server."""
    if multinode.bootstrap is Bootstrap.RAY:
        return None
    server = server.appended(multinode.worker_args, "multinode.workerArgs are given to it")
    if worker_is_headless(multinode):
        server = server.without(API_SERVER_ONLY, "vLLM refuses on a headless worker (it starts no API server)")
    return _run(multinode, server, worker=True)


def ray_worker(multinode: MultiNode) -> Command:
    return Command([SHELL, "-c", _ray_worker(multinode.port), "ray-worker"], [])


def worker_is_headless(multinode: MultiNode) -> bool:
    """The workers start no API server: vLLM's --headless, where the leader serves every rank."""
    data_parallel = multinode.data_parallel
    return multinode.bootstrap is Bootstrap.VLLM or (
        multinode.bootstrap is Bootstrap.VLLM_DATA_PARALLEL and data_parallel is not None
        and not data_parallel.hybrid_load_balancing)


def written_options(multinode: MultiNode) -> tuple[Option, ...]:
    """The server options the bootstrap writes itself: a user's own would be overridden, so they are refused."""
    match multinode.bootstrap:
        case Bootstrap.VLLM:
            return (NNODES, NODE_RANK, MASTER_ADDR, MASTER_PORT, HEADLESS)
        case Bootstrap.VLLM_DATA_PARALLEL:  # its --data-parallel-size-local is dataParallel.ranksPerNode's own
            return (DATA_PARALLEL_SIZE, DATA_PARALLEL_START_RANK, DATA_PARALLEL_ADDRESS, DATA_PARALLEL_RPC_PORT,
                    DATA_PARALLEL_HYBRID_LB, HEADLESS)
        case Bootstrap.SGLANG:
            return (DIST_INIT_ADDR, NNODES, NODE_RANK)
    return ()


def _run(multinode: MultiNode, server: ServerCommand, worker: bool) -> Launch:
    name = f"{multinode.bootstrap}-{'worker' if worker else 'leader'}"
    why = f"bootstrap {multinode.bootstrap} gives it flags of its own"
    server = server.passing(why)  # a script of the user's passes the flags its script adds on
    match multinode.bootstrap:
        case Bootstrap.RAY:
            if not server.given(DISTRIBUTED_EXECUTOR_BACKEND):
                server = server.appended([DISTRIBUTED_EXECUTOR_BACKEND.name(server.engine), "ray"], why)
            return Launch(Command([SHELL, "-c", _ray_head(multinode.port), name], list(server.words)), server)
        case Bootstrap.VLLM:
            script = ('exec "$@" --nnodes "$LWS_GROUP_SIZE" --node-rank "$LWS_WORKER_INDEX" '
                      '--master-addr "$LWS_LEADER_ADDRESS"')
            server = server.appended([MASTER_PORT.name(server.engine), str(multinode.port),
                                      *([HEADLESS.name(server.engine)] if worker else [])], why)
            return Launch(Command([SHELL, "-c", script, name], list(server.words)), server)
        case Bootstrap.VLLM_DATA_PARALLEL:
            assert multinode.data_parallel is not None
            ranks = multinode.data_parallel.ranks_per_node
            hybrid = multinode.data_parallel.hybrid_load_balancing
            script = (f'exec "$@" --data-parallel-size "$((LWS_GROUP_SIZE * {ranks:d}))" '
                      '--data-parallel-address "$LWS_LEADER_ADDRESS"')
            if worker or hybrid:  # a start rank, even 0, puts a leader that serves in hybrid mode
                script += f' --data-parallel-start-rank "$((LWS_WORKER_INDEX * {ranks:d}))"'
            mode = [DATA_PARALLEL_HYBRID_LB.name(server.engine)] if hybrid \
                else [HEADLESS.name(server.engine)] if worker else []
            local = [] if server.given(DATA_PARALLEL_SIZE_LOCAL) else [DATA_PARALLEL_SIZE_LOCAL.name(server.engine),
                                                                       str(ranks)]
            server = server.appended([*local, DATA_PARALLEL_RPC_PORT.name(server.engine), str(multinode.port), *mode],
                                     why)
            return Launch(Command([SHELL, "-c", script, name], list(server.words)), server)
        case Bootstrap.SGLANG:
            script = (f'exec "$@" --dist-init-addr "$LWS_LEADER_ADDRESS:{multinode.port:d}" '
                      '--nnodes "$LWS_GROUP_SIZE" --node-rank "$LWS_WORKER_INDEX"')
            return Launch(Command([SHELL, "-c", script, name], list(server.words)), server)
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
