"""How deep a document nests, bounded before libyaml reads it: libyaml's time grows with the square
of the depth, and its composer overflows the C stack somewhere past ten thousand levels (the libyaml
of newer PyYAML wheels stops at a depth of its own instead, 1,000, with an error).

A bound from the text alone, linear and cheap, settles nearly every document: each level of block
nesting needs a deeper indentation (a sequence may share its mapping's) or an indicator on the same
line (``- - x``), and each level of flow nesting a bracket. Only a document the bound cannot clear is
parsed, event by event, and only until it is too deep.
"""

from __future__ import annotations

import re

from fusion_helm.kio.libyaml import yaml

_INDICATORS = ("-", "?", ":")
_BRACKETS = re.compile(r"[][{}]")
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"
"""libyaml's error where it refuses to nest further (its scanner may reach that depth before the
parser hands out the events that would cross ours)."""


def deeper_than(text: str, limit: int) -> bool:
    """Whether the YAML document TEXT nests mappings and sequences more than LIMIT levels deep."""
    if _upper_bound(text, limit) <= limit:
        return False
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > limit:
                    return True
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as error:
        # too deep for libyaml is too deep for us; anything else is malformed before it is too deep,
        # and the parse that follows says so
        return _LIBYAML_TOO_DEEP in str(getattr(error, "problem", None))
    return False


def _upper_bound(text: str, limit: int) -> int:
    indents: set[int] = set()
    compact = 0
    for line in text.splitlines():  # on every YAML line break, and a few more: the bound only grows
        rest = line.lstrip(" ")
        indents.add(len(line) - len(rest))
        count = 0
        while rest[:1] in _INDICATORS and rest[1:2] in (" ", "\t"):
            count += 1
            rest = rest[2:].lstrip(" \t")
        compact = max(compact, count)
    openers = text.count("[") + text.count("{")
    return 2 * len(indents) + compact + (openers if openers <= limit else _flow_depth(text)) + 1


def _flow_depth(text: str) -> int:
    depth = deepest = 0
    for char in _BRACKETS.findall(text):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
    return deepest
