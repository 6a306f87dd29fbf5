"""The preview's cluster: identical nodes, maybe in Volcano HyperNodes, each with its free GPUs."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from fusion_helm.base.kinds import HYPER_NODE
from fusion_helm.records import record

T = TypeVar("T")
GPU = "nvidia.com/gpu"
"""Volcano's description of the cluster's network (topology.volcano.sh/v1alpha1), for ``--topology``."""


@record
class Pod:
    name: str
    gpus: int
    node: str | None = None


@record
class Domain:
    """A HyperNode: the nodes behind one switch or NVLink domain (tier 1), or those of the HyperNodes
    below it (higher tiers)."""

    name: str
    tier: int
    tier_name: str | None
    nodes: frozenset[str]

class PlanError(ValueError):
    """A cluster the preview cannot be given, in the words of `fusion-helm plan`'s options."""

class TopologyError(PlanError):
    """HyperNodes or a networkTopology the preview cannot read; its message leaves out where the
    HyperNodes came from, for the caller to name (the --topology file)."""

class Nodes:
    """Identical nodes, maybe in HyperNodes; each node knows its free GPUs (and places pods: the one
    mutable object here)."""

    def __init__(self, gpus_per_node: int, free: dict[str, int], domains: tuple[Domain, ...] = ()) -> None:
        self.gpus_per_node = gpus_per_node
        self.free = free
        self.domains = domains

    @classmethod
    def of(cls, nodes: int, gpus_per_node: int) -> Nodes:
        width = len(str(max(nodes - 1, 0)))
        return cls(gpus_per_node, {f"node-{i:0{width}d}": gpus_per_node for i in range(nodes)})

    @classmethod
    def of_hyper_nodes(cls, hyper_nodes: Iterable[Mapping[str, Any]], gpus_per_node: int) -> Nodes:
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

    def snapshot(self) -> tuple[int, ...]:
        """The free GPUs as a key: per node in order, or without HyperNodes, where nodes differ only in
        their free GPUs, as a multiset (two nodes swapped place the same)."""
        return tuple(self.free.values()) if self.domains else tuple(sorted(self.free.values()))

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
            if member.get("type") == HYPER_NODE.kind:
                if exact not in specs:
                    raise TopologyError(f"HyperNode {name}: spec.members[{position}]: no HyperNode {exact}")
                nodes |= nodes_of(exact, (*seen, name))
            else:
                nodes.add(exact)
        return frozenset(nodes)

    return tuple(Domain(name, spec["tier"], spec.get("tierName"), nodes_of(name, ())) for name, spec in specs.items())

def cluster_of(gpus_per_node: int, *, hyper_nodes: Sequence[Mapping[str, Any]] | None = None, gpus: int | None = None,
               nodes: int | None = None) -> tuple[Nodes, int]:
    """The preview's cluster and its number of nodes, GPUS_PER_NODE GPUs each: the nodes HYPER_NODES name
    (the HyperNodes read from a file; none is an error), else GPUS in all, else NODES."""
    if hyper_nodes is not None:
        if not hyper_nodes:
            raise TopologyError(f"holds no {HYPER_NODE.kind} ({HYPER_NODE.api_version})")
        cluster = Nodes.of_hyper_nodes(hyper_nodes, gpus_per_node)
        return cluster, len(cluster.free)
    if gpus is not None:
        if gpus % gpus_per_node:
            raise PlanError(f"--gpus {gpus} is not a whole number of {gpus_per_node}-GPU nodes "
                            "(set --gpus-per-node)")
        nodes = gpus // gpus_per_node
    if nodes is None:
        raise TypeError("cluster_of takes hyper_nodes, gpus or nodes")
    return Nodes.of(nodes, gpus_per_node), nodes
