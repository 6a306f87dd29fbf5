"""A preview as `fusion-helm plan` prints it: a tree, or JSON."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fusion_helm.plan.services import Replica, ServicePlan


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
