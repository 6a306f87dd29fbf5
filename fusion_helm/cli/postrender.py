"""``fusion-postrender``: the Helm post-renderer — a multi-document stream on stdin, expanded on stdout.

It runs inside every helm call, so it starts lean: its flags are read by hand (argparse costs more
to import than the rest of a small render), and the pipeline loads the model and YAML library only
when the stream has something for them.
"""

import os
import sys

from fusion_helm.base.kinds import TAKE_OVER_LAYOUTS
from fusion_helm.cli.io import InputError, fail, output_closed, read_input, version

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

PROG = "fusion-postrender"
HANDED_ON = "FUSION_POSTRENDER_STDERR_HANDED_ON"
"""Set by helm 4's plugin (plugins/fusion-postrender), which hands the post-renderer's standard error on."""

def _usage() -> str:
    from fusion_helm.options import LAYOUT_FLAG, TAKE_OVER_FLAG

    return f"usage: {PROG} [-h] [{TAKE_OVER_FLAG}] [{LAYOUT_FLAG} {{{','.join(TAKE_OVER_LAYOUTS)}}}]"


def _help() -> str:
    """The help, made only when asked for: the flags' names are the options module's."""
    from fusion_helm.options import LAYOUT_FLAG, TAKE_OVER_FLAG

    return f"""{_usage()}

Expand every InferenceService (fusioninfer.io/v1alpha1) in the YAML stream on standard input into
its LeaderWorkerSets and Volcano PodGroup, and write the stream to standard output. Documents of
other kinds pass through byte for byte. On bad input: one error on standard error naming the
document and field, a non-zero exit and nothing on standard output.

A LeaderWorkerSet annotated fusioninfer.io/take-over: "true" (with {TAKE_OVER_FLAG}: every one) is
taken over: in the replica layout replaced by one LeaderWorkerSet per replica, in the role layout
kept whole under its own name (its rollout, networkConfig and Services selecting it by name keep
working); when multi-node, a Volcano PodGroup is added. The annotation fusioninfer.io/layout: role
(or replica) on the LeaderWorkerSet chooses the layout; {LAYOUT_FLAG} chooses it for those
without.

Helm 3:  helm install NAME CHART --post-renderer fusion-postrender
Helm 4:  helm plugin install "$(fusion-helm plugin-dir fusion-postrender)"   (once)
         helm install NAME CHART --post-renderer fusion-postrender
Either:  --post-renderer-args {TAKE_OVER_FLAG} --post-renderer-args {LAYOUT_FLAG}=role

options:
  -h, --help            show this help message and exit
  --version             show the installed version and exit
  {TAKE_OVER_FLAG}       take over every LeaderWorkerSet in the stream, annotated or not
  {LAYOUT_FLAG} {{{','.join(TAKE_OVER_LAYOUTS)}}}
                        the layout of a taken-over LeaderWorkerSet without the annotation
                        fusioninfer.io/layout (default: {TAKE_OVER_LAYOUTS[0]})
"""


def run(argv: list[str] | None = None) -> int:
    """The post-renderer as a command; what main() returns."""
    args = sys.argv[1:] if argv is None else argv
    if "-h" in args or "--help" in args:
        sys.stdout.write(_help())
        return 0
    if "--version" in args:
        sys.stdout.write(version(PROG))
        return 0
    options = None  # the defaults: without flags, the options module need not be loaded
    if args:
        from fusion_helm.options import UsageError, from_flags

        try:
            options = from_flags(args)
        except UsageError as error:
            return _usage_error(str(error))
    from fusion_helm.pipeline import render_advised

    try:
        output, warnings = render_advised(read_input("-"), options)
    except _refusals() as error:
        return fail(PROG, error)
    try:
        sys.stdout.write(output)
        sys.stdout.flush()
    except BrokenPipeError:
        return output_closed()
    _warn([f"{PROG}: warning: {line}" for line in warnings])
    return 0


def _warn(lines: list[str]) -> None:
    """LINES on standard error, and on the terminal helm runs in: helm 3 and 4 keep a post-renderer's
    standard error to themselves unless it fails, so a warning written there alone reaches nobody on
    `helm install`. Without a terminal (CI, Argo CD) `fusion-helm validate` says the same."""
    if not lines:
        return
    text = "".join(f"{line}\n" for line in lines)
    sys.stderr.write(text)
    sys.stderr.flush()
    if os.isatty(sys.stderr.fileno()) or os.environ.get(HANDED_ON):
        return  # the terminal has them already, or helm 4's plugin hands them on
    try:
        terminal = os.open("/dev/tty", os.O_WRONLY | os.O_NOCTTY)
    except OSError:
        return
    try:
        os.write(terminal, text.encode())
    except OSError:
        pass
    finally:
        os.close(terminal)


def _refusals() -> tuple[type[Exception], ...]:
    """The errors reported in one line with exit status 1. An except clause names them only once
    something is raised: a clean render never loads the errors module."""
    from fusion_helm.errors import InvalidSpec

    return InputError, InvalidSpec


def _usage_error(message: str) -> int:
    print(f"{_usage()}\n{PROG}: error: {message}", file=sys.stderr)
    return 2


def main() -> "NoReturn":
    """Run, then leave without tearing the interpreter down: its modules and the stream's objects are
    freed by the exit itself, a few milliseconds sooner, on every helm call."""
    status = run()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    main()
