"""A capacity preview: which replicas Volcano would place on N identical GPU nodes, and why.

It reads the generated objects — each service's PodGroup and LeaderWorkerSets — and plays the rules
docs/gang-scheduling.md cites from Volcano's source, saying no more than Volcano promises: a replica
(a subgroup of its pods) is placed whole or not at all, and the atomic minimum (each role's first
``minSubGroups`` replicas) is placed together or the service waits. The other replicas follow as
capacity allows, each tried in an order Volcano does not promise (a subgroup exists only once the
controllers have made its pods): the preview plays every order and reports what holds in all of them
— each later replica placed, waiting, or undecided, and how many of each role are placed (the fewest
and the most). A service without a PodGroup is played the same way, its replicas in the default
scheduler's order, none required. Only ``nvidia.com/gpu`` is counted; services take capacity in the
order they come, each in one of its placements (lowest index first).

With the cluster's HyperNodes (``--topology``), network topology bounds placement as Volcano's
network-topology-aware plugin does: a replica whose subgroup has a hard ``networkTopology`` is placed
within one HyperNode of at most its tier or waits, whole; a soft one takes the lowest tier that fits,
then any nodes; a PodGroup's own ``networkTopology`` puts the atomic minimum within one HyperNode
(lowest tier first) and the later replicas within its highest ancestor the tier allows. Among the
HyperNodes of one tier, the one left fullest is taken, as Volcano's HyperNode binpacking does.
"""


from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fusion_helm.plan.nodes import Nodes, Pod
from fusion_helm.plan.services import Outcome, PlannedRole, Replica, ServicePlan, read_services

ORDERS_EXPLORED = 10_000
"""The most states of the cluster the preview plays the later replicas' orders through; beyond them it
says only that each role places between its minimum and all of its replicas."""

Placement = tuple[tuple[Pod, ...], str | None]
"""A replica's pods, placed, and the HyperNode they lie within (None where no topology bounds it)."""


def plan(objects: Iterable[Mapping[str, Any]], nodes: int, gpus_per_node: int) -> list[ServicePlan]:
    """Play every service in OBJECTS (generated PodGroups and LeaderWorkerSets) onto the cluster."""
    return place_all(objects, Nodes.of(nodes, gpus_per_node))

def place_all(objects: Iterable[Mapping[str, Any]], cluster: Nodes, at_maximum: bool = False) -> list[ServicePlan]:
    """Each service placed on CLUSTER, its autoscaled roles at their minimum (AT_MAXIMUM: their maximum)."""
    return [_place(service, cluster) for service in read_services(objects, at_maximum)]

def _place(service: ServicePlan, cluster: Nodes) -> ServicePlan:
    required = [replica for replica in service.replicas if replica.required]
    later_within: frozenset[str] | None = None
    job_domain: str | None = None
    minimum: dict[str, Placement] | None = {}
    if service.gang:
        if service.topology and cluster.domains:
            chosen = cluster.place_within_best(cluster.candidates(service.topology, None),
                                               lambda within: _place_together(cluster, required, within))
            if chosen is not None:
                domain, minimum = chosen
                job_domain, later_within = domain.name, cluster.widest(domain, service.topology)
            else:
                minimum = _place_together(cluster, required, None) if cluster.bound(service.topology) is None else None
        else:
            minimum = _place_together(cluster, required, None)
    if minimum is None:
        return _with(service, {}, {}, job_domain, ({}, (0, 0)))  # the service waits, whole
    later = _classes(replica for replica in service.replicas if not replica.required)
    counts = _counts_in_every_order(cluster, later, later_within)
    return _with(service, {**minimum, **_lowest_index_first(cluster, later, later_within)},
                 _verdicts(later, counts), job_domain, _ranges(service, required, later, counts))

def _place_together(cluster: Nodes, replicas: list[Replica], within: frozenset[str] | None
                    ) -> dict[str, Placement] | None:
    """REPLICAS placed WITHIN, each as its own topology says, or none of them."""
    saved = dict(cluster.free)
    out = {}
    for replica in replicas:
        outcome = place_replica(cluster, replica, within)
        if outcome is None:
            cluster.free = saved
            return None
        out[replica.name] = outcome
    return out

def place_replica(cluster: Nodes, replica: Replica, within: frozenset[str] | None) -> Placement | None:
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

def _classes(replicas: Iterable[Replica]) -> list[list[Replica]]:
    """Replicas the scheduler cannot tell apart (one role, the same pods' GPUs, the same topology),
    each class lowest index first: which of a class is placed is the order's choice alone."""
    classes: dict[tuple[Any, ...], list[Replica]] = {}
    for replica in sorted(replicas, key=lambda r: r.index):
        shape = (replica.role, tuple(pod.gpus for pod in replica.pods), tuple(sorted((replica.topology or {}).items())))
        classes.setdefault(shape, []).append(replica)
    return list(classes.values())

def _counts_in_every_order(cluster: Nodes, classes: list[list[Replica]], within: frozenset[str] | None
                           ) -> set[tuple[int, ...]] | None:
    """Every count of replicas placed per class that some order of trying them (each once, placed whole
    where it fits) ends with; None where the orders pass through more than ORDERS_EXPLORED states. A
    replica that does not fit never will (placing only takes room): the rest of its class waits."""
    start = dict(cluster.free)
    outcomes: set[tuple[int, ...]] = set()
    seen: set[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = set()
    frontier = [(start, tuple(len(members) for members in classes), (0,) * len(classes))]
    try:
        while frontier:
            free, left, placed = frontier.pop()
            open_classes = [c for c, count in enumerate(left) if count]
            if not open_classes:
                outcomes.add(placed)
            for c in open_classes:
                cluster.free = dict(free)
                tries = left[c] if len(open_classes) == 1 else 1  # one class left: no order to choose
                fitted = 0
                while fitted < tries and place_replica(cluster, classes[c][0], within) is not None:
                    fitted += 1
                after = _at(left, c, 0 if fitted < tries else left[c] - fitted)
                state = (cluster.free, after, _at(placed, c, placed[c] + fitted))
                key = (cluster.snapshot(), state[1], state[2])
                if key not in seen:
                    if len(seen) >= ORDERS_EXPLORED:
                        return None
                    seen.add(key)
                    frontier.append(state)
    finally:
        cluster.free = start
    return outcomes

def _at(counts: tuple[int, ...], position: int, value: int) -> tuple[int, ...]:
    return (*counts[:position], value, *counts[position + 1:])

def _lowest_index_first(cluster: Nodes, classes: list[list[Replica]], within: frozenset[str] | None
                        ) -> dict[str, Placement]:
    """One of those orders, kept on the cluster: the pods' nodes the preview shows."""
    placed = {}
    full: set[int] = set()
    for c, replica in sorted(((c, r) for c, members in enumerate(classes) for r in members),
                             key=lambda found: found[1].index):
        outcome = None if c in full else place_replica(cluster, replica, within)
        if outcome is None:
            full.add(c)  # as the orders are played: the rest of its class waits
        else:
            placed[replica.name] = outcome
    return placed

def _verdicts(classes: list[list[Replica]], counts: set[tuple[int, ...]] | None) -> dict[str, Outcome]:
    """A class placed whole in every order is placed, one placed in none waits; the rest is undecided."""
    verdicts = {}
    for c, members in enumerate(classes):
        placed = {outcome[c] for outcome in counts} if counts is not None else {0, len(members)}
        verdict = (Outcome.PLACED if placed == {len(members)} else Outcome.WAITS if placed == {0}
                   else Outcome.UNDECIDED)
        verdicts.update(dict.fromkeys((replica.name for replica in members), verdict))
    return verdicts

def _ranges(service: ServicePlan, required: list[Replica], classes: list[list[Replica]],
            counts: set[tuple[int, ...]] | None) -> tuple[dict[str, tuple[int, int]], tuple[int, int]]:
    """How many replicas of each role are placed, and their GPUs: the fewest and the most over every
    order (from the minimum to everything, where the orders were too many to play)."""
    if counts is None:
        counts = {(0,) * len(classes), tuple(len(members) for members in classes)}
    per_role: dict[str, list[int]] = {role.name: [] for role in service.roles}
    gpus = []
    for outcome in counts:
        for role, found in per_role.items():
            found.append(sum(r.role == role for r in required) + sum(
                outcome[c] for c, members in enumerate(classes) if members[0].role == role))
        gpus.append(sum(r.gpus for r in required) + sum(outcome[c] * members[0].gpus
                                                          for c, members in enumerate(classes)))
    return {role: (min(found), max(found)) for role, found in per_role.items()}, (min(gpus), max(gpus))

def _with(service: ServicePlan, placed: Mapping[str, Placement], outcomes: Mapping[str, Outcome],
          job_domain: str | None, counts: tuple[dict[str, tuple[int, int]], tuple[int, int]]) -> ServicePlan:
    """SERVICE as planned: each replica's outcome (a required one placed where PLACED has it), its pods
    on the nodes of one placement where it is placed in every order."""
    def planned(replica: Replica) -> Replica:
        outcome = outcomes.get(replica.name, Outcome.PLACED if replica.name in placed else Outcome.WAITS)
        pods, domain = placed[replica.name] if outcome is Outcome.PLACED else (replica.pods, None)
        return Replica(replica.role, replica.index, replica.required, pods, replica.topology, domain, outcome)

    roles, gpus = counts
    return ServicePlan(service.name, service.gang, tuple(
        PlannedRole(role.name, role.component_type, tuple(map(planned, role.replicas)), role.autoscaled,
                    roles.get(role.name, (0, 0)))
        for role in service.roles), service.topology, job_domain, gpus)
