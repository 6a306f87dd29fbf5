"""Ray bootstrap commands for multi-node replicas: the leader heads a Ray cluster, workers join it."""

from __future__ import annotations

from collections.abc import Sequence

RAY_PORT = 6379
EXECUTOR_FLAG = "--distributed-executor-backend"
_SHELL_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789@%+=:,./-_")
"""Characters a POSIX shell word may hold unquoted (shlex.quote's, for ASCII)."""


def leader_script(serve: Sequence[str]) -> str:
    """Start the Ray head, then the model server on it.

    The server's argv is quoted word by word, so arguments with spaces, quotes or JSON reach it
    exactly as written in the pod template.
    """
    argv = list(serve)
    if EXECUTOR_FLAG not in argv and not any(arg.startswith(f"{EXECUTOR_FLAG}=") for arg in argv):
        argv += [EXECUTOR_FLAG, "ray"]
    return f"ray start --head --port={RAY_PORT} && {' '.join(map(shell_word, argv))}"


def shell_word(text: str) -> str:
    """TEXT as one word of a POSIX shell command: as it is where that is safe, else single-quoted (as
    shlex.quote writes it, without loading shlex and its pattern on every post-render)."""
    if not text:
        return "''"
    if _SHELL_SAFE.issuperset(text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def worker_script() -> str:
    # $LWS_LEADER_ADDRESS is set by the LWS controller in every pod; the shell expands it.
    return f"ray start --address=$LWS_LEADER_ADDRESS:{RAY_PORT} --block"
