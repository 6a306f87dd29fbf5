"""Run an LLM engine's own command-line parser over a command line we render.

Standalone: run by the engine venv's python (ci/engines/build.sh), never imported by
the test suite.

    python tests/engine_cli.py vllm ARG...    # ARG... = the words after `vllm serve`
    python tests/engine_cli.py sglang ARG...  # the words after `python3 -m sglang.launch_server`
    python tests/engine_cli.py vllm -         # a JSON list of such ARG lists on stdin, one import for all

Prints one JSON object on stdout (with -, a JSON list of them) and exits 0:
    {"ok": true, "args": {...parsed values of the flags we render...}}
    {"ok": false, "error": "<the parser's message>"}
Engine log output goes to stderr.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys

VLLM_KEYS = (
    "model", "model_tag", "headless", "api_server_count",
    "host", "port",
    "nnodes", "node_rank", "master_addr", "master_port",
    "tensor_parallel_size", "pipeline_parallel_size",
    "data_parallel_size", "data_parallel_size_local", "data_parallel_start_rank",
    "data_parallel_rank", "data_parallel_address", "data_parallel_rpc_port",
    "data_parallel_hybrid_lb", "data_parallel_external_lb",
    "enable_expert_parallel", "distributed_executor_backend",
)
SGLANG_KEYS = (
    "model_path", "tp_size", "dp_size", "pp_size", "dist_init_addr",
    "nnodes", "node_rank", "host", "port",
)


def vllm_parse(argv: list[str]) -> dict:
    """Parse like `vllm serve ARG...` (vllm/entrypoints/cli/main.py + cli/serve.py)."""
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser = FlexibleArgumentParser(prog="vllm")
    subparsers = parser.add_subparsers(required=False, dest="subparser")
    serve = ServeSubcommand()
    serve.subparser_init(subparsers)
    # FlexibleArgumentParser rewrites `--model X` into the positional only when the
    # first word is "serve", exactly as the `vllm` CLI does.
    args = parser.parse_args(["serve", *argv])
    serve.validate(args)  # validate_parsed_serve_args, as main() does
    if getattr(args, "model_tag", None) is not None:  # ServeSubcommand.cmd does this
        args.model = args.model_tag
    return {k: getattr(args, k, None) for k in VLLM_KEYS}


def sglang_parse(argv: list[str]) -> dict:
    """Parse like `python3 -m sglang.launch_server ARG...` (prepare_server_args)."""
    from sglang.srt.server_args import prepare_server_args

    # argparse.ArgumentParser(prog="sglang serve") + ServerArgs.add_cli_args, then
    # ServerArgs.from_cli_args (which runs ServerArgs.__post_init__'s checks).
    server_args = prepare_server_args(argv)
    return {k: getattr(server_args, k, None) for k in SGLANG_KEYS}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("vllm", "sglang"):
        print("usage: engine_cli.py {vllm|sglang} ARG...", file=sys.stderr)
        return 64
    engine, rest = argv[0], argv[1:]
    if rest == ["-"]:
        print(json.dumps([parse(engine, words) for words in json.load(sys.stdin)], default=str))
    else:
        print(json.dumps(parse(engine, rest), default=str))
    return 0


def parse(engine: str, rest: list[str]) -> dict:
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            parsed = vllm_parse(rest) if engine == "vllm" else sglang_parse(rest)
        out = {"ok": True, "args": parsed}
    except SystemExit as e:  # argparse: usage + "error: ..." on stderr, exit 2
        text = err.getvalue().strip()
        msg = next((line for line in reversed(text.splitlines()) if "error:" in line), text)
        out = {"ok": False, "error": msg or f"exit {e.code}", "exit_code": e.code}
    except Exception as e:  # checks that raise rather than exit (e.g. ValueError)
        out = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    sys.stderr.write(err.getvalue())
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
