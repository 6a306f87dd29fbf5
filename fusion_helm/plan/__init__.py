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

from collections.abc import Iterable, Mapping
from typing import Any

from fusion_helm.plan.nodes import Nodes, Pod
from fusion_helm.plan.services import PlannedRole, Replica, ServicePlan, read_services


def plan(objects: Iterable[Mapping[str, Any]], nodes: int, gpus_per_node: int) -> list[ServicePlan]:
    """Play every service in OBJECTS (generated PodGroups and LeaderWorkerSets) onto the cluster."""
    return place_all(objects, Nodes.of(nodes, gpus_per_node))

def place_all(objects: Iterable[Mapping[str, Any]], cluster: Nodes) -> list[ServicePlan]:
    return [_place(service, cluster) for service in read_services(objects)]

def _place(service: ServicePlan, cluster: Nodes) -> ServicePlan:
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

def _place_replica(cluster: Nodes, replica: Replica, within: frozenset[str] | None
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
        PlannedRole(role.name, role.component_type, tuple(
            Replica(r.role, r.index, r.required, placed.get(r.name, r.pods), r.topology, domains.get(r.name))
            for r in role.replicas), role.autoscaled)
        for role in service.roles), service.topology, job_domain)
