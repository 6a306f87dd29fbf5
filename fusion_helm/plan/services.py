"""The services a preview plans, read back from the generated objects: each role's replicas and their
pods, which of them the PodGroup requires together, and where each was placed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

from fusion_helm.base.kinds import (
    DISAGGREGATED_SET,
    HORIZONTAL_POD_AUTOSCALER,
    LEADER_WORKER_SET,
    POD_GROUP,
    SCALED_OBJECT,
)
from fusion_helm.base.labels import (
    LABEL_COMPONENT_TYPE,
    LABEL_GROUP_INDEX,
    LABEL_REPLICA_INDEX,
    LABEL_ROLE_NAME,
    LABEL_SERVICE,
    one_per_replica,
)
from fusion_helm.expand import gang, resources
from fusion_helm.expand.names import pod_name, revision_lws_name, role_scaler_name, task_name
from fusion_helm.expand.quantity import ZERO
from fusion_helm.kio.keys import latest_by_key
from fusion_helm.plan.nodes import GPU, Pod
from fusion_helm.records import record

KINDS = (POD_GROUP.kind, LEADER_WORKER_SET.kind, DISAGGREGATED_SET.kind, HORIZONTAL_POD_AUTOSCALER.kind,
         SCALED_OBJECT.kind)
"""What the preview reads (an autoscaled role is planned at its autoscaler's minimum, or maximum)."""
KEDA_DEFAULT_COUNTS = (0, 100)
"""A ScaledObject's minReplicaCount and maxReplicaCount where it gives none (KEDA's defaults)."""


class Outcome(StrEnum):
    """What becomes of a replica, in every order the scheduler may take the replicas in."""

    PLACED = "placed"
    WAITS = "waits"
    UNDECIDED = "undecided"
    """Placed in some orders, waiting in others: which of its role's replicas get the room is the
    scheduler's order's choice."""


class State(StrEnum):
    FULL = "full"
    PARTIAL = "partial"
    BLOCKED = "blocked"

    @property
    def description(self) -> str:
        return {"full": "full capacity", "partial": "partial", "blocked": "blocked"}[self.value]


@record
class Replica:
    role: str
    index: int
    required: bool
    """Part of the atomic minimum."""
    pods: tuple[Pod, ...]
    topology: Mapping[str, Any] | None = None
    """Its subgroup's networkTopology."""
    domain: str | None = None
    """The HyperNode it was placed within, where its topology bounds it."""
    outcome: Outcome = Outcome.WAITS
    """Its pods have nodes only where PLACED: one placement the scheduler may choose."""

    @property
    def name(self) -> str:
        return task_name(self.role, self.index)

    @property
    def placed(self) -> bool:
        return self.outcome is Outcome.PLACED

    @property
    def gpus(self) -> int:
        return sum(pod.gpus for pod in self.pods)

@record
class Autoscaled:
    """A role whose LeaderWorkerSet's count an autoscaler owns: planned at its minimum or its maximum."""

    min_replicas: int
    max_replicas: int | None
    """None: no autoscaler (HorizontalPodAutoscaler or KEDA ScaledObject) among the objects read; planned at
    the count the role starts with, 1 (``first``)."""
    first: str = "LWS's default of 1"
    at_maximum: bool = False

    @property
    def planned(self) -> int:
        if self.max_replicas is None:
            return self.min_replicas
        return self.max_replicas if self.at_maximum else self.min_replicas

    @property
    def note(self) -> str:
        if self.max_replicas is None:
            return f"autoscaled, no autoscaler read: planned at {self.first}"
        return (f"autoscaled {self.min_replicas}-{self.max_replicas}: planned at its "
                f"{'maximum' if self.at_maximum else 'minimum'}")

ROLE_SCALER_FIRST = "its role scaler's first count, 1"

@record
class PlannedRole:
    name: str
    component_type: str
    replicas: tuple[Replica, ...]
    autoscaled: Autoscaled | None = None
    placed: tuple[int, int] = (0, 0)
    """How many of its replicas are placed: the fewest and the most, over every order."""

@record
class ServicePlan:
    name: str
    gang: bool
    roles: tuple[PlannedRole, ...]
    topology: Mapping[str, Any] | None = None
    """The PodGroup's own networkTopology."""
    domain: str | None = None
    """The HyperNode its atomic minimum was placed within, where its topology bounds it."""
    placed_gpus: tuple[int, int] = (0, 0)
    """The GPUs of its placed replicas: the fewest and the most, over every order."""

    @property
    def replicas(self) -> list[Replica]:
        return [replica for role in self.roles for replica in role.replicas]

    @property
    def state(self) -> State:
        """Full when every replica is placed in every order, blocked when none is in any."""
        outcomes = {replica.outcome for replica in self.replicas}
        if outcomes <= {Outcome.PLACED}:
            return State.FULL
        return State.BLOCKED if outcomes == {Outcome.WAITS} else State.PARTIAL

def read_services(objects: Iterable[Mapping[str, Any]], at_maximum: bool = False) -> list[ServicePlan]:
    """The services' replicas, unplaced, each autoscaled role's at its minimum (AT_MAXIMUM: its maximum).
    Later copies of an object replace earlier ones."""
    by_key = latest_by_key(objects, KINDS)
    pod_groups = {obj["metadata"]["name"]: obj["spec"] for obj in by_key.values()
                  if obj["kind"] == POD_GROUP.kind and LABEL_SERVICE in obj["metadata"].get("labels", {})}
    autoscalers = {(obj["metadata"].get("namespace"), obj["spec"]["scaleTargetRef"]["name"]):
                   _autoscaled(obj, at_maximum) for obj in by_key.values()
                   if obj["kind"] in (HORIZONTAL_POD_AUTOSCALER.kind, SCALED_OBJECT.kind)}
    members: dict[str, list[_Member]] = {}
    autoscaled: dict[str, dict[str, Autoscaled]] = {}
    for obj in by_key.values():
        labels = obj["metadata"].get("labels", {})
        if LABEL_SERVICE not in labels:
            continue
        service = labels[LABEL_SERVICE]
        if obj["kind"] == LEADER_WORKER_SET.kind:
            leader_worker_sets = [(obj, obj["metadata"]["name"], Autoscaled(1, None))]
        elif obj["kind"] == DISAGGREGATED_SET.kind:
            leader_worker_sets = _revision_leader_worker_sets(obj)
        else:
            continue
        for lws, target, unscaled in leader_worker_sets:
            replicas = lws["spec"].get("replicas")
            if replicas is None:  # the autoscaler owns the count
                scaling = autoscalers.get((obj["metadata"].get("namespace"), target), unscaled)
                autoscaled.setdefault(service, {})[lws["metadata"]["labels"][LABEL_ROLE_NAME]] = scaling
                replicas = scaling.planned
            members.setdefault(service, []).extend(_members(lws, replicas))
    return [_service(name, found, pod_groups.get(name), autoscaled.get(name, {})) for name, found in members.items()]

def _autoscaled(autoscaler: Mapping[str, Any], at_maximum: bool) -> Autoscaled:
    """The counts a HorizontalPodAutoscaler or a KEDA ScaledObject keeps its target between."""
    spec = autoscaler["spec"]
    if autoscaler["kind"] == SCALED_OBJECT.kind:
        fewest, most = KEDA_DEFAULT_COUNTS
        return Autoscaled(spec.get("minReplicaCount", fewest), spec.get("maxReplicaCount", most),
                          at_maximum=at_maximum)
    return Autoscaled(spec.get("minReplicas", 1), spec["maxReplicas"], at_maximum=at_maximum)

def _revision_leader_worker_sets(disaggregated_set: Mapping[str, Any]
                                 ) -> list[tuple[Mapping[str, Any], str, Autoscaled]]:
    """The LeaderWorkerSets a DisaggregatedSet's controller makes of one revision, as the set's roles
    say them (each with the name an autoscaler scales it by, and the count it starts with unscaled)."""
    name = disaggregated_set["metadata"]["name"]
    return [({"metadata": {"name": revision_lws_name(name, role["name"]),
                           "labels": (role.get("metadata") or {}).get("labels") or {}},
              "spec": role["spec"]}, role_scaler_name(name, role["name"]), Autoscaled(1, None, ROLE_SCALER_FIRST))
            for role in disaggregated_set["spec"]["roles"]]

@record
class _Member:
    """A replica as the objects say it: its LeaderWorkerSet, index, its pods' labels, and which of the
    LWS's groups it is (0 in the replica layout, its index in the role layout)."""

    lws: Mapping[str, Any]
    index: int
    labels: Mapping[str, str]
    group: int

    @property
    def key(self) -> str:
        return f"{self.lws['metadata']['name']}/{self.index}"

def _members(lws: Mapping[str, Any], replicas: int) -> list[_Member]:
    """Layout replica: the LWS is one replica, its labels hold the index. Layout role: its groups are
    the replicas (REPLICAS of them: an autoscaled one's, its autoscaler's minimum), their pods labelled
    by the template and LWS's group index."""
    labels = lws["metadata"].get("labels", {})
    if one_per_replica(labels):
        return [_Member(lws, int(labels[LABEL_REPLICA_INDEX]), labels, group=0)]
    template = lws["spec"]["leaderWorkerTemplate"]
    pod_labels = {**labels, **((template.get("leaderTemplate") or template["workerTemplate"]).get("metadata") or {})
                  .get("labels", {})}
    return [_Member(lws, group, {**pod_labels, LABEL_GROUP_INDEX: str(group)}, group)
            for group in range(replicas)]

def _service(name: str, members: list[_Member], pod_group: Mapping[str, Any] | None,
             autoscaled: Mapping[str, Autoscaled]) -> ServicePlan:
    """A policy's replicas are its subgroups; the first ``minSubGroups`` by index are required."""
    members = sorted(members, key=lambda member: member.index)
    policies = (pod_group or {}).get("subGroupPolicy", [])
    required = gang.atomic_minimum(policies, [(member.key, member.labels) for member in members])
    roles: dict[str, list[Replica]] = {}
    component_types: dict[str, str] = {}
    for member in members:
        role = member.labels[LABEL_ROLE_NAME]
        position = gang.policy_of(policies, member.labels)
        topology = policies[position].get("networkTopology") if position is not None else None
        roles.setdefault(role, []).append(Replica(role, member.index, member.key in required, _pods(member), topology))
        component_types[role] = member.labels[LABEL_COMPONENT_TYPE]
    return ServicePlan(name, pod_group is not None, tuple(
        PlannedRole(role, component_types[role], tuple(replicas), autoscaled.get(role))
        for role, replicas in roles.items()),
        (pod_group or {}).get("networkTopology"))

def _pods(member: _Member) -> tuple[Pod, ...]:
    """The group's leader pod and its workers, as LWS names them."""
    template = member.lws["spec"]["leaderWorkerTemplate"]
    size = template.get("size", 1)
    lws = member.lws["metadata"]["name"]
    leader = template.get("leaderTemplate") or template["workerTemplate"]
    pods = [Pod(pod_name(lws, member.group), _gpus(leader["spec"]))]
    pods += [Pod(pod_name(lws, member.group, worker), _gpus(template["workerTemplate"]["spec"]))
             for worker in range(1, size)]
    return tuple(pods)

def _gpus(pod_spec: Mapping[str, Any]) -> int:
    return resources.pod_requests(pod_spec).get(GPU, ZERO).whole()
