"""A preview as `fusion-helm plan` prints it: a tree, or JSON."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fusion_helm.plan.services import Outcome, PlannedRole, Replica, ServicePlan


def summary(service: ServicePlan) -> str:
    """E.g. "1 prefill + 1 decode of 1 prefill + 2 decode", "1 prefill + 1-2 decode of …" where the
    scheduler's order decides."""
    placed = " + ".join(f"{_span(role.placed)} {role.name}" for role in service.roles)
    return f"{placed} of {' + '.join(f'{len(role.replicas)} {role.name}' for role in service.roles)}"

def _span(fewest_most: tuple[int, int]) -> str:
    fewest, most = fewest_most
    return str(fewest) if fewest == most else f"{fewest}-{most}"

def to_json(plans: list[ServicePlan], nodes: int, gpus_per_node: int) -> dict[str, Any]:
    return {
        "cluster": {"nodes": nodes, "gpusPerNode": gpus_per_node, "gpus": nodes * gpus_per_node},
        "services": [{
            "name": service.name,
            "state": service.state.value,
            "gang": service.gang,
            "placedGPUs": _range(service.placed_gpus),
            **({"networkTopology": dict(service.topology), "within": service.domain} if service.topology else {}),
            "roles": [{
                "name": role.name,
                "componentType": role.component_type,
                "placed": _range(role.placed),
                **({"autoscaled": {"minReplicas": role.autoscaled.min_replicas,
                                   "maxReplicas": role.autoscaled.max_replicas,
                                   "planned": role.autoscaled.planned}} if role.autoscaled else {}),
                "replicas": [{
                    "name": replica.name,
                    "outcome": replica.outcome.value,
                    "required": replica.required,
                    "gpus": replica.gpus,
                    **({"networkTopology": dict(replica.topology), "within": replica.domain} if replica.topology
                       else {}),
                    "pods": [{"name": pod.name, "gpus": pod.gpus, "node": pod.node} for pod in replica.pods],
                } for replica in role.replicas],
            } for role in service.roles],
        } for service in plans],
    }

def _range(fewest_most: tuple[int, int]) -> dict[str, int]:
    return {"min": fewest_most[0], "max": fewest_most[1]}

def to_tree(plans: list[ServicePlan], nodes: int, gpus_per_node: int) -> str:
    """service → role → replica → pods, like the design's diagrams."""
    lines = [f"cluster: {nodes} nodes x {gpus_per_node} GPUs = {nodes * gpus_per_node} GPUs"]
    for service in plans:
        wanted = sum(replica.gpus for replica in service.replicas)
        within = f"; within {service.domain}" if service.domain else ""
        lines.append(f"{service.name}: {service.state.description} ({summary(service)}; "
                     f"{_span(service.placed_gpus)} of {wanted} GPUs{within})")
        for role_last, role in _last(service.roles):
            scaling = f"; {role.autoscaled.note}" if role.autoscaled else ""
            lines.append(f"{_branch(role_last)}{role.name} ({role.component_type}{scaling})")
            role_indent = _indent(role_last)
            for replica_last, replica in _last(role.replicas):
                mark = _replica_mark(replica, role)
                minimum = ", atomic minimum" if replica.required else ""
                lines.append(f"{role_indent}{_branch(replica_last)}{replica.name}: {mark} "
                             f"({len(replica.pods)} pods, {replica.gpus} GPUs{minimum})")
                pod_indent = role_indent + _indent(replica_last)
                for pod_last, pod in _last(replica.pods):
                    where = f"on {pod.node}" if pod.node else (
                        "placed or pending" if replica.outcome is Outcome.UNDECIDED else "pending")
                    lines.append(f"{pod_indent}{_branch(pod_last)}{pod.name}  {pod.gpus} GPUs  {where}")
    return "\n".join(lines) + "\n"

def _replica_mark(replica: Replica, role: PlannedRole) -> str:
    """Placed (within which HyperNode its bound allows), how many of its like the order places, or why
    it waits."""
    if replica.placed:
        return f"placed within {replica.domain}" if replica.domain else "placed"
    if replica.outcome is Outcome.UNDECIDED:
        undecided = [r for r in role.replicas if r.outcome is Outcome.UNDECIDED]
        certain = sum(r.placed for r in role.replicas)
        fewest, most = role.placed
        return (f"placed or waits: {_span((fewest - certain, most - certain))} of "
                f"{', '.join(r.name for r in undecided)} placed, in the scheduler's order")
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
