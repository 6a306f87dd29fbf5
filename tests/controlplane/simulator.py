"""llm-d's vLLM simulator (llm-d-inference-sim) standing in for vLLM: the flags every run of it takes here,
and a picker pod's render server run as it."""

from __future__ import annotations

from typing import Any

from tests.controlplane.builds import binary

SIMULATOR_BASE = ("--force-dummy-tokenizer",)
"""The simulator's own tokenizer even for a real model's name (whose tokenizer it would fetch)."""
RENDER = ["vllm", "launch", "render"]


def render_servers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """A picker pod's render servers (precise-prefix-cache's tokenizer): its native sidecars that run
    ``vllm launch render MODEL``."""
    return [container for container in spec.get("initContainers") or []
            if container.get("restartPolicy") == "Always" and container.get("command", [])[:3] == RENDER]


def render_argv(sidecar: dict[str, Any], offset: int = 0) -> tuple[list[str], int]:
    """SIDECAR's render server as the simulator, which renders a prompt with the tokenizer the simulated
    engines use, on its port moved by OFFSET: its command line, and that port."""
    words = [str(word) for word in sidecar["command"]]
    flags = dict(zip(words[4::2], words[5::2], strict=False))
    port = int(flags["--port"]) + offset
    return [str(binary("llm-d-inference-sim")), "--model", words[3], "--port", str(port), "--served-model-name",
            flags["--served-model-name"], *SIMULATOR_BASE], port
