"""An InferenceService's status from its pods: each role's ComponentStatus, the Ready condition and,
where roles roll (layouts role and disaggregated), the Progressing one.

Standard library only: `fusion-helm status` computes it, and so does the post-install hook inside a
stock Python image, each reading the cluster through its own client (a `Reader`): `observe` reads the
pods (those labelled ``fusioninfer.io/service=<name>``) and what `reads` names for the service's layout —
its LeaderWorkerSets labelled so, its DisaggregatedSet and that set's role scalers — and the rest is pure.
The caller writes the result where it wants (the status subresource, a table, JSON).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol

from fusion_helm.base.kinds import DISAGGREGATED_SET, JOB, LEADER_WORKER_SET, POD, ROLE_SCALER, SCALED_OBJECT, Kind
from fusion_helm.base.labels import (
    ANNOTATION_GROUP_NAME,
    LABEL_FETCHES_FOR,
    LABEL_ROLE_NAME,
    LABEL_SERVICE,
    LABEL_SET_NAME,
    LABEL_SET_ROLE,
    LABEL_SPEC_HASH,
    one_per_replica,
    replica_index,
    revision,
)
from fusion_helm.base.needs import fetches_weights, node_count, queries_prometheus, replicas, serving_roles

OWNED = "ModelNamesOwned"  # whether another route matches the service's model names on its shared Gateway
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


@dataclass(frozen=True)
class Workloads:
    """What the caller read besides pods, as `reads` asks: the service's LeaderWorkerSets, its
    DisaggregatedSet (None: not read, or not there) and that set's role scalers."""

    leader_worker_sets: tuple[Mapping[str, Any], ...] = ()
    disaggregated_set: Mapping[str, Any] | None = None
    role_scalers: tuple[Mapping[str, Any], ...] = ()
    fetch_jobs: tuple[Mapping[str, Any], ...] = ()
    """The Jobs that fetch the service's weights onto its cache volume, and their pods."""
    fetch_pods: tuple[Mapping[str, Any], ...] = ()
    scaled_objects: tuple[Mapping[str, Any], ...] = ()
    """KEDA's ScaledObjects of the roles that query Prometheus: their health says which signal fails."""


class Reader(Protocol):
    """The API server, as the status reads it."""

    def named(self, kind: Kind, namespace: str, name: str) -> Any:
        """The object of KIND named NAME in NAMESPACE, or None where there is none."""

    def items(self, kind: Kind, namespace: str, label_selector: str) -> list[dict[str, Any]]:
        """The objects of KIND in NAMESPACE that LABEL_SELECTOR selects."""


def observe(reader: Reader, namespace: str, service: Mapping[str, Any]
            ) -> tuple[list[dict[str, Any]], Workloads]:
    """The pods of SERVICE (an InferenceService in NAMESPACE, as the API server returns it), and what
    `reads` asks for its layout."""
    name = service["metadata"]["name"]
    kinds = reads(service["spec"])
    ours = f"{LABEL_SERVICE}={name}"
    pods = reader.items(POD, namespace, ours)
    fetching = f"{LABEL_FETCHES_FOR}={name}"
    return pods, Workloads(
        leader_worker_sets=tuple(reader.items(LEADER_WORKER_SET, namespace, ours))
        if LEADER_WORKER_SET in kinds else (),
        disaggregated_set=reader.named(DISAGGREGATED_SET, namespace, name) if DISAGGREGATED_SET in kinds else None,
        role_scalers=tuple(reader.items(ROLE_SCALER, namespace, f"{LABEL_SET_NAME}={name}"))
        if ROLE_SCALER in kinds else (),
        fetch_jobs=tuple(reader.items(JOB, namespace, fetching)) if JOB in kinds else (),
        fetch_pods=tuple(reader.items(POD, namespace, fetching)) if JOB in kinds else (),
        scaled_objects=tuple(reader.items(SCALED_OBJECT, namespace, ours)) if SCALED_OBJECT in kinds else ())


def reads(spec: Mapping[str, Any]) -> frozenset[Kind]:
    """The kinds to list besides pods for an InferenceService with SPEC: where a role's count and rollout
    are its LeaderWorkerSets' (an autoscaler may own the count; the LWS or DisaggregatedSet controller
    rolls), those; in layout disaggregated also the DisaggregatedSet and its role scalers (an autoscaled
    role's count); where weights are fetched onto a cache, the fetch Jobs (and their pods)."""
    layout = spec.get("layout")
    kinds = {JOB} if fetches_weights(spec) else set()
    if queries_prometheus(spec):
        kinds.add(SCALED_OBJECT)
    if layout == "role":
        kinds.add(LEADER_WORKER_SET)
    elif layout == "disaggregated":
        kinds |= {LEADER_WORKER_SET, DISAGGREGATED_SET, ROLE_SCALER}
    return frozenset(kinds)


def role_shapes(spec: Mapping[str, Any], workloads: Workloads = Workloads()) -> list[RoleShape]:
    """From an InferenceService spec as the API server stores it (defaults as the schema's). In the
    role layout a role's count is its LeaderWorkerSet's, in layout disaggregated an autoscaled role's is
    its role scaler's: an autoscaler may have set either."""
    if spec.get("layout") == "disaggregated":
        counts = {_labels(scaler).get(LABEL_SET_ROLE, ""): int((scaler.get("spec") or {}).get("replicas", 0))
                  for scaler in workloads.role_scalers}
    else:
        counts = {_role_of(lws): (lws.get("spec") or {}).get("replicas", 1)
                  for lws in _whole(workloads.leader_worker_sets)}
    return [RoleShape(role["name"], counts.get(role["name"], replicas(role)), node_count(role))
            for role in serving_roles(spec)]


def _whole(leader_worker_sets: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The role-layout ones: a role's one LeaderWorkerSet, without a replica's index or a revision."""
    return [lws for lws in leader_worker_sets
            if not one_per_replica(_labels(lws)) and not revision(_labels(lws))]


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    labels: Mapping[str, str] = (obj.get("metadata") or {}).get("labels") or {}
    return labels


def _role_of(lws: Mapping[str, Any]) -> str:
    return str(_labels(lws).get(LABEL_ROLE_NAME, ""))


def rollout_partition(lws_spec: Mapping[str, Any]) -> int:
    """The groups below it keep their template in a rollout (0: none)."""
    configuration = (lws_spec.get("rolloutStrategy") or {}).get("rollingUpdateConfiguration") or {}
    return int(configuration.get("partition") or 0)


def rollouts(leader_worker_sets: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Layout role: role → how far its rolling update is, for each role's LeaderWorkerSet still changing.

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
        groups = spec.get("replicas", 1)
        partition = rollout_partition(spec)
        updated = reported.get("updatedReplicas", 0)
        updating = any(c.get("type") == "UpdateInProgress" and c.get("status") == "True"
                       for c in reported.get("conditions") or [])
        if updating or updated < groups - min(partition, groups):
            found[_role_of(lws)] = f"{updated}/{groups} groups updated"
    return found


def revision_rollouts(disaggregated_set: Mapping[str, Any] | None, leader_worker_sets: Iterable[Mapping[str, Any]],
                      desired: Mapping[str, int]) -> dict[str, str]:
    """Layout disaggregated: role → how many of its DESIRED groups are ready on the new revision, while
    the DisaggregatedSet rolls (its LeaderWorkerSets are of more than one revision), or "not yet seen"
    while no LeaderWorkerSet carries the spec the set now has for the role (its controller has not
    acted on a change yet: the set writes no status of its own).

    The new revision is the one whose LeaderWorkerSets carry the set's current spec hashes."""
    if disaggregated_set is None:
        return {}
    wanted = {role.get("name", ""): ((role.get("metadata") or {}).get("labels") or {}).get(LABEL_SPEC_HASH)
              for role in (disaggregated_set.get("spec") or {}).get("roles") or []}
    by_role: dict[str, list[Mapping[str, Any]]] = {}
    for lws in leader_worker_sets:
        if revision(_labels(lws)):
            by_role.setdefault(_role_of(lws), []).append(lws)
    new = {role: next((lws for lws in by_role.get(role, []) if _labels(lws).get(LABEL_SPEC_HASH) == spec_hash),
                      None) for role, spec_hash in wanted.items()}
    unseen = {role: "not yet seen by the DisaggregatedSet controller" for role, lws in new.items() if lws is None}
    if unseen:
        return unseen
    revisions = {revision(_labels(lws)) for found in by_role.values() for lws in found
                 if (lws.get("spec") or {}).get("replicas", 1) or (lws.get("status") or {}).get("replicas")}
    if len(revisions) <= 1:
        return {}
    return {role: f"{(lws.get('status') or {}).get('readyReplicas', 0)}/{desired.get(role, 0)} groups ready on "
                  f"revision {revision(_labels(lws))}" for role, lws in new.items() if lws is not None}


def component_statuses(service: str, roles: Iterable[RoleShape], pods: Iterable[Mapping[str, Any]]
                       ) -> dict[str, ComponentStatus]:
    """Each role's status from the service's pods (others are ignored). A replica is a group of pods:
    by replica index, and in layout disaggregated by revision too (two revisions' groups of one index
    are two replicas, each serving). Groups beyond the role's current count (being removed) do not
    count; a role is ready when as many groups as it wants are, of whichever revision."""
    by_replica: dict[tuple[str, str, int], list[Mapping[str, Any]]] = {}
    for pod in pods:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        index = replica_index(labels)
        if labels.get(LABEL_SERVICE) == service and index is not None and index.isdigit():
            key = (labels.get(LABEL_ROLE_NAME, ""), revision(labels), int(index))
            by_replica.setdefault(key, []).append(pod)
    return {role.name: _role_status(role.replicas, role.node_count,
                                    [members for (name, revision, index), members in sorted(by_replica.items())
                                     if name == role.name and (revision or index < role.replicas)])
            for role in roles}


def _role_status(replicas: int, nodes: int, replica_pods: list[list[Mapping[str, Any]]]) -> ComponentStatus:
    pods = [pod for members in replica_pods for pod in members]
    ready_pods = sum(map(_ready, pods))
    ready_groups = sum(1 for members in replica_pods if len(members) == nodes and all(map(_ready, members)))
    ready_replicas = min(ready_groups, replicas)
    problems = [problem for pod in pods if (problem := _failure(pod))]
    if problems:
        phase = Phase.FAILED
    elif ready_replicas == replicas:
        phase = Phase.RUNNING
    elif any((pod.get("spec") or {}).get("nodeName") for pod in pods):
        phase = Phase.DEPLOYING
    else:
        phase = Phase.PENDING
    return ComponentStatus(replicas, ready_replicas, nodes, min(ready_pods, replicas * nodes), phase,
                           problems[0] if problems else "")


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


def rolling(spec: Mapping[str, Any], workloads: Workloads) -> dict[str, str] | None:
    """Role → how far its rollout is, for the layouts whose roles roll (None for the replica layout,
    which has no Progressing condition)."""
    layout = spec.get("layout")
    if layout == "role":
        return rollouts(workloads.leader_worker_sets)
    if layout == "disaggregated":
        desired = {shape.name: shape.replicas for shape in role_shapes(spec, workloads)}
        return revision_rollouts(workloads.disaggregated_set, workloads.leader_worker_sets, desired)
    return None


def weights(spec: Mapping[str, Any], workloads: Workloads) -> tuple[str, str, str] | None:
    """The WeightsReady condition's status, reason and message from the fetch Jobs (None: nothing is
    fetched): True once every Job has completed; a failed Job's reason is its last pod's own words."""
    if not fetches_weights(spec):
        return None
    jobs = sorted(workloads.fetch_jobs, key=lambda job: str(job["metadata"]["name"]))
    if not jobs:
        return "False", "FetchJobMissing", "no fetch Job of the service exists (yet)"
    failed = [job for job in jobs if _job_condition(job, "Failed")]
    if failed:
        return "False", "FetchFailed", "; ".join(f"{job['metadata']['name']}: {_last_words(job, workloads)}"
                                                 for job in failed)
    running = [job for job in jobs if not _job_condition(job, "Complete")]
    stuck = [f"{job['metadata']['name']}: {words}" for job in running if (words := _stuck(job, workloads))]
    if stuck:  # a Secret it names is missing, its image cannot be pulled: it will not start on its own
        return "False", "FetchFailed", "; ".join(stuck)
    if running:
        return "False", "Fetching", "; ".join(
            f"{job['metadata']['name']} fetching since {(job.get('status') or {}).get('startTime', 'its start')}"
            + (f", {failures} failed attempt(s)" if (failures := (job.get("status") or {}).get("failed")) else "")
            for job in running)
    return "True", "WeightsFetched", f"every source is on the cache volume ({len(jobs)} fetch Job(s) complete)"


def signals_read(service: str, spec: Mapping[str, Any], workloads: Workloads) -> tuple[str, str, str] | None:
    """The SignalsRead condition's status, reason and message from KEDA's health of each trigger (None: no
    role queries Prometheus): False naming each trigger KEDA reports failing — the signal's series absent
    because none of the service's pods is scraped there, or Prometheus unreachable."""
    if not queries_prometheus(spec):
        return None
    failing = []
    for scaled in sorted(workloads.scaled_objects, key=lambda obj: str(obj["metadata"]["name"])):
        triggers = (scaled.get("spec") or {}).get("triggers") or []
        for metric, health in sorted(((scaled.get("status") or {}).get("health") or {}).items()):
            if not isinstance(health, Mapping) or health.get("status") != "Failing":
                continue
            index = metric.partition("-")[0].removeprefix("s")
            trigger = triggers[int(index)] if index.isdigit() and int(index) < len(triggers) else {}
            address = (trigger.get("metadata") or {}).get("serverAddress", "its Prometheus")
            failing.append(f"{_labels(scaled).get(LABEL_ROLE_NAME, scaled['metadata']['name'])}: "
                           f"{trigger.get('name', metric)} from {address} "
                           f"({health.get('numberOfFailures', '?')} polls failed)")
    if not failing:
        return "True", "SignalsRead", "KEDA reads every signal the autoscalers query"
    return ("False", "SignalsUnread",
            "KEDA cannot read " + "; ".join(failing) + f": none of the service's pods is scraped there (does "
            f"that Prometheus select the PodMonitors labelled {LABEL_SERVICE}={service}? do its pods reach "
            "theirs: spec.networkPolicy.prometheus?), or it is unreachable; meanwhile each such role runs its "
            "autoscaling.fallbackReplicas")


def _job_condition(job: Mapping[str, Any], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or [])


def _stuck(job: Mapping[str, Any], workloads: Workloads) -> str | None:
    """Why a pod of JOB cannot start, where it waits for a reason that will not resolve on its own."""
    for pod in workloads.fetch_pods:
        if ((pod.get("metadata") or {}).get("labels") or {}).get("job-name") != job["metadata"]["name"]:
            continue
        for container in (pod.get("status") or {}).get("containerStatuses") or []:
            waiting = (container.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in FAILING_REASONS:
                return f"{waiting['reason']}: {waiting.get('message', '')}".rstrip(": ")
    return None


def _last_words(job: Mapping[str, Any], workloads: Workloads) -> str:
    """What the Job's latest failed pod said (its termination message: the fetch's one line), else the Job's
    own condition message."""
    name = job["metadata"]["name"]
    said = []
    for pod in workloads.fetch_pods:
        if ((pod.get("metadata") or {}).get("labels") or {}).get("job-name") != name:
            continue
        for container in (pod.get("status") or {}).get("containerStatuses") or []:
            terminated = (container.get("state") or {}).get("terminated") or {}
            if terminated.get("exitCode", 0) != 0 and terminated.get("message"):
                said.append((str(terminated.get("finishedAt", "")), str(terminated["message"]).strip()))
    if said:
        return max(said)[1]
    failed: Mapping[str, Any] = next((c for c in (job.get("status") or {}).get("conditions") or []
                                      if c.get("type") == "Failed"), {})
    return str(failed.get("message") or failed.get("reason") or "failed")


def as_patch(body: Mapping[str, Any]) -> dict[str, Any]:
    """A status BODY as the JSON merge patch that writes it. Each condition carries the generation it
    describes; a top-level ``observedGeneration`` (written once) is removed: no controller keeps it up
    to date, and Helm 4's --wait, which reads it as a controller's, would wait for it in vain."""
    return {"status": {**body, "observedGeneration": None}}


def service_status(service: Mapping[str, Any], pods: Iterable[Mapping[str, Any]], timestamp: str,
                   workloads: Workloads = Workloads(), owned: tuple[str, str, str] | None = None
                   ) -> tuple[dict[str, ComponentStatus], dict[str, Any]]:
    """Each role's status, and the status subresource, of an InferenceService as the API server
    returns it (its spec, generation and current conditions), from its pods and what `reads` asked for;
    OWNED: whether it owns its model names (model_owners.ownership; None: not listed, the last kept)."""
    metadata = service["metadata"]
    pods = list(pods)
    statuses = component_statuses(metadata["name"], role_shapes(service["spec"], workloads), pods)
    shared = any(role.get("sharedGateway") for role in service["spec"].get("roles") or [])
    return statuses, status_object(statuses, metadata.get("generation", 0), timestamp,
                                   (service.get("status") or {}).get("conditions") or [],
                                   rolling(service["spec"], workloads), outside_group(metadata["name"], pods),
                                   metadata["name"], weights(service["spec"], workloads),
                                   owned, (OWNED,) if shared and owned is None else (),
                                   signals_read(metadata["name"], service["spec"], workloads))


def outside_group(service: str, pods: Iterable[Mapping[str, Any]]) -> list[str]:
    """The pods whose PodGroup is not the service's (sorted): LWS's own gang scheduling rewrites the
    annotation that names it, and Volcano then places them apart from the service's gang."""
    return sorted(str((pod.get("metadata") or {}).get("name", "?")) for pod in pods
                  if ((pod.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_GROUP_NAME, service)
                  != service)


def status_object(statuses: Mapping[str, ComponentStatus], generation: int, now: str,
                  previous: Iterable[Mapping[str, Any]] = (), rolling: Mapping[str, str] | None = None,
                  outside: Iterable[str] = (), service: str = "",
                  fetched: tuple[str, str, str] | None = None, owned: tuple[str, str, str] | None = None,
                  kept: Iterable[str] = (), read: tuple[str, str, str] | None = None) -> dict[str, Any]:
    """The status subresource: components, a Ready condition, where roles roll (ROLLING given: role →
    progress of its rollout) a Progressing one, where pods are OUTSIDE the service's PodGroup a
    GangScheduling one, where weights are fetched (FETCHED: `weights`) a WeightsReady one, OWNED a
    ModelNamesOwned one, READ (`signals_read`) a SignalsRead one, and those of types KEPT as they were (this
    caller did not observe them); a condition's transition time is kept while its status holds, as Kubernetes
    conditions do."""
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
    outside = list(outside)
    if outside:
        conditions.append(condition("GangScheduling", "False", "GroupNameOverridden",
                                    f"pods not in PodGroup {service} (is LWS gangSchedulingManagement on?): "
                                    + ", ".join(outside[:5])))
    if fetched is not None:
        conditions.append(condition("WeightsReady", *fetched))
    if owned is not None:
        conditions.append(condition(OWNED, *owned))
    if read is not None:
        conditions.append(condition("SignalsRead", *read))
    conditions += [dict(c) for c in previous if c.get("type") in set(kept)]
    return {
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


def taken_over_status(name: str, replicas: Sequence[Mapping[str, Any]],
                      pods: Callable[[], Iterable[Mapping[str, Any]]], now: str) -> dict[str, Any]:
    """The status of a taken-over LeaderWorkerSet NAME, as LWS reports one, from the LeaderWorkerSets the
    take-over made of it (REPLICAS: in layout role one, which kept its name and LWS reports on itself; in
    layout replica one per replica) and, where LWS reports on none of them, their PODS (read only then)."""
    whole = next((lws for lws in replicas if (lws.get("metadata") or {}).get("name") == name), None)
    if whole is not None:
        reported = whole.get("status") or {}
        return {"replicas": reported.get("replicas", 0), "readyReplicas": reported.get("readyReplicas", 0),
                "conditions": reported.get("conditions", [])}
    shape = RoleShape(_role_of(replicas[0]), len(replicas), _group_size(replicas[0]))
    [component] = component_statuses(name, [shape], pods()).values()
    return leader_worker_set_status(component, len(replicas), now)


def _group_size(lws: Mapping[str, Any]) -> int:
    return int(((lws.get("spec") or {}).get("leaderWorkerTemplate") or {}).get("size", 1))


def taken_over_table(name: str, replicas: Sequence[Mapping[str, Any]], result: Mapping[str, Any]) -> str:
    """`taken_over_status`'s RESULT, a line for the counts and one per condition."""
    lines = [f"LeaderWorkerSet {name} (taken over): {result['readyReplicas']}/{result['replicas']} "
             f"replicas ready, {_group_size(replicas[0])} pod(s) each"]
    lines += [f"  {c['type']}: {c['status']} ({c['reason']}: {c['message']})" for c in result["conditions"]]
    return "\n".join(lines) + "\n"


def to_table(service: str, statuses: Mapping[str, ComponentStatus], rolling: Mapping[str, str] | None = None,
             fetched: tuple[str, str, str] | None = None, read: tuple[str, str, str] | None = None) -> str:
    """ROLLING: role → how far its rollout is (`rollouts`), a line each; FETCHED: the weights (`weights`);
    READ: the autoscalers' signals (`signals_read`), where one is not read."""
    rows = [("ROLE", "PHASE", "READY REPLICAS", "NODES/REPLICA", "READY PODS")]
    rows += [(name, s.phase.value, f"{s.ready_replicas}/{s.desired_replicas}", str(s.nodes_per_replica),
              f"{s.ready_pods}/{s.total_pods}") for name, s in statuses.items()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [f"InferenceService {service}"]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines += [f"{name}: {s.problem}" for name, s in statuses.items() if s.problem]
    lines += [f"{name} progressing: {progress}" for name, progress in (rolling or {}).items()]
    if fetched is not None:
        lines.append(f"weights: {fetched[2]}" if fetched[0] == "True" else f"weights: {fetched[1]}: {fetched[2]}")
    if read is not None and read[0] != "True":
        lines.append(f"signals: {read[1]}: {read[2]}")
    return "\n".join(lines) + "\n"
