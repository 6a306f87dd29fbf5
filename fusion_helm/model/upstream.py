"""The upstream CRD schemas of every kind the expansion writes or reads (LeaderWorkerSet, PodGroup,
Gateway, HTTPRoute, InferencePool, InferenceObjective, InferenceModel), shipped with the package.

``schemas/upstream.schemas`` is generated from the upstream CRDs by ``make generate``
(``fusion_helm.schemagen``): each version's structural schema without descriptions and CEL rules,
unknown fields refused where the API server prunes or refuses them — cut into pieces, each parsed
only when a value needs it: a post-render reads a few kilobytes of the 170 it ships.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator, Mapping

from fusion_helm.model.validation import Path, check_keywords, first_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

UPSTREAM = "upstream.schemas"
SCHEMAS = os.path.join(os.path.dirname(__file__), "schemas", UPSTREAM)


class _Piece(Mapping[str, "Any"]):
    """A sub-schema, parsed from the shipped text when first looked into."""

    __slots__ = ("_id", "_schema")

    def __init__(self, piece: str) -> None:
        self._id = piece
        self._schema: Mapping[str, Any] | None = None

    def _loaded(self) -> Mapping[str, Any]:
        if self._schema is None:
            self._schema = _piece(self._id)
        return self._schema

    def __getitem__(self, key: str) -> Any:
        return self._loaded()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._loaded().get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


def _refs(obj: dict[str, Any]) -> Any:
    return _Piece(obj["$ref"]) if len(obj) == 1 and "$ref" in obj else obj


@functools.cache
def _shipped() -> tuple[str, int, Mapping[str, Any]]:
    """The file's text, where its pieces start, and its header."""
    with open(SCHEMAS, encoding="utf-8") as file:
        text = file.read()
    end = text.index("\n")
    return text, end + 1, json.loads(text[:end], object_hook=_refs)


@functools.cache
def _piece(piece: str) -> Mapping[str, Any]:
    text, body, header = _shipped()
    start, end = header["pieces"][piece]
    loaded: Mapping[str, Any] = json.loads(text[body + start:body + end], object_hook=_refs)
    return loaded


def key(api_version: str, kind: str) -> str:
    return f"{api_version} {kind}"


def has_schema(api_version: str, kind: str) -> bool:
    return key(api_version, kind) in _shipped()[2]["schemas"]


def schema(api_version: str, kind: str, *path: str) -> Mapping[str, Any]:
    """The schema of KIND, or of the field at PATH in it (through properties and items)."""
    node: Mapping[str, Any] = _shipped()[2]["schemas"][key(api_version, kind)]
    for part in path:
        node = node["items"] if part == "[]" else node["properties"][part]
    return node


def violation(obj: Mapping[str, Any]) -> tuple[Path, str] | None:
    """The first way OBJ breaks its kind's schema: (field path, message), or None."""
    return first_error(schema(obj["apiVersion"], obj["kind"]), obj)


def whole(node: Any) -> Any:
    """NODE with every piece in it read: plain data."""
    if isinstance(node, Mapping):
        return {name: whole(value) for name, value in node.items()}
    if isinstance(node, list):
        return [whole(item) for item in node]
    return node


def checked_schemas() -> dict[str, Any]:
    """Every shipped schema whole, each checked to use only keywords the validator implements."""
    schemas: dict[str, Any] = whole(_shipped()[2]["schemas"])
    for value in schemas.values():
        check_keywords(value)
    return schemas
