"""How deep a document nests, bounded before libyaml reads it: libyaml's time grows with the square
of the depth, and its composer overflows the C stack somewhere past ten thousand levels.

A bound from the text alone, linear and cheap, settles nearly every document: each level of block
nesting needs a deeper indentation (a sequence may share its mapping's) or an indicator on the same
line (``- - x``), and each level of flow nesting a bracket. Only a document the bound cannot clear is
parsed, event by event, and only until it is too deep.
"""

from __future__ import annotations

import re

import yaml

from fusion_helm.kio.stream import BREAKS

_INDENT = re.compile(rf"(?:\A|(?<=[{BREAKS}]))( *)((?:[-?:][ \t]+)*)")
_BRACKET = re.compile(r"[\[\]{}]")


def deeper_than(text: str, limit: int) -> bool:
    """Whether the YAML document TEXT nests mappings and sequences more than LIMIT levels deep."""
    if _upper_bound(text) <= limit:
        return False
    depth = 0
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > limit:
                return True
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return False


def _upper_bound(text: str) -> int:
    indents: set[int] = set()
    compact = 0
    for spaces, indicators in _INDENT.findall(text):
        indents.add(len(spaces))
        if indicators:
            compact = max(compact, indicators.count("-") + indicators.count("?") + indicators.count(":"))
    flow = deepest = 0
    for bracket in _BRACKET.findall(text):
        flow = flow + 1 if bracket in "[{" else max(flow - 1, 0)
        deepest = max(deepest, flow)
    return 2 * len(indents) + compact + deepest + 1
