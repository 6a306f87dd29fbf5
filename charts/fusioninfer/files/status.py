"""An InferenceService's status from its pods: each role's ComponentStatus, the Ready condition and,
in the role layout, the Progressing one.

Pure, and standard library only: `fusion-helm status` runs it, and so does the post-install hook
inside a stock Python image. The caller lists the pods (those labelled ``fusioninfer.io/service=<name>``)
and, in the role layout (`role_layout`), the LeaderWorkerSets labelled so, and writes the result where
it wants (the status subresource, a table, JSON).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from fusion_helm import labels as naming

# Waiting reasons that will not resolve on their own: the role has failed until someone acts.
FAILING_REASONS = frozenset({"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "InvalidImageName",
                             "CreateContainerConfigError", "CreateContainerError", "RunContainerError"})


class Phase(StrEnum):
    PENDING = "Pending"
    """No pod of the role is on a node yet."""
    DEPLOYING = "Deploying"
    """Some pods are placed or starting; not every replica is ready."""
    RUNNING = "Running"
    """Every replica is ready: all of its pods are."""
    FAILED = "Failed"
    """A pod failed, or a container cannot start (crash loop, image pull, bad config)."""


@dataclass(frozen=True)
class ComponentStatus:
    desired_replicas: int
    ready_replicas: int
    nodes_per_replica: int
    ready_pods: int
    phase: Phase
    problem: str = ""
    """Why the phase is Failed: the first failing pod and its reason."""

    @property
    def total_pods(self) -> int:
        return self.desired_replicas * self.nodes_per_replica

    def to_manifest(self) -> dict[str, Any]:
        return {"desiredReplicas": self.desired_replicas, "readyReplicas": self.ready_replicas,
                "nodesPerReplica": self.nodes_per_replica, "totalPods": self.total_pods,
                "readyPods": self.ready_pods, "phase": self.phase.value}


@dataclass(frozen=True)
class RoleShape:
    """What the status needs of a role."""

    name: str
    replicas: int
    node_count: int


def role_layout(spec: Mapping[str, Any]) -> bool:
    """Whether a role's count and rollout are its one LeaderWorkerSet's: the caller then lists the
    service's LeaderWorkerSets too (an autoscaler may own the count, and the LWS controller rolls)."""
    return spec.get("layout") == "role"


def role_shapes(spec: Mapping[str, Any], leader_worker_sets: Iterable[Mapping[str, Any]] = ()) -> list[RoleShape]:
    """From an InferenceService spec as the API server stores it (defaults as the schema's). In the
    role layout a role's count is its LeaderWorkerSet's, which an autoscaler may have set."""
    counts = {_role_of(lws): (lws.get("spec") or {}).get("replicas", 1) for lws in _whole(leader_worker_sets)}
    return [RoleShape(role["name"], counts.get(role["name"], role.get("replicas", 1)),
                      (role.get("multinode") or {}).get("nodeCount", 1))
            for role in spec.get("roles", []) if role.get("componentType") != "router"]


def _whole(leader_worker_sets: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The role-layout ones: a role's one LeaderWorkerSet, without a replica's index."""
    return [lws for lws in leader_worker_sets
            if not naming.one_per_replica((lws.get("metadata") or {}).get("labels") or {})]


def _role_of(lws: Mapping[str, Any]) -> str:
    return str(((lws.get("metadata") or {}).get("labels") or {}).get(naming.LABEL_ROLE_NAME, ""))


def rollout_partition(lws_spec: Mapping[str, Any]) -> int:
    """The groups below it keep their template in a rollout (0: none)."""
    configuration = (lws_spec.get("rolloutStrategy") or {}).get("rollingUpdateConfiguration") or {}
    return int(configuration.get("partition") or 0)


def rollouts(leader_worker_sets: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Role → how far its rolling update is, for each role-layout LeaderWorkerSet still changing.

    LWS's own Progressing condition is no help here: it is also True while groups merely start (a
    first install, a scale-up). UpdateInProgress is the rollout's, and fewer updated groups than the
    partition lets through says the same before the controller has set it. Until the controller has
    seen the latest spec (observedGeneration) its counts are of the previous one."""
    found = {}
    for lws in _whole(leader_worker_sets):
        metadata, spec, reported = lws.get("metadata") or {}, lws.get("spec") or {}, lws.get("status") or {}
        if reported.get("observedGeneration", 0) < metadata.get("generation", 0):
            found[_role_of(lws)] = "not yet seen by the LWS controller"
            continue
        replicas = spec.get("replicas", 1)
        partition = rollout_partition(spec)
        updated = reported.get("updatedReplicas", 0)
        updating = any(c.get("type") == "UpdateInProgress" and c.get("status") == "True"
                       for c in reported.get("conditions") or [])
        if updating or updated < replicas - min(partition, replicas):
            found[_role_of(lws)] = f"{updated}/{replicas} groups updated"
    return found


def component_statuses(service: str, roles: Iterable[RoleShape], pods: Iterable[Mapping[str, Any]]
                       ) -> dict[str, ComponentStatus]:
    """Each role's status from the service's pods (others are ignored); replicas beyond the role's
    current count (being removed) do not count."""
    by_replica: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    for pod in pods:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        index = naming.replica_index(labels)
        if labels.get(naming.LABEL_SERVICE) == service and index is not None and index.isdigit():
            by_replica.setdefault((labels.get(naming.LABEL_ROLE_NAME, ""), int(index)), []).append(pod)
    return {role.name: _role_status(role.replicas, role.node_count,
                                    [by_replica.get((role.name, index), []) for index in range(role.replicas)])
            for role in roles}


def _role_status(replicas: int, nodes: int, replica_pods: list[list[Mapping[str, Any]]]) -> ComponentStatus:
    pods = [pod for members in replica_pods for pod in members]
    ready_pods = sum(map(_ready, pods))
    ready_replicas = sum(1 for members in replica_pods if len(members) == nodes and all(map(_ready, members)))
    problems = [problem for pod in pods if (problem := _failure(pod))]
    if problems:
        phase = Phase.FAILED
    elif ready_replicas == replicas:
        phase = Phase.RUNNING
    elif any((pod.get("spec") or {}).get("nodeName") for pod in pods):
        phase = Phase.DEPLOYING
    else:
        phase = Phase.PENDING
    return ComponentStatus(replicas, ready_replicas, nodes, ready_pods, phase, problems[0] if problems else "")


def _ready(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _failure(pod: Mapping[str, Any]) -> str:
    status = pod.get("status") or {}
    name = (pod.get("metadata") or {}).get("name", "?")
    if status.get("phase") == "Failed":
        return f"pod {name} failed: {status.get('reason') or status.get('message') or 'Failed'}"
    for container in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        reason = ((container.get("state") or {}).get("waiting") or {}).get("reason")
        if reason in FAILING_REASONS:
            return f"pod {name} container {container.get('name')}: {reason}"
    return ""


def now() -> str:
    """A status timestamp: UTC, whole seconds, as Kubernetes writes them."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def service_status(service: Mapping[str, Any], pods: Iterable[Mapping[str, Any]], timestamp: str,
                   leader_worker_sets: Iterable[Mapping[str, Any]] = ()
                   ) -> tuple[dict[str, ComponentStatus], dict[str, Any]]:
    """Each role's status, and the status subresource, of an InferenceService as the API server
    returns it (its spec, generation and current conditions), from its pods and LeaderWorkerSets."""
    metadata = service["metadata"]
    leader_worker_sets = list(leader_worker_sets)
    statuses = component_statuses(metadata["name"], role_shapes(service["spec"], leader_worker_sets), pods)
    rolling = rollouts(leader_worker_sets) if role_layout(service["spec"]) else None
    return statuses, status_object(statuses, metadata.get("generation", 0), timestamp,
                                   (service.get("status") or {}).get("conditions") or [], rolling)


def status_object(statuses: Mapping[str, ComponentStatus], generation: int, now: str,
                  previous: Iterable[Mapping[str, Any]] = (), rolling: Mapping[str, str] | None = None
                  ) -> dict[str, Any]:
    """The status subresource: components, a Ready condition and, in the role layout (ROLLING given:
    role → progress of its rollout), a Progressing one; a condition's transition time is kept while
    its status holds, as Kubernetes conditions do."""
    failed = {name: s for name, s in statuses.items() if s.phase is Phase.FAILED}
    waiting = {name: s for name, s in statuses.items() if s.phase is not Phase.RUNNING}
    if failed:
        ready, reason = "False", "ComponentFailed"
        message = "; ".join(f"{name}: {s.problem}" for name, s in failed.items())
    elif waiting:
        ready, reason = "False", "ComponentsNotReady"
        message = ", ".join(f"{name} {s.ready_replicas}/{s.desired_replicas} replicas ready ({s.phase.value})"
                            for name, s in waiting.items())
    else:
        ready, reason, message = "True", "AllComponentsRunning", "every replica of every role is ready"
    previous = list(previous)

    def condition(kind: str, holds: str, why: str, words: str) -> dict[str, Any]:
        before = next((c for c in previous if c.get("type") == kind), None)
        since = before["lastTransitionTime"] if before and before.get("status") == holds else now
        return {"type": kind, "status": holds, "reason": why, "message": words, "observedGeneration": generation,
                "lastTransitionTime": since}

    conditions = [condition("Ready", ready, reason, message)]
    if rolling is not None:
        conditions.append(condition("Progressing", "True", "RollingUpdate",
                                    "; ".join(f"{name}: {progress}" for name, progress in rolling.items()))
                          if rolling else condition("Progressing", "False", "NoRollout", "no role is rolling"))
    return {
        "observedGeneration": generation,
        "conditions": conditions,
        "components": {name: {**s.to_manifest(), "lastUpdateTime": now} for name, s in statuses.items()},
    }


def leader_worker_set_status(component: ComponentStatus, existing: int, now: str) -> dict[str, Any]:
    """A taken-over LeaderWorkerSet's status as LWS reports it: replicas (the groups that exist),
    readyReplicas (groups with every pod ready), and the Available and Progressing conditions."""
    available = component.desired_replicas > 0 and component.ready_replicas == component.desired_replicas
    progressing = not available and component.phase is not Phase.FAILED

    def condition(kind: str, holds: bool, reason: str, message: str) -> dict[str, str]:
        return {"type": kind, "status": "True" if holds else "False", "reason": reason, "message": message,
                "lastTransitionTime": now}

    ready = f"{component.ready_replicas}/{component.desired_replicas} groups ready"
    return {
        "replicas": existing,
        "readyReplicas": component.ready_replicas,
        "conditions": [
            condition("Available", available, "AllGroupsReady" if available else "GroupsNotReady", ready),
            condition("Progressing", progressing, "GroupsProgressing" if progressing else
                      ("GroupFailed" if component.phase is Phase.FAILED else "GroupsReady"),
                      component.problem or ready),
        ],
    }


def to_table(service: str, statuses: Mapping[str, ComponentStatus], rolling: Mapping[str, str] | None = None
             ) -> str:
    """ROLLING: role → how far its rollout is (`rollouts`), a line each."""
    rows = [("ROLE", "PHASE", "READY REPLICAS", "NODES/REPLICA", "READY PODS")]
    rows += [(name, s.phase.value, f"{s.ready_replicas}/{s.desired_replicas}", str(s.nodes_per_replica),
              f"{s.ready_pods}/{s.total_pods}") for name, s in statuses.items()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [f"InferenceService {service}"]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines += [f"{name}: {s.problem}" for name, s in statuses.items() if s.problem]
    lines += [f"{name} progressing: {progress}" for name, progress in (rolling or {}).items()]
    return "\n".join(lines) + "\n"
