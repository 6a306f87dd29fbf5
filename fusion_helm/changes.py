"""What an upgrade will do to a release's LeaderWorkerSets and PodGroups: the current release
manifest against the new render, object by object."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

from fusion_helm.kio.keys import ObjectKey, latest_by_key
from fusion_helm.records import record

KINDS = ("PodGroup", "LeaderWorkerSet")


class Change(StrEnum):
    CREATED = "created"
    DELETED = "deleted"
    RESTARTED = "restarted"
    """A LeaderWorkerSet whose pod templates or size change: the LWS controller replaces its pods."""
    UPDATED = "updated"
    """Changed without touching running pods (a PodGroup, labels, the restart policy)."""
    UNCHANGED = "unchanged"


@record
class ObjectChange:
    kind: str
    namespace: str | None
    name: str
    change: Change


def changes(current: Iterable[Mapping[str, Any]], new: Iterable[Mapping[str, Any]]) -> list[ObjectChange]:
    """Every LeaderWorkerSet and PodGroup of either side, by kind and name."""
    before, after = latest_by_key(current, KINDS), latest_by_key(new, KINDS)
    return [ObjectChange(*key, _change(key, before.get(key), after.get(key)))
            for key in sorted(before.keys() | after.keys(), key=lambda k: (KINDS.index(k[0]), k[1] or "", k[2]))]


def _change(key: ObjectKey, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> Change:
    if old is None:
        return Change.CREATED
    if new is None:
        return Change.DELETED
    if _comparable(old) == _comparable(new):
        return Change.UNCHANGED
    if key[0] == "LeaderWorkerSet" and _pods_of(old) != _pods_of(new):
        return Change.RESTARTED
    return Change.UPDATED


def _comparable(obj: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    metadata = obj.get("metadata") or {}
    return metadata.get("labels") or {}, metadata.get("annotations") or {}, obj.get("spec")


def _pods_of(lws: Mapping[str, Any]) -> tuple[Any, ...]:
    template = (lws.get("spec") or {}).get("leaderWorkerTemplate") or {}
    return template.get("size"), template.get("leaderTemplate"), template.get("workerTemplate")


def to_table(found: list[ObjectChange]) -> str:
    width = max((len(f"{c.kind}/{c.name}") for c in found), default=0)
    lines = [f"{f'{c.kind}/{c.name}':<{width}}  {c.change.value}" for c in found]
    counts = ", ".join(f"{sum(c.change is kind for c in found)} {kind.value}" for kind in Change)
    return "\n".join([*lines, counts]) + "\n"


def to_json(found: list[ObjectChange]) -> list[dict[str, Any]]:
    return [{"kind": c.kind, "namespace": c.namespace, "name": c.name, "change": c.change.value} for c in found]
