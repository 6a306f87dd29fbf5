"""Names and labels of generated objects, and the length limits they must respect."""

from __future__ import annotations

from fusion_helm.errors import InvalidSpec
from fusion_helm.labels import (
    LABEL_COMPONENT_TYPE,
    LABEL_REPLICA_INDEX,
    LABEL_ROLE_NAME,
    LABEL_SERVICE,
    LABEL_SPEC_HASH,
)
from fusion_helm.model import InferenceService, Role

__all__ = ["LABEL_COMPONENT_TYPE", "LABEL_REPLICA_INDEX", "LABEL_ROLE_NAME", "LABEL_SERVICE", "LABEL_SPEC_HASH"]

MAX_NAME = 63
"""Pod names are host names and LWS names are label values: both DNS labels."""
MAX_STATEFULSET_NAME = 52
"""A StatefulSet's pods carry ``controller-revision-hash: <name>-<10-char hash>``, a label value."""


def lws_name(service: str, role: str, index: int) -> str:
    return f"{service}-{role}-{index}"


def task_name(role: str, index: int) -> str:
    """The replica's task (``volcano.sh/task-spec``): Volcano groups a job's pods by it (e.g. fit errors)."""
    return f"{role}-{index}"


def role_labels(service: InferenceService, role: Role) -> dict[str, str]:
    return {
        LABEL_SERVICE: service.name,
        LABEL_COMPONENT_TYPE: str(role.component_type),
        LABEL_ROLE_NAME: role.name,
    }


def check_name_lengths(service: InferenceService, role: Role) -> None:
    """Refuse a role whose LeaderWorkerSet, StatefulSet or pod names would be too long.

    LWS ``x`` makes a leader StatefulSet ``x``, leader pods ``x-0``, and for multi-node replicas a
    worker StatefulSet ``x-0`` with pods ``x-0-1`` … ``x-0-<size-1>``.
    """
    if role.replicas == 0:
        return
    lws = lws_name(service.name, role.name, role.replicas - 1)
    names = [(lws, "LeaderWorkerSet", MAX_NAME), (lws, "StatefulSet", MAX_STATEFULSET_NAME),
             (f"{lws}-0", "pod", MAX_NAME)]
    if role.multinode:
        names += [(f"{lws}-0", "worker StatefulSet", MAX_STATEFULSET_NAME),
                  (f"{lws}-0-{role.node_count - 1}", "worker pod", MAX_NAME)]
    for name, what, limit in names:
        if len(name) > limit:
            raise InvalidSpec(
                service.where, f"{role.path}.name",
                f"{what} name {name!r} would be {len(name)} characters, over the limit of {limit}; "
                "shorten the InferenceService or role name",
            )
