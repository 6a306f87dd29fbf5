"""Putting expansions into the stream: each origin document followed (or replaced) by what it expands
to, and nothing in the stream named twice.

An object the stream already has under a generated object's kind, namespace and name is either a
previous expansion of the same origin — a stream post-rendered before, carrying the origin's service
label — and is replaced, so post-rendering twice changes nothing; or anything else, and is an error
naming both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fusion_helm.base.labels import LABEL_SERVICE
from fusion_helm.errors import InvalidSpec
from fusion_helm.kio.document import Document
from fusion_helm.kio.keys import ObjectKey, object_key


class Expansion:
    """ORIGIN, the name of the service it is (every generated name starts with it), what it made."""

    def __init__(self, origin: Document, service: str, made: Iterable[Document], replaces_origin: bool) -> None:
        self.origin = origin
        self.service = service
        self.made = list(made)
        self.replaces_origin = replaces_origin


def place(documents: list[Document], expansions: list[Expansion]) -> list[Document]:
    if not expansions:
        return documents
    by_origin = {id(expansion.origin): expansion for expansion in expansions}
    generated: dict[ObjectKey, Expansion] = {}
    for expansion in expansions:
        for made in expansion.made:
            key = object_key(made.obj)
            assert key is not None
            other = generated.setdefault(key, expansion)
            if other is not expansion:
                raise InvalidSpec(expansion.origin.where, "metadata.name",
                                  f"makes {_named(key)}, which {other.origin.where} makes too; rename one",
                                  subject=expansion.origin)
    names = _any_of({expansion.service for expansion in expansions})
    replaced = {id(document) for document in documents if id(document) not in by_origin
                and _previous_copy(document, names, generated)}
    out: list[Document] = []
    for document in documents:
        origin_of = by_origin.get(id(document))
        if origin_of is not None:
            out += [*([] if origin_of.replaces_origin else [document]), *origin_of.made]
        elif id(document) not in replaced:
            out.append(document)
    return out


def _any_of(names: set[str]) -> re.Pattern[str] | tuple[str, ...]:
    """What finds any of NAMES in a text: the names themselves, or one pattern when there are many."""
    if len(names) <= _FEW:
        return tuple(sorted(names))
    return re.compile("|".join(sorted(re.escape(name) for name in names)))


_FEW = 16


def _previous_copy(document: Document, names: re.Pattern[str] | tuple[str, ...],
                   generated: dict[ObjectKey, Expansion]) -> bool:
    """Whether DOCUMENT is an earlier expansion of the object that now makes its key (True), or names
    nothing generated (False); InvalidSpec when it is another object of a generated object's name.
    Every generated name starts with its service's NAMES: a document whose text holds none is not read."""
    if not document.could_match(names):
        return False
    key = object_key(document.head)
    expansion = generated.get(key) if key is not None else None
    if expansion is None:
        return False
    labels = document.metadata.get("labels")
    if not document.generated and isinstance(labels, dict) and labels.get(LABEL_SERVICE) == expansion.service:
        return True
    where = "another expansion" if document.generated else document.describe()
    raise InvalidSpec(expansion.origin.where, "metadata.name",
                      f"makes {_named(key)}, which the stream already has ({where}); rename one",  # type: ignore[arg-type]
                      subject=expansion.origin)


def _named(key: ObjectKey) -> str:
    kind, namespace, name = key
    return f"{kind} {name}" + (f" in namespace {namespace}" if namespace else "")
