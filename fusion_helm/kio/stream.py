"""A multi-document stream cut into its documents' texts, every character kept.

A document starts at a ``---`` line; or at the first of the directive lines (``%YAML``, ``%TAG``)
before it, which end the document before as libyaml reads them; or, when the document before ended
with ``...``, right after that line. Line breaks are LF, CRLF, CR, NEL, U+2028 or U+2029, as libyaml
counts them; the parse of each document checks the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BREAKS = "\n\r\x85\u2028\u2029"
_LINE_START = rf"(?:\A\ufeff?|(?<=[{BREAKS}]))"
_MARKER = re.compile(rf"{_LINE_START}(?:(---|\.\.\.)(?=[ \t{BREAKS}]|\Z)|(%))")
_LINE_END = re.compile(rf"\r\n|[{BREAKS}]|\Z")
_SOURCE = re.compile(rf"{_LINE_START}# Source: ([^{BREAKS}]+)")


@dataclass(frozen=True)
class Chunk:
    text: str
    position: int
    """1-based, in the stream."""
    first_line: int
    """1-based line of the stream it starts on."""

    @property
    def source(self) -> str | None:
        """The chart file it came from, per Helm 3's ``# Source:`` comment."""
        match = _SOURCE.search(self.text)
        return match[1].strip() if match else None


def split(text: str) -> list[Chunk]:
    starts = [0]
    after_end: int | None = None
    directives: int | None = None
    for marker in _MARKER.finditer(text):
        if marker[2]:
            directives = marker.start() if directives is None else directives
        elif marker[1] == "...":
            after_end = _LINE_END.search(text, marker.end()).end()  # type: ignore[union-attr]
            directives = None
        else:
            start = directives if directives is not None else after_end if after_end is not None else marker.start()
            after_end = directives = None
            if start > starts[-1]:
                starts.append(start)
    chunks = []
    line = 1
    for position, (start, end) in enumerate(zip(starts, [*starts[1:], len(text)], strict=True), start=1):
        chunk = text[start:end]
        if chunk:
            chunks.append(Chunk(chunk, position, line))
        line += count_breaks(chunk)
    return chunks


def count_breaks(text: str) -> int:
    """Line breaks in TEXT as libyaml counts them (CRLF is one)."""
    return (text.count("\n") + text.count("\r") - text.count("\r\n")
            + text.count("\x85") + text.count("\u2028") + text.count("\u2029"))
