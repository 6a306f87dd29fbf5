"""A capacity preview: which replicas Volcano would place on N identical GPU nodes, and why.

It reads the generated objects — each service's PodGroup and LeaderWorkerSets — and plays the rules
docs/gang-scheduling.md cites from Volcano's source: a replica (a subgroup of its pods) is placed
whole or not at all; the atomic minimum (each role's first ``minSubGroups`` replicas) is placed
together or the service waits; the other replicas follow, lowest index first, each as capacity
allows. A service without a PodGroup has its pods placed one by one. Only ``nvidia.com/gpu`` is
counted; services take capacity in the order they come.

With the cluster's HyperNodes (``--topology``), network topology bounds placement as Volcano's
network-topology-aware plugin does: a replica whose subgroup has a hard ``networkTopology`` is placed
within one HyperNode of at most its tier or waits, whole; a soft one takes the lowest tier that fits,
then any nodes; a PodGroup's own ``networkTopology`` puts the atomic minimum within one HyperNode
(lowest tier first) and the later replicas within its highest ancestor the tier allows. Among the
HyperNodes of one tier, the one left fullest is taken, as Volcano's HyperNode binpacking does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from typing import Any, TypeVar

from fusion_helm.expand import gang, naming, resources
from fusion_helm.expand.quantity import ZERO
from fusion_helm.kio.keys import latest_by_key
from fusion_helm.labels import (
    LABEL_COMPONENT_TYPE,
    LABEL_GROUP_INDEX,
    LABEL_REPLICA_INDEX,
    LABEL_ROLE_NAME,
    LABEL_SERVICE,
    one_per_replica,
)
from fusion_helm.records import record

T = TypeVar("T")
GPU = "nvidia.com/gpu"
KINDS = ("PodGroup", "LeaderWorkerSet", "DisaggregatedSet", "HorizontalPodAutoscaler")
"""What the preview reads (an autoscaled role is planned at its autoscaler's minimum)."""
HYPER_NODE = "HyperNode"
"""Volcano's description of the cluster's network (topology.volcano.sh/v1alpha1), for ``--topology``."""


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
    topology: Mapping[str, Any] | None = None
    """Its subgroup's networkTopology."""
    domain: str | None = None
    """The HyperNode it was placed within, where its topology bounds it."""

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
    topology: Mapping[str, Any] | None = None
    """The PodGroup's own networkTopology."""
    domain: str | None = None
    """The HyperNode its atomic minimum was placed within, where its topology bounds it."""

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


@record
class Domain:
    """A HyperNode: the nodes behind one switch or NVLink domain (tier 1), or those of the HyperNodes
    below it (higher tiers)."""

    name: str
    tier: int
    tier_name: str | None
    nodes: frozenset[str]


class TopologyError(ValueError):
    """HyperNodes or a networkTopology the preview cannot read."""


class Cluster:
    """Identical nodes, maybe in HyperNodes; each node knows its free GPUs (and places pods: the one
    mutable object here)."""

    def __init__(self, gpus_per_node: int, free: dict[str, int], domains: tuple[Domain, ...] = ()) -> None:
        self.gpus_per_node = gpus_per_node
        self.free = free
        self.domains = domains

    @classmethod
    def of(cls, nodes: int, gpus_per_node: int) -> Cluster:
        width = len(str(max(nodes - 1, 0)))
        return cls(gpus_per_node, {f"node-{i:0{width}d}": gpus_per_node for i in range(nodes)})

    @classmethod
    def of_hyper_nodes(cls, hyper_nodes: Iterable[Mapping[str, Any]], gpus_per_node: int) -> Cluster:
        """The nodes the HyperNodes name, GPUS_PER_NODE each, in their HyperNodes."""
        domains = hyper_node_domains(hyper_nodes)
        names = sorted(set().union(*(domain.nodes for domain in domains)))
        return cls(gpus_per_node, dict.fromkeys(names, gpus_per_node), domains)

    def place(self, pods: Iterable[Pod], within: frozenset[str] | None = None) -> list[Pod] | None:
        """Place every pod on the nodes WITHIN (default: all; best fit: the fullest node with room), or
        none; returns them placed."""
        free = dict(self.free)
        placed = []
        for pod in pods:
            fits = [node for node, gpus in free.items() if gpus >= pod.gpus and (within is None or node in within)]
            if not fits:
                return None
            node = min(fits, key=lambda n: (free[n], n))
            free[node] -= pod.gpus
            placed.append(Pod(pod.name, pod.gpus, node))
        self.free = free
        return placed

    def bound(self, topology: Mapping[str, Any]) -> int | None:
        """The highest tier a hard TOPOLOGY allows (its tier number, or that of its tier name); None
        for soft, which falls back to any nodes."""
        if topology.get("mode", "hard") != "hard":
            return None
        if "highestTierAllowed" in topology:
            return int(topology["highestTierAllowed"])
        name = topology.get("highestTierName")
        tiers = {domain.tier for domain in self.domains if domain.tier_name == name}
        if not tiers:
            known = ", ".join(sorted({d.tier_name for d in self.domains if d.tier_name})) or "none"
            raise TopologyError(f"no HyperNode has tierName {name} (tier names: {known}); Volcano would place "
                                "the pods with no bound at all")
        return min(tiers)

    def candidates(self, topology: Mapping[str, Any], within: frozenset[str] | None) -> list[list[Domain]]:
        """The HyperNodes pods bound by TOPOLOGY may be placed within, by tier, lowest first."""
        bound = self.bound(topology)
        tiers: dict[int, list[Domain]] = {}
        for domain in self.domains:
            if (bound is None or domain.tier <= bound) and (within is None or domain.nodes <= within):
                tiers.setdefault(domain.tier, []).append(domain)
        return [tiers[tier] for tier in sorted(tiers)]

    def widest(self, domain: Domain, topology: Mapping[str, Any]) -> frozenset[str] | None:
        """Where a service's later replicas go once its minimum lies within DOMAIN: its highest
        ancestor that TOPOLOGY's tier allows (hard), or anywhere (soft)."""
        bound = self.bound(topology)
        if bound is None:
            return None
        above = [d for d in self.domains if d.nodes >= domain.nodes and d.tier <= bound]
        return max(above, key=lambda d: (d.tier, len(d.nodes))).nodes

    def fill_after(self, domain: Domain, attempt: Callable[[frozenset[str]], T | None]) -> tuple[T, int] | None:
        """ATTEMPT within DOMAIN on a copy of the free GPUs: its result and the GPUs DOMAIN has left,
        the cluster as it was; None where it fails."""
        saved = dict(self.free)
        try:
            result = attempt(domain.nodes)
            return None if result is None else (result, sum(self.free[node] for node in domain.nodes))
        finally:
            self.free = saved

    def place_within_best(self, candidates: list[list[Domain]], attempt: Callable[[frozenset[str]], T | None]
                          ) -> tuple[Domain, T] | None:
        """ATTEMPT within the HyperNodes of the lowest tier where it succeeds in any, in the one it leaves
        fullest (then by name), kept; None where no HyperNode takes it."""
        for tier in candidates:
            tried = [(domain, self.fill_after(domain, attempt)) for domain in sorted(tier, key=lambda d: d.name)]
            fits = [(domain, outcome) for domain, outcome in tried if outcome is not None]
            if fits:
                domain, _ = min(fits, key=lambda fit: fit[1][1])
                kept = attempt(domain.nodes)
                assert kept is not None, "the same attempt on the same free GPUs"
                return domain, kept
        return None


def hyper_node_domains(hyper_nodes: Iterable[Mapping[str, Any]]) -> tuple[Domain, ...]:
    """HyperNodes (topology.volcano.sh/v1alpha1) as Volcano reads them, members by exactMatch: a Node
    member by its name, a HyperNode member by the HyperNode's name (its nodes)."""
    specs: dict[str, Mapping[str, Any]] = {}
    for obj in hyper_nodes:
        name = (obj.get("metadata") or {}).get("name")
        spec = obj.get("spec")
        if not isinstance(name, str) or not isinstance(spec, Mapping) or not isinstance(spec.get("tier"), int):
            raise TopologyError(f"HyperNode {name}: needs metadata.name and spec.tier (an integer)")
        specs[name] = spec

    def nodes_of(name: str, seen: tuple[str, ...]) -> frozenset[str]:
        if name in seen:
            raise TopologyError(f"HyperNode {name}: is its own member (through {', '.join(seen)})")
        nodes: set[str] = set()
        for position, member in enumerate(specs[name].get("members") or []):
            exact = ((member.get("selector") or {}).get("exactMatch") or {}).get("name")
            if not isinstance(exact, str):
                raise TopologyError(f"HyperNode {name}: spec.members[{position}]: the preview reads members by "
                                    "selector.exactMatch.name only")
            if member.get("type") == "HyperNode":
                if exact not in specs:
                    raise TopologyError(f"HyperNode {name}: spec.members[{position}]: no HyperNode {exact}")
                nodes |= nodes_of(exact, (*seen, name))
            else:
                nodes.add(exact)
        return frozenset(nodes)

    return tuple(Domain(name, spec["tier"], spec.get("tierName"), nodes_of(name, ())) for name, spec in specs.items())


def plan(objects: Iterable[Mapping[str, Any]], nodes: int, gpus_per_node: int) -> list[ServicePlan]:
    """Play every service in OBJECTS (generated PodGroups and LeaderWorkerSets) onto the cluster."""
    return place_all(objects, Cluster.of(nodes, gpus_per_node))


def place_all(objects: Iterable[Mapping[str, Any]], cluster: Cluster) -> list[ServicePlan]:
    return [_place(service, cluster) for service in _services(objects)]


def _services(objects: Iterable[Mapping[str, Any]]) -> list[ServicePlan]:
    """The services' replicas, unplaced. Later copies of an object replace earlier ones."""
    by_key = latest_by_key(objects, KINDS)
    pod_groups = {obj["metadata"]["name"]: obj["spec"] for obj in by_key.values()
                  if obj["kind"] == "PodGroup" and LABEL_SERVICE in obj["metadata"].get("labels", {})}
    autoscalers = {(obj["metadata"].get("namespace"), obj["spec"]["scaleTargetRef"]["name"]):
                   Autoscaled(obj["spec"].get("minReplicas", 1), obj["spec"]["maxReplicas"])
                   for obj in by_key.values() if obj["kind"] == "HorizontalPodAutoscaler"}
    members: dict[str, list[_Member]] = {}
    autoscaled: dict[str, dict[str, Autoscaled]] = {}
    for obj in by_key.values():
        labels = obj["metadata"].get("labels", {})
        if LABEL_SERVICE not in labels:
            continue
        service = labels[LABEL_SERVICE]
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
                autoscaled.setdefault(service, {})[lws["metadata"]["labels"][LABEL_ROLE_NAME]] = scaling
                replicas = scaling.min_replicas
            members.setdefault(service, []).extend(_members(lws, replicas))
    return [_service(name, found, pod_groups.get(name), autoscaled.get(name, {})) for name, found in members.items()]


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
        Role(role, component_types[role], tuple(replicas), autoscaled.get(role)) for role, replicas in roles.items()),
        (pod_group or {}).get("networkTopology"))


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
    placed: dict[str, tuple[Pod, ...]] = {}
    """Replica name → its pods, placed."""
    domains: dict[str, str | None] = {}
    if not service.gang:
        for replica in replicas:
            placed[replica.name] = tuple(p for pod in replica.pods for p in cluster.place([pod]) or [pod])
        return _with(service, placed, domains)
    required = [replica for replica in replicas if replica.required]

    def minimum(within: frozenset[str] | None) -> dict[str, tuple[tuple[Pod, ...], str | None]] | None:
        """The atomic minimum placed WITHIN, each replica as its own topology says, or none of it."""
        saved = dict(cluster.free)
        out = {}
        for replica in required:
            outcome = _place_replica(cluster, replica, within)
            if outcome is None:
                cluster.free = saved
                return None
            out[replica.name] = outcome
        return out

    later: frozenset[str] | None = None
    job_domain: str | None = None
    result: dict[str, tuple[tuple[Pod, ...], str | None]] | None
    if service.topology and cluster.domains:
        chosen = cluster.place_within_best(cluster.candidates(service.topology, None), minimum)
        if chosen is not None:
            domain, result = chosen
            job_domain, later = domain.name, cluster.widest(domain, service.topology)
        elif cluster.bound(service.topology) is None:  # soft: any nodes
            result = minimum(None)
        else:
            return service
    else:
        result = minimum(None)
    if result is None:
        return service
    for name, (replica_pods, where) in result.items():
        placed[name], domains[name] = replica_pods, where
    for replica in sorted((r for r in replicas if not r.required), key=lambda r: r.index):
        outcome = _place_replica(cluster, replica, later)
        if outcome is not None:
            placed[replica.name], domains[replica.name] = outcome
    return _with(service, placed, domains, job_domain)


def _place_replica(cluster: Cluster, replica: Replica, within: frozenset[str] | None
                   ) -> tuple[tuple[Pod, ...], str | None] | None:
    """REPLICA's pods placed (on the nodes WITHIN), within one HyperNode its topology allows: its pods
    and that HyperNode's name; None where it does not fit."""
    if replica.topology is None or not cluster.domains:
        pods = cluster.place(replica.pods, within)
        return None if pods is None else (tuple(pods), None)
    chosen = cluster.place_within_best(cluster.candidates(replica.topology, within),
                                       lambda nodes: cluster.place(replica.pods, nodes))
    if chosen is not None:
        domain, pods = chosen
        return tuple(pods), domain.name
    if cluster.bound(replica.topology) is None:  # soft: then any nodes
        anywhere = cluster.place(replica.pods, within)
        return None if anywhere is None else (tuple(anywhere), None)
    return None


def _with(service: ServicePlan, placed: Mapping[str, tuple[Pod, ...]], domains: Mapping[str, str | None],
          job_domain: str | None = None) -> ServicePlan:
    return ServicePlan(service.name, service.gang, tuple(
        Role(role.name, role.component_type, tuple(
            Replica(r.role, r.index, r.required, placed.get(r.name, r.pods), r.topology, domains.get(r.name))
            for r in role.replicas), role.autoscaled)
        for role in service.roles), service.topology, job_domain)


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
            **({"networkTopology": dict(service.topology), "within": service.domain} if service.topology else {}),
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
                    **({"networkTopology": dict(replica.topology), "within": replica.domain} if replica.topology
                       else {}),
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
        within = f"; within {service.domain}" if service.domain else ""
        lines.append(f"{service.name}: {service.state.description} ({summary(service)}; {used} of {wanted} GPUs"
                     f"{within})")
        for role_last, role in _last(service.roles):
            scaling = f"; {role.autoscaled.note}" if role.autoscaled else ""
            lines.append(f"{_branch(role_last)}{role.name} ({role.component_type}{scaling})")
            role_indent = _indent(role_last)
            for replica_last, replica in _last(role.replicas):
                mark = _replica_mark(replica)
                minimum = ", atomic minimum" if replica.required else ""
                lines.append(f"{role_indent}{_branch(replica_last)}{replica.name}: {mark} "
                             f"({len(replica.pods)} pods, {replica.gpus} GPUs{minimum})")
                pod_indent = role_indent + _indent(replica_last)
                for pod_last, pod in _last(replica.pods):
                    where = f"on {pod.node}" if pod.node else "pending"
                    lines.append(f"{pod_indent}{_branch(pod_last)}{pod.name}  {pod.gpus} GPUs  {where}")
    return "\n".join(lines) + "\n"


def _replica_mark(replica: Replica) -> str:
    """Placed (within which HyperNode its bound allows), or why it waits."""
    if replica.placed:
        return f"placed within {replica.domain}" if replica.domain else "placed"
    topology = replica.topology or {}
    if topology.get("mode", "hard") == "hard" and topology:
        tier = topology.get("highestTierName", topology.get("highestTierAllowed"))
        return f"waits: fits in no HyperNode of tier {tier} with room"
    return "waits for capacity"


def _last(items: Iterable[Any]) -> list[tuple[bool, Any]]:
    listed = list(items)
    return [(i == len(listed) - 1, item) for i, item in enumerate(listed)]


def _branch(last: bool) -> str:
    return "└── " if last else "├── "


def _indent(last: bool) -> str:
    return "    " if last else "│   "
