"""Standard-stream transport shared by the command-line tools: read input, report errors."""

import sys

from fusion_helm.limits import MAX_INPUT_BYTES


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
