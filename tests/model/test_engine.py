"""The one reader of a server's command line (fusion_helm/model/engine.py): every spelling an engine takes,
the last value winning, rewrites that keep the container's own split of command and args, and shell
scripts read but never rewritten. (That each engine's parser reads these spellings so,
tests/real_engines/test_engines.py asks the parsers themselves.)"""

from __future__ import annotations

from typing import Any

import pytest

from fusion_helm.errors import InvalidSpec
from fusion_helm.model.engine import NOT_JSON, ServerCommand, engine_of, server_command
from fusion_helm.model.engine_flags import (
    API_SERVER_COUNT,
    DATA_PARALLEL_SIZE_LOCAL,
    HEADLESS,
    KV_TRANSFER_CONFIG,
    NNODES,
    PORT,
    Engine,
)

VLLM = ("vllm", "serve")
NIXL = '{"kv_connector":"NixlConnector"}'


def command(container: dict[str, Any], default: tuple[str, ...] = VLLM) -> ServerCommand:
    return server_command(container, default, "InferenceService s", "c")


@pytest.mark.parametrize("args", [
    ["--port", "9000"], ["--port=9000"], ["--port", "1", "--port", "9000"], ["--port=1", "--port", "9000"],
])
def test_a_value_is_read_in_either_form_and_the_last_wins(args: list[str]) -> None:
    assert command({"args": ["m", *args]}).value(PORT)[0] == "9000"


@pytest.mark.parametrize("args", [
    ["--kv-transfer-config", NIXL], ["--kv_transfer_config", NIXL], [f"--kv_transfer_config={NIXL}"],
    [f"--kv-transfer_config={NIXL}"], ["--kv_transfer_config.kv_connector", "NixlConnector"],
    ["--kv-transfer-config.kv_connector=NixlConnector"],
    ["--kv-transfer-config", '{"kv_connector":"X"}', "--kv_transfer_config.kv_connector", "NixlConnector"],
])
def test_vllm_reads_underscores_and_a_json_option_s_keys(args: list[str]) -> None:
    config, occurrence = command({"args": ["m", *args]}).json_value(KV_TRANSFER_CONFIG)
    assert config == {"kv_connector": "NixlConnector"}
    assert occurrence is not None and occurrence.written.replace("_", "-").startswith("--kv-transfer-config")


def test_a_json_option_that_is_no_json_is_told_apart() -> None:
    assert command({"args": ["m", "--kv-transfer-config", "nixl"]}).json_value(KV_TRANSFER_CONFIG)[0] is NOT_JSON
    assert command({"args": ["m"]}).json_value(KV_TRANSFER_CONFIG) == (None, None)


@pytest.mark.parametrize(("args", "value"), [
    (["-n", "4"], "4"), (["-n4"], "4"), (["-n=4"], "4"), (["--nnodes", "4"], "4"), (["--nnodes=4"], "4")])
def test_short_spellings_are_read_as_argparse_reads_them(args: list[str], value: str) -> None:
    assert command({"args": ["m", *args]}).value(NNODES)[0] == value


def test_a_flag_s_value_is_never_read_as_a_flag() -> None:
    assert command({"args": ["m", "--served-model-name", "x", "--port", "--port"]}).value(PORT)[0] == "--port"
    assert not command({"args": ["m", "--headless-mode"]}).given(HEADLESS)
    assert command({"args": ["m", "--headless", "--port", "1"]}).value(PORT)[0] == "1"


def test_sglang_reads_its_option_strings_only() -> None:
    """SGLang's parser is argparse's own: no underscores for dashes (its parser refuses --dist_init_addr)."""
    sglang = ("python3", "-m", "sglang.launch_server")
    assert command({"args": ["--port", "1"]}, sglang).engine is Engine.SGLANG
    assert command({"args": ["--port_x", "1"]}, sglang).value(PORT) == (None, None)
    assert command({"args": ["--nnodes", "2"]}, sglang).value(NNODES)[0] == "2"
    assert not command({"args": ["-n", "2"]}, sglang).given(NNODES)  # vLLM's short spelling, not SGLang's


@pytest.mark.parametrize(("words", "engine"), [
    (["vllm", "serve"], Engine.VLLM), (["/usr/local/bin/vllm", "serve"], Engine.VLLM),
    (["python3", "-m", "vllm.entrypoints.openai.api_server"], Engine.VLLM),
    (["python3", "-m", "sglang.launch_server"], Engine.SGLANG), (["sglang", "serve"], Engine.SGLANG),
    (["/app/llama-server"], None), (["python3", "server.py"], None), ([], None)])
def test_the_engine_is_what_the_command_line_runs(words: list[str], engine: Engine | None) -> None:
    assert engine_of(words) is engine


def test_a_rewrite_keeps_the_container_s_split_and_spelling() -> None:
    container = {"name": "e", "command": ["vllm", "serve", "m", "--port=8000"], "args": ["-n2", "--kv_transfer_config",
                                                                                          NIXL]}
    written = command(container).with_value(PORT, "8200", "x").with_value(NNODES, "3", "y").write(container)
    assert written == {"name": "e", "command": ["vllm", "serve", "m", "--port=8200"],
                       "args": ["-n3", "--kv_transfer_config", NIXL]}


def test_an_absent_flag_is_appended_to_args_and_an_implied_entrypoint_stays_implied() -> None:
    container = {"name": "e", "args": ["m"]}
    assert command(container).with_value(PORT, "8200", "x").write(container) == {"name": "e",
                                                                                 "args": ["m", "--port=8200"]}


def test_without_drops_each_spelling_and_its_value() -> None:
    container = {"command": ["vllm", "serve", "-asc", "8"], "args": ["m", "--api_server_count=8", "--headless",
                                                                      "--port", "1"]}
    written = command(container).without([API_SERVER_COUNT, HEADLESS], "x").write(container)
    assert written == {"command": ["vllm", "serve"], "args": ["m", "--port", "1"]}


# Shell scripts: read, never rewritten; flags reach the engine as the script's arguments.

SCRIPT = """source "$BASH_ENV"   # the network's set-up
export NCCL_IB_HCA=mlx5; cd /models &&
exec vllm serve "$MODEL" --port ${PORT-8000} --tensor_parallel_size 8 \\
  --kv-transfer-config '{"kv_connector":
    "NixlConnector"}' "$@"
"""


def test_a_script_that_execs_its_engine_is_read_through() -> None:
    read = command({"command": ["/bin/bash", "-c", SCRIPT]})
    assert read.engine is Engine.VLLM
    assert read.value(PORT)[0] == "${PORT-8000}"
    config, occurrence = read.json_value(KV_TRANSFER_CONFIG)
    assert config == {"kv_connector": "NixlConnector"}
    assert occurrence is not None and read.field(occurrence) == "c.command[2]"


def test_flags_reach_a_script_s_engine_as_its_arguments_after_a_name() -> None:
    container = {"command": ["/bin/bash", "-c"], "args": [SCRIPT]}
    written = command(container).with_value(PORT, "8200", "x").write(container)
    # bash names the script after itself ($0) when not given a name: the arguments follow that name.
    assert written == {"command": ["/bin/bash", "-c"], "args": [SCRIPT, "/bin/bash", "--port=8200"]}
    # A flag the script gives is given again after it (the engine takes the last); one of its arguments is
    # rewritten where it stands.
    script = 'exec vllm serve m "$@"'
    named = {"command": ["sh", "-c", script, "launch"], "args": ["--port", "1"]}
    assert command(named).with_value(PORT, "8200", "x").write(named) == {
        "command": ["sh", "-c", script, "launch"], "args": ["--port", "8200"]}


def test_a_flag_the_script_gives_cannot_be_taken_out() -> None:
    with pytest.raises(InvalidSpec) as error:
        command({"command": ["sh", "-c", 'exec vllm serve m -dpl 8 "$@"']}).without([DATA_PARALLEL_SIZE_LOCAL], "y z")
    assert error.value.path == "c.command[2]"
    assert "the script gives -dpl, which y z; give it as an argument of the script instead" in str(error.value)


@pytest.mark.parametrize("script", [
    "vllm serve m", "exec vllm serve m | tee log", "exec vllm serve m &",
    'eval "exec vllm serve m $@"', "(exec vllm serve m)", "exec vllm serve 'm", "exec vllm serve m; echo done"])
def test_a_script_that_does_not_end_by_exec_ing_cannot_pass_flags(script: str) -> None:
    read = command({"command": ["sh", "-c", script]})
    with pytest.raises(InvalidSpec) as error:
        read.appended(["--port=1"], "the sidecar moves its port")
    assert error.value.path == "c.command[2]"
    assert 'end it by exec\'ing the engine with "$@" last' in str(error.value)


