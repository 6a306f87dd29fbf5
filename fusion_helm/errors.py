"""The one error type the pipeline raises for bad input."""

from __future__ import annotations


class InvalidSpec(Exception):
    """Input that cannot be rendered: names the document, the field path and what is wrong.

    Rendered as ``<where>: <path>: <message>``, e.g.
    ``InferenceService qwen: spec.roles[1].multinode.nodeCount: must be >= 1, got 0``.
    """

    def __init__(self, where: str, path: str, message: str) -> None:
        self.where = where
        self.path = path
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [self.where, self.path, self.message]
        return ": ".join(part for part in parts if part)


def format_path(parts: list[str | int] | tuple[str | int, ...]) -> str:
    """``["spec", "roles", 1, "name"]`` → ``spec.roles[1].name``."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text
