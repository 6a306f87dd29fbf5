"""The upstream CRD schemas of every kind the expansion writes or reads (LeaderWorkerSet, PodGroup,
Gateway, HTTPRoute, InferencePool, InferenceObjective, InferenceModel), shipped with the package.

``schemas/upstream.json`` is generated from the upstream CRDs by ``make generate``
(``fusion_helm.schemagen``): each version's structural schema without descriptions and CEL rules,
unknown fields refused where the API server prunes or refuses them.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from typing import Any

from fusion_helm.model.validation import Path, check_keywords, first_error

SCHEMAS = os.path.join(os.path.dirname(__file__), "schemas", "upstream.json")


def key(api_version: str, kind: str) -> str:
    return f"{api_version} {kind}"


@functools.cache
def _schemas() -> Mapping[str, Any]:
    with open(SCHEMAS, encoding="utf-8") as file:
        loaded: dict[str, Any] = json.load(file)
    return loaded


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


def checked_schemas() -> Mapping[str, Any]:
    """Every shipped schema, each checked to use only keywords the validator implements."""
    for value in _schemas().values():
        check_keywords(value)
    return _schemas()
