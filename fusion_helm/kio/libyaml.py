"""PyYAML — for its bindings to libyaml — imported without compiling its regular expressions.

PyYAML compiles them as it is imported: its pure-Python reader's ``NON_PRINTABLE`` (a character class
over nearly all of Unicode, more than half of what importing PyYAML costs), the constructor's
timestamp and the resolver's implicit types. Reading, we resolve plain scalars ourselves and libyaml
never needs the reader; writing, the resolver's patterns are asked only of the scalars libyaml lays
out. So each is compiled the first time anything uses it, not on every post-render.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


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


def _deferred(pattern: Any, flags: int = 0) -> Any:
    return _Deferred(pattern, flags) if isinstance(pattern, str) else _compile(pattern, flags)


re.compile = _deferred
try:
    import yaml
    from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
finally:
    re.compile = _compile

__all__ = ["MappingNode", "Node", "ScalarNode", "SequenceNode", "yaml"]
