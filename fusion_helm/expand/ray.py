"""Ray bootstrap commands for multi-node replicas: the leader heads a Ray cluster, workers join it."""

from __future__ import annotations

from collections.abc import Sequence

RAY_PORT = 6379
EXECUTOR_FLAG = "--distributed-executor-backend"


def leader_script(serve: Sequence[str]) -> str:
    """Start the Ray head, then the model server on it.

    The server's argv is quoted word by word, so arguments with spaces, quotes or JSON reach it
    exactly as written in the pod template.
    """
    import shlex  # only multi-node roles have a Ray bootstrap

    argv = list(serve)
    if EXECUTOR_FLAG not in argv and not any(arg.startswith(f"{EXECUTOR_FLAG}=") for arg in argv):
        argv += [EXECUTOR_FLAG, "ray"]
    return f"ray start --head --port={RAY_PORT} && {shlex.join(argv)}"


def worker_script() -> str:
    # $LWS_LEADER_ADDRESS is set by the LWS controller in every pod; the shell expands it.
    return f"ray start --address=$LWS_LEADER_ADDRESS:{RAY_PORT} --block"
