"""The upstream CRD schemas of every kind the expansion writes or reads (LeaderWorkerSet, PodGroup,
Gateway, HTTPRoute, InferencePool, InferenceObjective, InferenceModel, PodMonitor), shipped with the package.

``generated/upstream.py`` is written from the upstream CRDs by ``make generate``
(``fusion_helm.schemagen``): each version's structural schema without descriptions and CEL rules,
unknown fields refused where the API server prunes or refuses them — cut into pieces, each built
only when a value needs it: a post-render builds a few kilobytes of the 80 it ships.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping

from fusion_helm.model.validation import Path, check_keywords, first_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

class _Piece(Mapping[str, "Any"]):
    """A sub-schema, built from the generated module when first looked into."""

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


def _linked(node: Any) -> Any:
    """NODE with each ``{"$ref": id}`` made a piece."""
    if isinstance(node, dict):
        if len(node) == 1 and "$ref" in node:
            return _Piece(node["$ref"])
        return {name: _linked(value) for name, value in node.items()}
    if isinstance(node, list):
        return [_linked(item) for item in node]
    return node


@functools.cache
def _schemas() -> Mapping[str, Any]:
    from fusion_helm.model.generated.upstream import SCHEMAS

    linked: Mapping[str, Any] = _linked(SCHEMAS)
    return linked


@functools.cache
def _piece(piece: str) -> Mapping[str, Any]:
    from fusion_helm.model.generated.upstream import PIECES

    linked: Mapping[str, Any] = _linked(PIECES[piece]())
    return linked


def key(api_version: str, kind: str) -> str:
    return f"{api_version} {kind}"


def has_schema(api_version: str, kind: str) -> bool:
    return key(api_version, kind) in _schemas()


def schema(api_version: str, kind: str, *path: str) -> Mapping[str, Any]:
    """The schema of KIND, or of the field at PATH in it (through properties and items)."""
    node: Mapping[str, Any] = _schemas()[key(api_version, kind)]
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
    schemas: dict[str, Any] = whole(_schemas())
    for value in schemas.values():
        check_keywords(value)
    return schemas
