"""What an upgrade will do to a release's LeaderWorkerSets, DisaggregatedSets and PodGroups: the
current release manifest against the new render, object by object (a DisaggregatedSet role by role)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

from fusion_helm.base.kinds import DISAGGREGATED_SET, LEADER_WORKER_SET, POD_GROUP
from fusion_helm.base.labels import LABEL_SERVICE, one_per_replica
from fusion_helm.kio.keys import ObjectKey, latest_by_key
from fusion_helm.records import record

KINDS = (POD_GROUP.kind, DISAGGREGATED_SET.kind, LEADER_WORKER_SET.kind)


class Change(StrEnum):
    CREATED = "created"
    DELETED = "deleted"
    RESTARTED = "restarted"
    """A LeaderWorkerSet whose pod templates or size change: the LWS controller replaces its pods."""
    ROLLING = "rolling"
    """A role's one LeaderWorkerSet (layout role) whose pod templates or size change: the LWS controller
    replaces its groups one after another, under its rollout bounds, from its partition up. A
    DisaggregatedSet role, when any role's template changes: the set's controller rolls every role
    to a new revision together."""
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
    """Which groups a rolling change replaces, when a partition keeps some; why a DisaggregatedSet rolls."""
    role: str = ""
    """The DisaggregatedSet role it is about."""

    @property
    def subject(self) -> str:
        return f"{self.kind}/{self.name}" + (f" role {self.role}" if self.role else "")


def changes(current: Iterable[Mapping[str, Any]], new: Iterable[Mapping[str, Any]]) -> list[ObjectChange]:
    """Every LeaderWorkerSet, DisaggregatedSet role and PodGroup of either side, by kind and name."""
    before, after = latest_by_key(current, KINDS), latest_by_key(new, KINDS)
    found: list[ObjectChange] = []
    for key in sorted(before.keys() | after.keys(), key=lambda k: (KINDS.index(k[0]), k[1] or "", k[2])):
        if key[0] == DISAGGREGATED_SET.kind:
            found += [ObjectChange(*key, change, detail, role)
                      for role, (change, detail) in _set_changes(before.get(key), after.get(key)).items()]
        else:
            found.append(ObjectChange(*key, *_change(key, before.get(key), after.get(key))))
    return found


def _set_changes(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> dict[str, tuple[Change, str]]:
    """Role → its change. The set's revision is a hash of its roles' names and LeaderWorkerSet templates:
    when any of those changes, every role rolls to the new one (the roles that changed are named)."""
    before, after = _set_roles(old), _set_roles(new)
    changed = [name for name in {**before, **after}
               if _template(before.get(name)) != _template(after.get(name))]
    if old is None or new is None:
        return {name: (Change.CREATED if old is None else Change.DELETED, "") for name in {**before, **after}}
    why = f"a new revision of every role: {', '.join(sorted(changed))} changed" if changed else ""
    found = {}
    for name in sorted({**before, **after}):
        if name not in before or name not in after:
            found[name] = (Change.CREATED if name in after else Change.DELETED, why)
        elif changed:
            found[name] = (Change.ROLLING, why)
        else:
            found[name] = (Change.UNCHANGED if before[name] == after[name] else Change.UPDATED, "")
    return found


def _set_roles(disaggregated_set: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    roles = ((disaggregated_set or {}).get("spec") or {}).get("roles") or []
    return {role.get("name", ""): role for role in roles if isinstance(role, Mapping)}


def _template(role: Mapping[str, Any] | None) -> Any:
    return None if role is None else (role.get("spec") or {}).get("leaderWorkerTemplate")


def _change(key: ObjectKey, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> tuple[Change, str]:
    if old is None:
        return Change.CREATED, ""
    if new is None:
        return Change.DELETED, ""
    if _comparable(old) == _comparable(new):
        return Change.UNCHANGED, ""
    if key[0] == LEADER_WORKER_SET.kind and _pods_of(old) != _pods_of(new):
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
    width = max((len(c.subject) for c in found), default=0)
    lines = [f"{c.subject:<{width}}  {c.change.value}{f' ({c.detail})' if c.detail else ''}" for c in found]
    shown = [kind for kind in Change if kind is not Change.ROLLING or any(c.change is kind for c in found)]
    counts = ", ".join(f"{sum(c.change is kind for c in found)} {kind.value}" for kind in shown)
    return "\n".join([*lines, counts]) + "\n"


def to_json(found: list[ObjectChange]) -> list[dict[str, Any]]:
    return [{"kind": c.kind, "namespace": c.namespace, "name": c.name, **({"role": c.role} if c.role else {}),
             "change": c.change.value, **({"detail": c.detail} if c.detail else {})} for c in found]
