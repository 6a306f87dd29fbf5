"""A multi-document stream cut into its documents' texts, every character kept.

A document starts at a ``---`` line; or at the first of the directive lines (``%YAML``, ``%TAG``)
before it, which end the document before as libyaml reads them; or, when the document before ended
with ``...``, right after that line. Line breaks are LF, CRLF, CR, NEL, U+2028 or U+2029, as libyaml
counts them; the parse of each document checks the rest.
"""

BREAKS = "\n\r\x85\u2028\u2029"
_TOKEN_END = " \t" + BREAKS
_ESCAPED = "xuU" + BREAKS
_TAGS = ("!!binary", "tag:yaml.org,2002:", "%TAG")
"""An escape that writes a letter (\\x, \\u, \\U) or joins two lines of a double-quoted scalar, and
base64 under a binary tag however that tag is written: text through which a scalar's letters may be
other than its characters. (Other escapes, folding and quoting cannot make a word.)"""
_ESCAPE_PAIRS = tuple("\\" + letter for letter in _ESCAPED)
SOURCE = "# Source: "


class Chunk:
    """One document's text, and where it stands in the stream (1-based position and first line)."""

    __slots__ = ("_disguises", "first_line", "position", "text")

    def __init__(self, text: str, position: int, first_line: int) -> None:
        self.text, self.position, self.first_line = text, position, first_line
        self._disguises: bool | None = None

    def could_hold(self, *words: str) -> bool:
        """False when no value of the document can be any of WORDS (each must then appear as written),
        so it need not be parsed for them."""
        text = self.text
        return all(word in text for word in words) or self.disguises

    @property
    def disguises(self) -> bool:
        """Whether a scalar of the document may hold letters not written out as they are (asked of
        every document by every filter: the scan is kept)."""
        if self._disguises is None:
            self._disguises = disguises(self.text)
        return self._disguises

    @property
    def source(self) -> str | None:
        """The chart file it came from, per Helm 3's ``# Source:`` comment."""
        text = self.text
        at = text.find(SOURCE)
        while at >= 0 and not _line_starts_at(text, at):
            at = text.find(SOURCE, at + 1)
        if at < 0:
            return None
        start = at + len(SOURCE)
        return text[start:_line_end(text, start)].strip() or None


def split(text: str) -> list[Chunk]:
    starts = [0]
    after_end: int | None = None
    directives: int | None = None
    for at, marker in _markers(text):
        if marker == "%":
            directives = at if directives is None else directives
        elif marker == "...":
            end = _line_end(text, at + 3)
            after_end = end + (2 if text.startswith("\r\n", end) else 1 if end < len(text) else 0)
            directives = None
        else:
            start = directives if directives is not None else after_end if after_end is not None else at
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


def _markers(text: str) -> list[tuple[int, str]]:
    """Each ``---`` or ``...`` line and each directive (``%``) line, by position: where libyaml sees a
    document start or end, or a directive (each at the start of a line, the first two followed by a
    blank, a line break or the end)."""
    found = []
    for marker in ("---", "...", "%"):
        at = text.find(marker)
        while at >= 0:
            end = at + len(marker)
            if _line_starts_at(text, at) and (marker == "%" or end == len(text) or text[end] in _TOKEN_END):
                found.append((at, marker))
            at = text.find(marker, at + 1)
    return sorted(found)


def _line_starts_at(text: str, at: int) -> bool:
    return at == 0 or text[at - 1] in BREAKS or (at == 1 and text[0] == "\ufeff")


def _line_end(text: str, at: int) -> int:
    """Where the line holding AT ends: its line break, or the end of TEXT."""
    ends = [end for end in (text.find(b, at) for b in BREAKS) if end >= 0]
    return min(ends, default=len(text))


def count_breaks(text: str) -> int:
    """Line breaks in TEXT as libyaml counts them (CRLF is one)."""
    return (text.count("\n") + text.count("\r") - text.count("\r\n")
            + text.count("\x85") + text.count("\u2028") + text.count("\u2029"))


def disguises(text: str) -> bool:
    """Whether TEXT may hold a scalar whose letters are not written out as they are."""
    if any(tag in text for tag in _TAGS):
        return True
    if not any(pair in text for pair in _ESCAPE_PAIRS):  # most texts: no pair to tell apart
        return False
    at = text.find("\\")
    while at >= 0:
        if at + 1 < len(text) and text[at + 1] in _ESCAPED:
            return True
        at = text.find("\\", at + 2)
    return False
