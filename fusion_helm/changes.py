"""What an upgrade will do to a release's LeaderWorkerSets and PodGroups: the current release
manifest against the new render, object by object."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

from fusion_helm.kio.keys import ObjectKey, latest_by_key
from fusion_helm.labels import LABEL_SERVICE, one_per_replica
from fusion_helm.records import record

KINDS = ("PodGroup", "LeaderWorkerSet")


class Change(StrEnum):
    CREATED = "created"
    DELETED = "deleted"
    RESTARTED = "restarted"
    """A LeaderWorkerSet whose pod templates or size change: the LWS controller replaces its pods."""
    ROLLING = "rolling"
    """A role's one LeaderWorkerSet (layout role) whose pod templates or size change: the LWS controller
    replaces its groups one after another, under its rollout bounds, from its partition up."""
    UPDATED = "updated"
    """Changed without touching running pods (a PodGroup, labels, the restart policy)."""
    UNCHANGED = "unchanged"


@record
class ObjectChange:
    kind: str
    namespace: str | None
    name: str
    change: Change
    detail: str = ""
    """Which groups a rolling change replaces, when a partition keeps some."""


def changes(current: Iterable[Mapping[str, Any]], new: Iterable[Mapping[str, Any]]) -> list[ObjectChange]:
    """Every LeaderWorkerSet and PodGroup of either side, by kind and name."""
    before, after = latest_by_key(current, KINDS), latest_by_key(new, KINDS)
    return [ObjectChange(*key, *_change(key, before.get(key), after.get(key)))
            for key in sorted(before.keys() | after.keys(), key=lambda k: (KINDS.index(k[0]), k[1] or "", k[2]))]


def _change(key: ObjectKey, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> tuple[Change, str]:
    if old is None:
        return Change.CREATED, ""
    if new is None:
        return Change.DELETED, ""
    if _comparable(old) == _comparable(new):
        return Change.UNCHANGED, ""
    if key[0] == "LeaderWorkerSet" and _pods_of(old) != _pods_of(new):
        return (Change.ROLLING, _partitioned(new)) if _is_role_layout(new) else (Change.RESTARTED, "")
    return Change.UPDATED, ""


def _is_role_layout(lws: Mapping[str, Any]) -> bool:
    """One of ours whose groups are replicas: in the replica layout each LWS carries its replica's index."""
    labels = (lws.get("metadata") or {}).get("labels") or {}
    return LABEL_SERVICE in labels and not one_per_replica(labels)


def _partitioned(lws: Mapping[str, Any]) -> str:
    """E.g. "groups 2-3; partition keeps 0-1"; empty when every group rolls."""
    spec = lws.get("spec") or {}
    partition = ((spec.get("rolloutStrategy") or {}).get("rollingUpdateConfiguration") or {}).get("partition") or 0
    if partition <= 0:
        return ""
    replicas = spec.get("replicas")  # none while an autoscaler owns the count
    kept = _groups(0, partition - 1)
    if replicas is None:
        return f"groups {partition} and up; partition keeps {kept}"
    if partition >= replicas:
        return f"no group; partition keeps {_groups(0, replicas - 1)}" if replicas else "no group"
    return f"{_groups(partition, replicas - 1, named=True)}; partition keeps {kept}"


def _groups(first: int, last: int, named: bool = False) -> str:
    span = str(first) if first == last else f"{first}-{last}"
    return f"{'group' if first == last else 'groups'} {span}" if named else span


def _comparable(obj: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    metadata = obj.get("metadata") or {}
    return metadata.get("labels") or {}, metadata.get("annotations") or {}, obj.get("spec")


def _pods_of(lws: Mapping[str, Any]) -> tuple[Any, ...]:
    template = (lws.get("spec") or {}).get("leaderWorkerTemplate") or {}
    return template.get("size"), template.get("leaderTemplate"), template.get("workerTemplate")


def to_table(found: list[ObjectChange]) -> str:
    width = max((len(f"{c.kind}/{c.name}") for c in found), default=0)
    lines = [f"{f'{c.kind}/{c.name}':<{width}}  {c.change.value}{f' ({c.detail})' if c.detail else ''}"
             for c in found]
    shown = [kind for kind in Change if kind is not Change.ROLLING or any(c.change is kind for c in found)]
    counts = ", ".join(f"{sum(c.change is kind for c in found)} {kind.value}" for kind in shown)
    return "\n".join([*lines, counts]) + "\n"


def to_json(found: list[ObjectChange]) -> list[dict[str, Any]]:
    return [{"kind": c.kind, "namespace": c.namespace, "name": c.name, "change": c.change.value,
             **({"detail": c.detail} if c.detail else {})} for c in found]
