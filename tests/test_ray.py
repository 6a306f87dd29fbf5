"""The leader's bootstrap line keeps every argument intact through a real /bin/sh."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fusion_helm.expand import ray

ARGS = [
    "--model", "deepseek-ai/DeepSeek-R1",
    "--kv-transfer-config", '{"kv_connector":"PyNcclConnector","kv_role":"kv_producer"}',
    "--served-model-name", "name with spaces", "it's quoted", "$HOME", "`id`", "a;b && c", "",
]


@pytest.fixture
def stub_path(tmp_path: Path) -> str:
    """`ray` records its argv; `vllm` prints one argument per line, NUL-separated."""
    (tmp_path / "ray").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {tmp_path}/ray.log\n')
    (tmp_path / "vllm").write_text('#!/bin/sh\nprintf "%s\\0" "$@"\n')
    for name in ("ray", "vllm"):
        (tmp_path / name).chmod(0o755)
    return str(tmp_path)


def run_sh(script: str, path: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["/bin/sh", "-c", script], capture_output=True,
                          env={"PATH": f"{path}:/usr/bin:/bin", "LWS_LEADER_ADDRESS": "leader.svc"})


def test_leader_passes_every_argument_unchanged(stub_path: str) -> None:
    result = run_sh(ray.leader_script(["vllm", "serve", *ARGS]), stub_path)
    assert result.returncode == 0, result.stderr
    argv = result.stdout.decode().split("\0")[:-1]
    assert argv == ["serve", *ARGS, "--distributed-executor-backend", "ray"]
    assert Path(stub_path, "ray.log").read_text() == "start --head --port=6379\n"


def test_an_explicit_executor_backend_is_not_overridden(stub_path: str) -> None:
    for given in (["--distributed-executor-backend", "mp"], ["--distributed-executor-backend=mp"]):
        result = run_sh(ray.leader_script(["vllm", "serve", *given]), stub_path)
        assert result.stdout.decode().split("\0")[:-1] == ["serve", *given]


def test_worker_joins_the_leader_named_by_lws(stub_path: str) -> None:
    result = run_sh(ray.worker_script(), stub_path)
    assert result.returncode == 0
    assert Path(stub_path, "ray.log").read_text() == "start --address=leader.svc:6379 --block\n"
