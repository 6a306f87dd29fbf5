"""The endpoint pickers are never a single point of failure, helm 3 and 4: a service whose pickers run
for real (tests/controlplane/serving.py runs their pods, as it runs the engines), a gateway stand-in that sends each
request to a picker among the ready ones (as a gateway follows the picker Service's endpoints) and
fails it when none answers (failureMode FailClose), and a stream of requests through it while a
`helm upgrade` changes the pickers' configuration and a picker's node is drained.

With the rendered defaults (two pickers, replaced one at a time, a disruption budget, spread across
nodes) no request fails; with one picker, the drain stops routing: the protection shown failing."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import kubernetes
import pytest
import yaml

from fusion_helm.base.labels import LABEL_COMPONENT_TYPE
from tests.controlplane.clients import completion, gateway, label_selector
from tests.controlplane.cluster import ONE_HELM, Cluster, Release, eventually, ready, release
from tests.controlplane.scenarios import serving_values
from tests.controlplane.serving import SERVING, ServingKubelet
from tests.controlplane.watch import PickerEndpoints
from tests.helm import VALUES, Helm

SERVICE = "svc"
PICKER = {LABEL_COMPONENT_TYPE: "router"}
"""The pickers' pods: the namespace's only service's."""
SELECTOR = label_selector(PICKER)


@dataclass
class Outcome:
    at: float
    status: int
    picker: str


@dataclass
class RequestStream:
    """Requests through the gateway from a few clients at once, one after another each, until stopped:
    each answer's time, status and the picker the gateway asked."""

    gateway: str
    model: str
    clients: int = 4
    max_tokens: int = 2
    outcomes: list[Outcome] = field(default_factory=list)
    pickers: list[tuple[float, list[str]]] = field(default_factory=list)
    """The ready pickers the gateway knew, as they changed."""
    done: threading.Event = field(default_factory=threading.Event)

    def _client(self, number: int) -> None:
        sent = 0
        while not self.done.is_set():
            body = {"model": self.model, "prompt": f"client {number} request {sent}", "max_tokens": self.max_tokens}
            status, headers, _ = completion(self.gateway, body, timeout=30)
            self.outcomes.append(Outcome(time.monotonic(), status, headers.get("x-stand-in-picker", "")))
            sent += 1
            time.sleep(0.02)

    @contextlib.contextmanager
    def running(self) -> Iterator[RequestStream]:
        threads = [threading.Thread(target=self._client, args=(n,), daemon=True) for n in range(self.clients)]
        for thread in threads:
            thread.start()
        try:
            yield self
        finally:
            self.done.set()
            for thread in threads:
                thread.join(60)

    def since(self, start: float) -> list[Outcome]:
        return [outcome for outcome in self.outcomes if outcome.at >= start]

    def failed(self, start: float = 0.0) -> list[Outcome]:
        return [outcome for outcome in self.since(start) if outcome.status != 200]


def pickers(cluster: Cluster, namespace: str) -> list[kubernetes.client.V1Pod]:
    return list(cluster.core.list_namespaced_pod(namespace, label_selector=SELECTOR).items)


def settled(cluster: Cluster, namespace: str, replicas: int) -> list[kubernetes.client.V1Pod] | None:
    """The pickers once the Deployment has rolled out: REPLICAS pods of its current template, all Ready,
    no other (an old one still stopping counts)."""
    [deployment] = cluster.apps.list_namespaced_deployment(namespace, label_selector=SELECTOR).items
    status = deployment.status
    found = pickers(cluster, namespace)
    done = status.observed_generation == deployment.metadata.generation and status.updated_replicas == replicas \
        and status.ready_replicas == replicas and len(found) == replicas and all(map(ready, found))
    return found if done else None


def install(cluster: Cluster, helm: Helm, served_release: Release, values: Path, namespace: str,
            replicas: int) -> list[kubernetes.client.V1Pod]:
    served_release.install(values, verb="upgrade" if served_release.exists() else "install")
    return eventually(f"{replicas} pickers rolled out", lambda: settled(cluster, namespace, replicas), timeout=180,
                      describe=lambda: str([(p.metadata.name, p.spec.node_name, ready(p))
                                            for p in pickers(cluster, namespace)]))


def picker_values(tmp_path: Path, replicas: int, strategy: str | None = None) -> Path:
    router = {"endpointPicker": {"replicas": replicas, "podAnnotations": SERVING}}
    if strategy:
        router["strategy"] = strategy
    values = serving_values(VALUES / "story1-monolithic-qwen3-8b.yaml", tmp_path, **router)
    return values.rename(tmp_path / f"values-{replicas}-{strategy or 'default'}.yaml")


def update_and_drain(cluster: Cluster, helm: Helm, tmp_path: Path, namespace: str, replicas: int
                     ) -> tuple[RequestStream, float, float]:
    """Install, then under a stream of requests: an upgrade that changes the pickers' configuration,
    then a drain of one picker's node. The stream, and when the upgrade and the drain began."""
    with release(cluster, helm, SERVICE, namespace) as installed:
        values = picker_values(tmp_path, replicas)
        before = install(cluster, helm, installed, values, namespace, replicas)
        if replicas > 1:  # spread: one node's loss takes one picker
            assert len({pod.spec.node_name for pod in before}) == replicas, [p.spec.node_name for p in before]
        args = yaml.safe_load(values.read_text())["roles"][0]["template"]["spec"]["containers"][0]["args"]
        model = str(args[args.index("--model") + 1])
        with PickerEndpoints(cluster, namespace, PICKER, tmp_path / "pickers") as endpoints, \
                gateway(f"@{endpoints.path}", tmp_path) as address:
            eventually("the gateway to know the pickers", lambda: len(endpoints.addresses) == replicas)
            stream = RequestStream(address, model)
            with stream.running():
                eventually("answers from every picker", lambda: len({o.picker for o in stream.outcomes
                                                                      if o.status == 200}) == replicas,
                           describe=lambda: str(stream.outcomes[-3:]))
                upgraded = time.monotonic()
                after = install(cluster, helm, installed, picker_values(tmp_path, replicas, "queue-size"), namespace,
                                replicas)
                assert not {p.metadata.uid for p in after} & {p.metadata.uid for p in before}, "no picker was replaced"
                drained = time.monotonic()
                node = after[0].spec.node_name
                cluster.control_plane.kubectl("drain", node, "--pod-selector", SELECTOR, "--delete-emptydir-data",
                                              "--ignore-daemonsets", "--timeout", "120s")
                try:
                    eventually(f"{replicas} pickers again", lambda: settled(cluster, namespace, replicas), timeout=180)
                    time.sleep(2)  # requests after the last change, too
                finally:
                    cluster.control_plane.kubectl("uncordon", node)
                stream.pickers = endpoints.history
    return stream, upgraded, drained


@pytest.mark.cluster
@ONE_HELM
def test_no_request_fails_while_the_pickers_are_updated_and_drained(
        cluster: Cluster, helm: Helm, serving_kubelet: ServingKubelet, tmp_path: Path) -> None:
    stream, upgraded, drained = update_and_drain(cluster, helm, tmp_path, f"pickers-ha-helm{helm.major}", 2)
    failed = stream.failed()
    assert not failed, f"{len(failed)} of {len(stream.outcomes)} failed, from {failed[0].at - upgraded:.1f}s after " \
        f"the upgrade to {failed[-1].at - upgraded:.1f}s (the drain at {drained - upgraded:.1f}s): {failed[:3]}; " \
        f"the pickers: {[(round(at - upgraded, 1), ready) for at, ready in stream.pickers]}"
    # requests flowed through both changes, and every picker, old and new, routed some
    assert len([o for o in stream.since(upgraded) if o.at < drained]) > 20
    assert len(stream.since(drained)) > 20
    assert len({outcome.picker for outcome in stream.outcomes}) >= 4, {o.picker for o in stream.outcomes}


@pytest.mark.cluster
def test_with_one_picker_a_drain_stops_routing(cluster: Cluster, helm4: Helm, serving_kubelet: ServingKubelet,
                                              tmp_path: Path) -> None:
    """The protection removed: one picker (no budget to keep, nowhere else to route). Its update still
    loses nothing (a new picker is Ready before the old one stops); its drain fails requests until the
    replacement is Ready."""
    stream, upgraded, drained = update_and_drain(cluster, helm4, tmp_path, "pickers-one", 1)
    assert not [o for o in stream.failed(upgraded) if o.at < drained]
    assert stream.failed(drained), f"no request failed while the only picker was drained: {len(stream.outcomes)}"
