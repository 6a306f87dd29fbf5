"""Objects by (kind, namespace, name): how Kubernetes tells one object from another."""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ObjectKey = tuple[str, str | None, str]


def object_key(obj: Mapping[str, Any]) -> ObjectKey | None:
    """The key of an object (or a document's head), None unless kind and name are strings."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        return None
    kind, name, namespace = obj.get("kind"), metadata.get("name"), metadata.get("namespace")
    if not isinstance(kind, str) or not isinstance(name, str):
        return None
    return kind, namespace if isinstance(namespace, str) else None, name


def latest_by_key(objects: Iterable[Mapping[str, Any]], kinds: Container[str]) -> dict[ObjectKey, Mapping[str, Any]]:
    """Objects of KINDS by key; a later copy replaces an earlier one (a stream rendered twice, or
    post-rendered output expanded again, names each object more than once)."""
    found: dict[ObjectKey, Mapping[str, Any]] = {}
    for obj in objects:
        key = object_key(obj)
        if key is not None and key[0] in kinds:
            found[key] = obj
    return found
