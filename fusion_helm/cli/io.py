"""Standard-stream transport shared by the command-line tools: read input, report errors."""

from __future__ import annotations

import sys


class InputError(Exception):
    """An input that cannot be read at all."""


def read_input(name: str) -> str:
    """The text of a file, or of standard input for ``-``."""
    try:
        if name == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(name, "rb") as file:
                data = file.read()
    except OSError as error:
        raise InputError(f"{name}: cannot read: {error.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{stream_name(name)}: not UTF-8 text (byte {error.start})") from None


def stream_name(name: str) -> str:
    return "standard input" if name == "-" else name


def fail(program: str, message: object) -> int:
    print(f"{program}: {message}", file=sys.stderr)
    return 1
