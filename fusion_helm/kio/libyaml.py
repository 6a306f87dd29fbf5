"""PyYAML — for its bindings to libyaml — imported without compiling what only its pure-Python reader
uses: ``yaml.reader.Reader.NON_PRINTABLE``, a character class over nearly all of Unicode, takes more
than half of what importing PyYAML costs, on every post-render, and libyaml never needs it. It is
compiled the first time anything does use it."""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_NON_PRINTABLE_START = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-"


class _Deferred:
    """A pattern compiled when first used."""

    def __init__(self, pattern: str, flags: int) -> None:
        self._pattern, self._flags = pattern, flags
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = _compile(self._pattern, self._flags)
        return getattr(self._compiled, name)


_compile = re.compile


def _compile_unless_non_printable(pattern: Any, flags: int = 0) -> Any:
    if isinstance(pattern, str) and pattern.startswith(_NON_PRINTABLE_START):
        return _Deferred(pattern, flags)
    return _compile(pattern, flags)


re.compile = _compile_unless_non_printable
try:
    import yaml
    from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
finally:
    re.compile = _compile

__all__ = ["MappingNode", "Node", "ScalarNode", "SequenceNode", "yaml"]
