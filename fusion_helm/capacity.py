"""A capacity preview: which replicas Volcano would place on N identical GPU nodes, and why.

It reads the generated objects — each service's PodGroup and LeaderWorkerSets — and plays the rules
docs/gang-scheduling.md cites from Volcano's source: a replica (a subgroup of its pods) is placed
whole or not at all; the atomic minimum (each role's first ``minSubGroups`` replicas) is placed
together or the service waits; the other replicas follow, lowest index first, each as capacity
allows. A service without a PodGroup has its pods placed one by one. Only ``nvidia.com/gpu`` is
counted; services take capacity in the order they come.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

from fusion_helm.expand import gang, naming, resources
from fusion_helm.expand.quantity import ZERO
from fusion_helm.kio.keys import latest_by_key
from fusion_helm.labels import one_per_replica
from fusion_helm.records import record

GPU = "nvidia.com/gpu"
KINDS = ("PodGroup", "LeaderWorkerSet", "DisaggregatedSet", "HorizontalPodAutoscaler")
"""What the preview reads (an autoscaled role is planned at its autoscaler's minimum)."""


class State(StrEnum):
    FULL = "full"
    PARTIAL = "partial"
    BLOCKED = "blocked"

    @property
    def description(self) -> str:
        return {"full": "full capacity", "partial": "partial", "blocked": "blocked"}[self.value]


@record
class Pod:
    name: str
    gpus: int
    node: str | None = None


@record
class Replica:
    role: str
    index: int
    required: bool
    """Part of the atomic minimum."""
    pods: tuple[Pod, ...]

    @property
    def name(self) -> str:
        return naming.task_name(self.role, self.index)

    @property
    def placed(self) -> bool:
        return all(pod.node is not None for pod in self.pods)

    @property
    def gpus(self) -> int:
        return sum(pod.gpus for pod in self.pods)


@record
class Autoscaled:
    """A role whose LeaderWorkerSet's count an autoscaler owns (layout role): planned at its minimum."""

    min_replicas: int
    max_replicas: int | None
    """None: no HorizontalPodAutoscaler among the objects read; planned at the count the role starts
    with, 1 (``first``)."""
    first: str = "LWS's default of 1"

    @property
    def note(self) -> str:
        if self.max_replicas is None:
            return f"autoscaled, no HorizontalPodAutoscaler read: planned at {self.first}"
        return f"autoscaled {self.min_replicas}-{self.max_replicas}: planned at its minimum"


ROLE_SCALER_FIRST = "its role scaler's first count, 1"


@record
class Role:
    name: str
    component_type: str
    replicas: tuple[Replica, ...]
    autoscaled: Autoscaled | None = None


@record
class ServicePlan:
    name: str
    gang: bool
    roles: tuple[Role, ...]

    @property
    def replicas(self) -> list[Replica]:
        return [replica for role in self.roles for replica in role.replicas]

    @property
    def state(self) -> State:
        pods = [pod for replica in self.replicas for pod in replica.pods]
        placed = [pod for pod in pods if pod.node is not None]
        if len(placed) == len(pods):
            return State.FULL
        return State.PARTIAL if placed else State.BLOCKED


class Cluster:
    """Identical nodes; each knows its free GPUs (and places pods: the one mutable object here)."""

    def __init__(self, gpus_per_node: int, free: dict[str, int]) -> None:
        self.gpus_per_node = gpus_per_node
        self.free = free

    @classmethod
    def of(cls, nodes: int, gpus_per_node: int) -> Cluster:
        width = len(str(max(nodes - 1, 0)))
        return cls(gpus_per_node, {f"node-{i:0{width}d}": gpus_per_node for i in range(nodes)})

    def place(self, pods: Iterable[Pod]) -> list[Pod] | None:
        """Place every pod (best fit: the fullest node with room), or none; returns them placed."""
        free = dict(self.free)
        placed = []
        for pod in pods:
            fits = [node for node, gpus in free.items() if gpus >= pod.gpus]
            if not fits:
                return None
            node = min(fits, key=lambda n: (free[n], n))
            free[node] -= pod.gpus
            placed.append(Pod(pod.name, pod.gpus, node))
        self.free = free
        return placed


def plan(objects: Iterable[Mapping[str, Any]], nodes: int, gpus_per_node: int) -> list[ServicePlan]:
    """Play every service in OBJECTS (generated PodGroups and LeaderWorkerSets) onto the cluster."""
    cluster = Cluster.of(nodes, gpus_per_node)
    return [_place(service, cluster) for service in _services(objects)]


def _services(objects: Iterable[Mapping[str, Any]]) -> list[ServicePlan]:
    """The services' replicas, unplaced. Later copies of an object replace earlier ones."""
    by_key = latest_by_key(objects, KINDS)
    policies = {obj["metadata"]["name"]: obj["spec"].get("subGroupPolicy", []) for obj in by_key.values()
                if obj["kind"] == "PodGroup" and naming.LABEL_SERVICE in obj["metadata"].get("labels", {})}
    autoscalers = {(obj["metadata"].get("namespace"), obj["spec"]["scaleTargetRef"]["name"]):
                   Autoscaled(obj["spec"].get("minReplicas", 1), obj["spec"]["maxReplicas"])
                   for obj in by_key.values() if obj["kind"] == "HorizontalPodAutoscaler"}
    members: dict[str, list[_Member]] = {}
    autoscaled: dict[str, dict[str, Autoscaled]] = {}
    for obj in by_key.values():
        labels = obj["metadata"].get("labels", {})
        if naming.LABEL_SERVICE not in labels:
            continue
        service = labels[naming.LABEL_SERVICE]
        if obj["kind"] == "LeaderWorkerSet":
            leader_worker_sets = [(obj, obj["metadata"]["name"], Autoscaled(1, None))]
        elif obj["kind"] == "DisaggregatedSet":
            leader_worker_sets = _revision_leader_worker_sets(obj)
        else:
            continue
        for lws, target, unscaled in leader_worker_sets:
            replicas = lws["spec"].get("replicas")
            if replicas is None:  # the autoscaler owns the count
                scaling = autoscalers.get((obj["metadata"].get("namespace"), target), unscaled)
                autoscaled.setdefault(service, {})[lws["metadata"]["labels"][naming.LABEL_ROLE_NAME]] = scaling
                replicas = scaling.min_replicas
            members.setdefault(service, []).extend(_members(lws, replicas))
    return [_service(name, found, policies.get(name), autoscaled.get(name, {})) for name, found in members.items()]


def _revision_leader_worker_sets(disaggregated_set: Mapping[str, Any]
                                 ) -> list[tuple[Mapping[str, Any], str, Autoscaled]]:
    """The LeaderWorkerSets a DisaggregatedSet's controller makes of one revision, as the set's roles
    say them (each with the name an autoscaler scales it by, and the count it starts with unscaled)."""
    name = disaggregated_set["metadata"]["name"]
    return [({"metadata": {"name": f"{name}-{naming.SLICE}-{naming.REVISION_PLACEHOLDER}-{role['name']}",
                           "labels": (role.get("metadata") or {}).get("labels") or {}},
              "spec": role["spec"]}, f"{name}-{role['name']}", Autoscaled(1, None, ROLE_SCALER_FIRST))
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
        return [_Member(lws, int(labels[naming.LABEL_REPLICA_INDEX]), labels, group=0)]
    template = lws["spec"]["leaderWorkerTemplate"]
    pod_labels = {**labels, **((template.get("leaderTemplate") or template["workerTemplate"]).get("metadata") or {})
                  .get("labels", {})}
    return [_Member(lws, group, {**pod_labels, naming.LABEL_GROUP_INDEX: str(group)}, group)
            for group in range(replicas)]


def _service(name: str, members: list[_Member], policies: list[Mapping[str, Any]] | None,
             autoscaled: Mapping[str, Autoscaled]) -> ServicePlan:
    """A policy's replicas are its subgroups; the first ``minSubGroups`` by index are required."""
    members = sorted(members, key=lambda member: member.index)
    required = gang.atomic_minimum(policies or [], [(member.key, member.labels) for member in members])
    roles: dict[str, list[Replica]] = {}
    component_types: dict[str, str] = {}
    for member in members:
        role = member.labels[naming.LABEL_ROLE_NAME]
        roles.setdefault(role, []).append(Replica(role, member.index, member.key in required, _pods(member)))
        component_types[role] = member.labels[naming.LABEL_COMPONENT_TYPE]
    return ServicePlan(name, policies is not None, tuple(
        Role(role, component_types[role], tuple(replicas), autoscaled.get(role)) for role, replicas in roles.items()))


def _pods(member: _Member) -> tuple[Pod, ...]:
    """LWS ``x`` runs, for group ``g``, leader pod ``x-g`` and workers ``x-g-1`` … ``x-g-(size-1)``."""
    template = member.lws["spec"]["leaderWorkerTemplate"]
    size = template.get("size", 1)
    name = f"{member.lws['metadata']['name']}-{member.group}"
    leader = template.get("leaderTemplate") or template["workerTemplate"]
    pods = [Pod(name, _gpus(leader["spec"]))]
    pods += [Pod(f"{name}-{worker}", _gpus(template["workerTemplate"]["spec"])) for worker in range(1, size)]
    return tuple(pods)


def _gpus(pod_spec: Mapping[str, Any]) -> int:
    return resources.pod_requests(pod_spec).get(GPU, ZERO).whole()


def _place(service: ServicePlan, cluster: Cluster) -> ServicePlan:
    replicas = service.replicas
    placed: dict[str, Pod] = {}
    if not service.gang:
        for pod in (pod for replica in replicas for pod in replica.pods):
            placed.update((p.name, p) for p in cluster.place([pod]) or [])
        return _with(service, placed)
    required = [replica for replica in replicas if replica.required]
    minimum = cluster.place(pod for replica in required for pod in replica.pods)
    if minimum is None:
        return service
    placed.update((pod.name, pod) for pod in minimum)
    for replica in sorted((r for r in replicas if not r.required), key=lambda r: r.index):
        placed.update((pod.name, pod) for pod in cluster.place(replica.pods) or [])
    return _with(service, placed)


def _with(service: ServicePlan, placed: Mapping[str, Pod]) -> ServicePlan:
    return ServicePlan(service.name, service.gang, tuple(
        Role(role.name, role.component_type, tuple(
            Replica(r.role, r.index, r.required, tuple(placed.get(p.name, p) for p in r.pods))
            for r in role.replicas), role.autoscaled)
        for role in service.roles))


def summary(service: ServicePlan) -> str:
    """E.g. "1 prefill + 1 decode of 1 prefill + 2 decode"."""
    def count(pick: Iterable[Replica]) -> str:
        chosen = list(pick)
        return " + ".join(f"{sum(r.role == role.name for r in chosen)} {role.name}" for role in service.roles)
    return f"{count(r for r in service.replicas if r.placed)} of {count(service.replicas)}"


def to_json(plans: list[ServicePlan], nodes: int, gpus_per_node: int) -> dict[str, Any]:
    return {
        "cluster": {"nodes": nodes, "gpusPerNode": gpus_per_node, "gpus": nodes * gpus_per_node},
        "services": [{
            "name": service.name,
            "state": service.state.value,
            "gang": service.gang,
            "roles": [{
                "name": role.name,
                "componentType": role.component_type,
                **({"autoscaled": {"minReplicas": role.autoscaled.min_replicas,
                                   "maxReplicas": role.autoscaled.max_replicas}} if role.autoscaled else {}),
                "replicas": [{
                    "name": replica.name,
                    "placed": replica.placed,
                    "required": replica.required,
                    "gpus": replica.gpus,
                    "pods": [{"name": pod.name, "gpus": pod.gpus, "node": pod.node} for pod in replica.pods],
                } for replica in role.replicas],
            } for role in service.roles],
        } for service in plans],
    }


def to_tree(plans: list[ServicePlan], nodes: int, gpus_per_node: int) -> str:
    """service → role → replica → pods, like the design's diagrams."""
    lines = [f"cluster: {nodes} nodes x {gpus_per_node} GPUs = {nodes * gpus_per_node} GPUs"]
    for service in plans:
        wanted = sum(replica.gpus for replica in service.replicas)
        used = sum(replica.gpus for replica in service.replicas if replica.placed)
        lines.append(f"{service.name}: {service.state.description} ({summary(service)}; {used} of {wanted} GPUs)")
        for role_last, role in _last(service.roles):
            scaling = f"; {role.autoscaled.note}" if role.autoscaled else ""
            lines.append(f"{_branch(role_last)}{role.name} ({role.component_type}{scaling})")
            role_indent = _indent(role_last)
            for replica_last, replica in _last(role.replicas):
                mark = "placed" if replica.placed else "waits for capacity"
                minimum = ", atomic minimum" if replica.required else ""
                lines.append(f"{role_indent}{_branch(replica_last)}{replica.name}: {mark} "
                             f"({len(replica.pods)} pods, {replica.gpus} GPUs{minimum})")
                pod_indent = role_indent + _indent(replica_last)
                for pod_last, pod in _last(replica.pods):
                    where = f"on {pod.node}" if pod.node else "pending"
                    lines.append(f"{pod_indent}{_branch(pod_last)}{pod.name}  {pod.gpus} GPUs  {where}")
    return "\n".join(lines) + "\n"


def _last(items: Iterable[Any]) -> list[tuple[bool, Any]]:
    listed = list(items)
    return [(i == len(listed) - 1, item) for i, item in enumerate(listed)]


def _branch(last: bool) -> str:
    return "└── " if last else "├── "


def _indent(last: bool) -> str:
    return "    " if last else "│   "
