"""Run an LLM engine's own command-line parser over a command line we render.

Standalone: run by the engine venv's python (ci/engines/build.sh), never imported by
the test suite.

    python tests/engine_cli.py vllm ARG...    # ARG... = the words after `vllm serve`
    python tests/engine_cli.py sglang ARG...  # the words after `python3 -m sglang.launch_server`
    python tests/engine_cli.py vllm -         # a JSON list of such ARG lists on stdin, one import for all
    python tests/engine_cli.py vllm-launch -  # each then goes down `vllm serve`'s launch path, to where it
                                              # would start engines or API servers (which it does not)
    python tests/engine_cli.py vllm-options   # every option string of `vllm serve`'s parser, and SGLang's
    python tests/engine_cli.py sglang-options

Prints one JSON object on stdout (with -, a JSON list of them) and exits 0:
    {"ok": true, "args": {...parsed values of the flags we render...}}
    {"ok": true, "args": {...}, "launch": "headless" | "api-server" | "api-servers" | ...}   (vllm-launch)
    {"ok": false, "error": "<the parser's or the launch path's message>"}
    {"<option string>": {"spellings": [...every option string of its action...], "takes_value": bool,
                         "frontend": bool (vLLM: one of the API server's own options)}}   (…-options)
Engine log output goes to stderr.
"""

from __future__ import annotations

import argparse
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


def vllm_parser():
    """`vllm`'s parser with its `serve` subcommand, as vllm/entrypoints/cli/main.py builds it."""
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser = FlexibleArgumentParser(prog="vllm")
    subparsers = parser.add_subparsers(required=False, dest="subparser")
    serve = ServeSubcommand()
    serve_parser = serve.subparser_init(subparsers)
    return parser, serve, serve_parser


def vllm_args(argv: list[str]):
    parser, serve, _ = vllm_parser()
    # FlexibleArgumentParser rewrites `--model X` into the positional only when the
    # first word is "serve", exactly as the `vllm` CLI does.
    args = parser.parse_args(["serve", *argv])
    serve.validate(args)  # validate_parsed_serve_args, as main() does
    return serve, args


def vllm_parse(argv: list[str]) -> dict:
    """Parse like `vllm serve ARG...` (vllm/entrypoints/cli/main.py + cli/serve.py)."""
    _, args = vllm_args(argv)
    if getattr(args, "model_tag", None) is not None:  # ServeSubcommand.cmd does this
        args.model = args.model_tag
    return {k: getattr(args, k, None) for k in VLLM_KEYS}


class Launched(Exception):
    """Raised where `vllm serve` would start engines or API servers: the launch path's checks all passed."""


def vllm_launch(argv: list[str]) -> dict:
    """Parse like `vllm serve ARG...`, then run ServeSubcommand.cmd — vLLM's launch path, its checks
    included — up to where it would start anything: the engines of a headless node (in run_headless, after
    its own checks), one API server, several, or the data-parallel supervisor."""
    serve, args = vllm_args(argv)
    import vllm
    import vllm.entrypoints.cli.serve as launch

    def stop(where: str):
        def launched(*_: object, **__: object) -> None:
            raise Launched(where)
        return launched

    class Uvloop:  # run_server's coroutine, never run
        @staticmethod
        def run(coroutine: object) -> None:
            coroutine.close()  # type: ignore[attr-defined]
            raise Launched("api-server")

    vllm.AsyncEngineArgs.from_cli_args = stop("headless")  # run_headless's first step past its own checks
    launch.run_multi_api_server = stop("api-servers")
    launch.run_dp_supervisor = stop("dp-supervisor")
    launch.uvloop = Uvloop
    try:
        serve.cmd(args)
    except Launched as reached:
        return {k: getattr(args, k, None) for k in VLLM_KEYS} | {"launch": str(reached)}
    raise RuntimeError("vllm serve returned without launching anything")


def options(engine: str) -> dict:
    """Every option string of ENGINE's server parser: its action's other spellings, whether it takes a value,
    and (vLLM) whether it is one of its API server's own options (FrontendArgs, or the serve command's
    headless, API server count and gRPC switches)."""
    if engine == "vllm":
        _, _, parser = vllm_parser()
        from vllm.entrypoints.launchers.cli_args import FrontendArgs

        frontend_parser = argparse.ArgumentParser(add_help=False)
        FrontendArgs.add_cli_args(frontend_parser)
        frontend = {string for action in frontend_parser._actions for string in action.option_strings}
        frontend |= {"--headless", "--api-server-count", "-asc", "--grpc"}
    else:
        from sglang.srt.server_args import ServerArgs

        parser = argparse.ArgumentParser(prog="sglang serve")
        ServerArgs.add_cli_args(parser)
        frontend = set()
    return {string: {"spellings": list(action.option_strings), "takes_value": action.nargs != 0,
                     "frontend": string in frontend}
            for action in parser._actions for string in action.option_strings}


def sglang_parse(argv: list[str]) -> dict:
    """Parse like `python3 -m sglang.launch_server ARG...` (prepare_server_args)."""
    from sglang.srt.server_args import prepare_server_args

    # argparse.ArgumentParser(prog="sglang serve") + ServerArgs.add_cli_args, then
    # ServerArgs.from_cli_args (which runs ServerArgs.__post_init__'s checks).
    server_args = prepare_server_args(argv)
    return {k: getattr(server_args, k, None) for k in SGLANG_KEYS}


def main(argv: list[str]) -> int:
    if argv and argv[0].endswith("-options"):
        print(json.dumps(options(argv[0].removesuffix("-options"))))
        return 0
    if not argv or argv[0] not in ("vllm", "sglang", "vllm-launch"):
        print("usage: engine_cli.py {vllm|sglang|vllm-launch} ARG...", file=sys.stderr)
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
            if engine == "vllm-launch":
                parsed = vllm_launch(rest)
                launch = parsed.pop("launch")
                out = {"ok": True, "args": parsed, "launch": launch}
            else:
                out = {"ok": True, "args": vllm_parse(rest) if engine == "vllm" else sglang_parse(rest)}
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
