"""A DisaggregatedSet's rollout followed pod by pod, and what a picker answers while it runs.

`PodTimeline` watches the set's serving leaders and keeps, after every pod event, how many groups of
each role and revision exist and how many are Ready, and which revision each pod address belonged to.
With the answers of a `tests.controlplane.pickers.RequestStream` they say which revisions served each request's
prefill and decode. `AskedGroups` keeps how many groups the controller asks of each role, the
count its rollout bounds.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

import kubernetes

from tests.controlplane.cluster import LWS, Cluster, ready
from tests.controlplane.pickers import DESTINATION, PREFILL_HOST, RequestStream

REVISION, SET_NAME, SET_ROLE = ("disaggregatedset.x-k8s.io/revision", "disaggregatedset.x-k8s.io/name",
                                "disaggregatedset.x-k8s.io/role")
WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"

RoleRevision = tuple[str, str]
HANDOVER = 2.0
"""Seconds by which a picker's view of the pods and this module's may differ, at most, in these tests."""


@dataclass(frozen=True)
class Moment:
    at: float
    groups: dict[RoleRevision, int]
    """(role, revision) → groups whose leader exists and is not being deleted."""
    ready: dict[RoleRevision, int]
    """(role, revision) → groups whose leader is Ready and not being deleted."""

    def role_ready(self, role: str) -> int:
        return sum(count for (name, _), count in self.ready.items() if name == role)

    def serving(self, roles: set[str]) -> set[str]:
        """The revisions with a Ready leader in every one of ROLES."""
        revisions = {revision for (_, revision), count in self.ready.items() if count}
        return {revision for revision in revisions if all(self.ready.get((role, revision)) for role in roles)}


@dataclass
class Address:
    role: str
    revision: str
    pod: str
    since: float
    until: float | None = None


class Watched(threading.Thread):
    """Objects of one list call and selector, from a list and then a watch: each object listed or
    changed is handed to `note`, and after the list and each event `record` keeps the moment, under
    the lock. A failure of the watch is kept for the test that reads it."""

    def __init__(self, list_call: Callable[..., Any], *args: str, selector: str) -> None:
        super().__init__(daemon=True)
        self.list_call, self.args, self.selector = list_call, args, selector
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.watching = threading.Event()
        self.failure: BaseException | None = None

    def note(self, item: Any, deleted: bool, at: float) -> None:
        raise NotImplementedError

    def record(self, at: float) -> None:
        raise NotImplementedError

    def run(self) -> None:
        try:
            listed = self.list_call(*self.args, label_selector=self.selector)
            with self.lock:
                for item in items_of(listed):
                    self.note(item, deleted=False, at=time.monotonic())
                self.record(time.monotonic())
            version = version_of(listed)
            self.watching.set()
            while not self.done.is_set():
                watch = kubernetes.watch.Watch()
                for event in watch.stream(self.list_call, *self.args, label_selector=self.selector,
                                          resource_version=version, timeout_seconds=2):
                    item = event["object"]
                    version = version_of(item)
                    with self.lock:
                        at = time.monotonic()
                        self.note(item, deleted=event["type"] == "DELETED", at=at)
                        self.record(at)
                    if self.done.is_set():
                        watch.stop()
        except BaseException as error:  # surfaced by the test that reads the timeline
            self.failure = error
            self.watching.set()

    def __enter__(self) -> Self:
        self.start()
        self.watching.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.join(30)


def items_of(listed: Any) -> list[Any]:
    return list(listed["items"] if isinstance(listed, dict) else listed.items)


def version_of(item: Any) -> str:
    return str(item["metadata"]["resourceVersion"] if isinstance(item, dict) else item.metadata.resource_version)


class AskedGroups(Watched):
    """The groups the DisaggregatedSet controller asks of each role, summed over the revisions'
    LeaderWorkerSets after every change: the count its `maxSurge` bounds. (A group scaled away is
    gone from this count at once, while its pods may take a moment more to be deleted.)"""

    def __init__(self, cluster: Cluster, namespace: str, set_name: str) -> None:
        group, version, plural = LWS
        super().__init__(kubernetes.client.CustomObjectsApi(cluster.api).list_namespaced_custom_object,
                         group, version, namespace, plural, selector=f"{SET_NAME}={set_name}")
        self.replicas: dict[str, tuple[str, int]] = {}
        """LeaderWorkerSet name → (role, spec.replicas)."""
        self.moments: list[dict[str, int]] = []

    def note(self, item: Any, deleted: bool, at: float) -> None:
        name = item["metadata"]["name"]
        if deleted:
            self.replicas.pop(name, None)
        else:
            self.replicas[name] = (item["metadata"]["labels"][SET_ROLE], item["spec"].get("replicas", 1))

    def record(self, at: float) -> None:
        asked: dict[str, int] = defaultdict(int)
        for role, replicas in self.replicas.values():
            asked[role] += replicas
        self.moments.append(dict(asked))

    def most(self, role: str) -> int:
        with self.lock:
            return max(moment.get(role, 0) for moment in self.moments)


class PodTimeline(Watched):
    """The leaders of one DisaggregatedSet, their readiness and addresses."""

    def __init__(self, cluster: Cluster, namespace: str, set_name: str) -> None:
        super().__init__(cluster.core.list_namespaced_pod, namespace,
                         selector=f"{SET_NAME}={set_name},{WORKER_INDEX}=0")
        self.leaders: dict[str, tuple[RoleRevision, bool, bool]] = {}
        """Pod name → ((role, revision), Ready, being deleted)."""
        self.moments: list[Moment] = []
        self.addresses: dict[str, list[Address]] = defaultdict(list)

    def note(self, pod: kubernetes.client.V1Pod, deleted: bool, at: float) -> None:
        labels, name = pod.metadata.labels or {}, pod.metadata.name
        key = (labels[SET_ROLE], labels[REVISION])
        ip = pod.status.pod_ip if pod.status else None
        held = self.addresses[ip] if ip else []
        if deleted:
            self.leaders.pop(name, None)
            for address in held:
                if address.pod == name and address.until is None:
                    address.until = at
        else:
            self.leaders[name] = (key, ready(pod), pod.metadata.deletion_timestamp is not None)
            if ip and not any(a.pod == name and a.until is None for a in held):
                for address in held:  # a holder whose deletion the watch has not shown yet
                    address.until = at if address.until is None else address.until
                held.append(Address(*key, pod=name, since=at))

    def record(self, at: float) -> None:
        groups: dict[RoleRevision, int] = defaultdict(int)
        ready_groups: dict[RoleRevision, int] = defaultdict(int)
        for role_revision, is_ready, deleting in self.leaders.values():
            if not deleting:
                groups[role_revision] += 1
                ready_groups[role_revision] += is_ready
        self.moments.append(Moment(at, dict(groups), dict(ready_groups)))

    def revision_of(self, endpoint: str, at: float) -> RoleRevision | None:
        """The role and revision of the leader at ENDPOINT (``ip:port``) when a picker chose it at AT;
        None when that cannot be told: the address belonged to leaders of different revisions within
        HANDOVER of AT (kwok gives a deleted pod's address to the next pod it starts, and a picker's view
        of the pods and this watch's run ahead of each other), or to none that near (a loaded machine
        delays one view more than that). An address no leader of the set ever had is an error."""
        ip = endpoint.rsplit(":", 1)[0]
        with self.lock:
            held = list(self.addresses.get(ip, []))
        assert held, f"no leader of the set ever had the address {ip}"
        near = {(a.role, a.revision) for a in held
                if a.since <= at + HANDOVER and (a.until is None or a.until >= at - HANDOVER)}
        return near.pop() if len(near) == 1 else None

    def snapshot(self) -> list[Moment]:
        with self.lock:
            return list(self.moments)


def handovers(moments: list[Moment], roles: set[str]) -> list[float]:
    """When the revisions that serve changed: one started serving (a Ready leader in every one of ROLES)
    or stopped (lost its last Ready leader of one of them)."""
    return [now.at for before, now in itertools.pairwise(moments) if before.serving(roles) != now.serving(roles)]


def pairs(stream: RequestStream, timeline: PodTimeline, start: float, end: float
          ) -> tuple[list[tuple[float, RoleRevision, RoleRevision]], int, int]:
    """(time, the prefill host's role and revision, the destination's) of each request routed to a
    prefill and a decode pod between START and END; how many could not be told (see
    `PodTimeline.revision_of`); and how many went to a decode pod alone (no prefill host: the picker
    found no prefill pod to pair, and the decode pod prefills itself)."""
    out, untold, alone = [], 0, 0
    for answer in stream.answers:
        if not start <= answer.at <= end or "headers" not in answer.answer:
            continue
        headers = answer.answer["headers"]
        if PREFILL_HOST not in headers:
            alone += 1
            continue
        prefill, decode = (timeline.revision_of(headers[h], answer.at) for h in (PREFILL_HOST, DESTINATION))
        if prefill is None or decode is None:
            untold += 1
        else:
            out.append((answer.at, prefill, decode))
    return out, untold, alone
