"""The real engines the suite checks rendered commands against: vLLM's CPU build and SGLang, each in a
virtualenv of its own that ci/engines/build.sh builds once into the cache (`make test-setup`)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from ci.tools import read_env
from tests.helm import CACHE, ROOT

VERSIONS = read_env(ROOT / "ci" / "engines" / "versions.env")
VLLM = CACHE / "engines" / f"vllm-{VERSIONS['VLLM_VERSION']}"
SGLANG = CACHE / "engines" / f"sglang-{VERSIONS['SGLANG_VERSION']}"
SGLANG_ROUTER = CACHE / "engines" / f"sglang-router-{VERSIONS['SGLANG_ROUTER_VERSION']}"
"""SGLang's router, the frontend role's (tests/controlplane/serving.py runs it)."""
GUIDELLM = CACHE / "engines" / f"guidellm-{VERSIONS['GUIDELLM_VERSION']}"
"""The load generator of `make bench-serving` (`ci/engines/build.sh guidellm`)."""
SOURCES = CACHE / "engines" / f"sources-{VERSIONS['OLAH_VERSION']}-{VERSIONS['MOTO_VERSION']}"
"""A hub mirror (olah), an S3 store (moto's server) and boto3 over the vllm venv: the fetch Job's tests
(tests/model_sources.py)."""
BUILT = ".fusion-engine-built"
REAL_ENGINE_ENV = {"VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", "VLLM_TARGET_DEVICE": "cpu"}
"""What this machine sets for a real engine: nothing reported (the hub's settings are the pod's own)."""
CLI = ROOT / "tests" / "engine_cli.py"


def built(venv: Path) -> Path:
    if not (venv / BUILT).is_file():
        raise RuntimeError(f"the engine at {venv} is not built: `make test-setup` builds it (ci/engines/build.sh)")
    return venv


def parse(venv: Path, engine: str, command_lines: list[list[str]]) -> list[dict[str, Any]]:
    """What ENGINE's own parser makes of each command line (the words after `vllm serve`, or after
    `python3 -m sglang.launch_server`): {"ok": true, "args": …} or {"ok": false, "error": …}."""
    result = subprocess.run([str(venv / "bin" / "python"), str(CLI), engine, "-"], input=json.dumps(command_lines),
                            capture_output=True, text=True, timeout=600,
                            env={**os.environ, "VLLM_TARGET_DEVICE": "cpu", "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    answers: list[dict[str, Any]] = json.loads(result.stdout)
    return answers


def launch(command_lines: list[list[str]]) -> list[dict[str, Any]]:
    """Where each command line (the words after `vllm serve`) goes down vLLM's own launch path: its parser,
    then `vllm serve`'s checks up to where it would start engines or API servers ("launch": "headless",
    "api-server", "api-servers", "dp-supervisor"), or the error that stops it."""
    return parse(built(VLLM), "vllm-launch", command_lines)


def options(venv: Path, engine: str) -> dict[str, dict[str, Any]]:
    """Every option string of ENGINE's server parser (tests/engine_cli.py, `-options`)."""
    result = subprocess.run([str(venv / "bin" / "python"), str(CLI), f"{engine}-options"], capture_output=True,
                            text=True, timeout=600, env={**os.environ, "VLLM_TARGET_DEVICE": "cpu",
                                                         "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    found: dict[str, dict[str, Any]] = json.loads(result.stdout)
    return found


def tiny_model(directory: Path, layers: int = 2, hidden: int = 128, shard: str = "", dtype: str = "") -> Path:
    """A Llama with random weights (by default 2 layers) and a word-level tokenizer, made here (no model hub);
    SHARD: its weights' largest shard (transformers' max_shard_size); DTYPE: theirs (float32 by default)."""
    sized = [str(layers), str(hidden), shard, dtype] if (layers, hidden, shard, dtype) != (2, 128, "", "") else []
    subprocess.run([str(VLLM / "bin" / "python"), str(ROOT / "tests" / "tiny_model.py"), str(directory), *sized],
                   check=True, capture_output=True, timeout=600)
    return directory


def tiny_adapter(directory: Path, base_name: str, seed: int) -> Path:
    """A LoRA adapter of tiny_model's default model, made here (its weights drawn from SEED), its config
    naming BASE_NAME."""
    subprocess.run([str(VLLM / "bin" / "python"), str(ROOT / "tests" / "tiny_model.py"), "--adapter", str(directory),
                    base_name, str(seed)], check=True, capture_output=True, timeout=600)
    return directory
