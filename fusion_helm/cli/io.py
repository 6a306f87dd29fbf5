"""Standard-stream transport shared by the command-line tools: read input, report errors."""

import os
import sys

from fusion_helm.limits import MAX_INPUT_BYTES

DISTRIBUTION = "fusioninfer-helm"
SIGPIPE_STATUS = 128 + 13
"""What a shell reports for a command SIGPIPE stopped: a reader of its output that went away."""


class InputError(Exception):
    """An input that cannot be read at all."""


def read_input(name: str) -> str:
    """The text of a file, or of standard input for ``-``."""
    try:
        if name == "-":
            data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        else:
            with open(name, "rb") as file:
                data = file.read(MAX_INPUT_BYTES + 1)
    except OSError as error:
        raise InputError(f"{name}: cannot read: {error.strerror}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(f"{stream_name(name)}: over the limit of {MAX_INPUT_BYTES // 2**20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{stream_name(name)}: not UTF-8 text (byte {error.start})") from None


def stream_name(name: str) -> str:
    return "standard input" if name == "-" else name


def fail(program: str, message: object) -> int:
    print(f"{program}: {message}", file=sys.stderr)
    return 1


def version(program: str) -> str:
    """PROGRAM's ``--version`` line: the installed package's version."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        number = installed(DISTRIBUTION)
    except PackageNotFoundError:
        number = "unknown (run from a source tree, not installed)"
    return f"{program} {number}\n"


def output_closed() -> int:
    """Standard output's reader went away (``fusion-helm plan -o json | head``): nothing more is written, and
    nothing said of it — the exit status a shell gives a command SIGPIPE stops. Standard output is pointed at
    the null device, so that flushing it at exit raises nothing either."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return SIGPIPE_STATUS
