"""Advice on a valid service: what renders and installs, but would serve badly. ``fusion-helm validate``
prints it as warnings; nothing refuses it (the user may know better).

One piece today: a pod the InferencePool selects should say when its model has loaded. Without a
readiness probe on its engine the pod is Ready, and routed to, as soon as its containers start — minutes
before the engine answers."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from fusion_helm.errors import format_path
from fusion_helm.hooks.kinds import DISAGGREGATED_SET, INFERENCE_POOL, INFERENCE_SERVICE, LEADER_WORKER_SET
from fusion_helm.hooks.labels import LABEL_ROLE_NAME, LABEL_SERVICE, LABEL_WORKER_INDEX

WORKLOADS = (LEADER_WORKER_SET.kind, DISAGGREGATED_SET.kind)


def warnings(objects: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per role whose routed pods have no readiness probe, naming its InferenceService and the
    field to set, in the order of the services and their roles."""
    roles = {(obj["metadata"]["name"], role.get("name")): index for obj in objects
             if obj.get("kind") == INFERENCE_SERVICE.kind
             for index, role in enumerate(obj.get("spec", {}).get("roles") or []) if isinstance(role, Mapping)}
    unprobed = {(labels[LABEL_SERVICE], labels[LABEL_ROLE_NAME])
                for pool in objects if pool.get("kind") == INFERENCE_POOL
                for labels in _selected(objects, _selector(pool))
                if LABEL_SERVICE in labels and LABEL_ROLE_NAME in labels}
    return [f"{INFERENCE_SERVICE.kind} {service}: "
            f"{format_path(['spec', 'roles', roles[service, role], 'template', 'spec', 'containers', 0])}"
            ".readinessProbe: not set, though the router sends requests to these pods: they are Ready, and "
            "routed to, before the engine has loaded its model; probe the engine's health endpoint "
            "(vLLM's and SGLang's /health), with a startupProbe long enough for the load"
            for service, role in sorted(unprobed & roles.keys(), key=lambda key: (key[0], roles[key]))]


def _selector(pool: Mapping[str, Any]) -> Mapping[str, str]:
    """The pool's label selector: v1's matchLabels, or v1alpha2's plain map."""
    selector = pool.get("spec", {}).get("selector") or {}
    labels = selector.get("matchLabels", selector)
    return labels if isinstance(labels, Mapping) else {}


def _templates(objects: Sequence[Mapping[str, Any]]) -> Iterator[tuple[Mapping[str, Any], tuple[str, ...]]]:
    """Each pod template of a LeaderWorkerSet or a DisaggregatedSet's role, with the worker indexes LWS gives
    its pods (a label the pool may select leaders by): 0 for the leader's, 1 and on for the workers'."""
    for obj in objects:
        if obj.get("kind") not in WORKLOADS:
            continue
        spec = obj.get("spec", {})
        for holder in [spec, *(role.get("spec") or {} for role in spec.get("roles") or [])]:
            template = holder.get("leaderWorkerTemplate") or {}
            leader = template.get("leaderTemplate")
            if isinstance(leader, Mapping):
                yield leader, ("0",)
            if isinstance(template.get("workerTemplate"), Mapping):
                yield template["workerTemplate"], ("1",) if isinstance(leader, Mapping) else ("0", "1")


def _selected(objects: Sequence[Mapping[str, Any]], selector: Mapping[str, str]) -> Iterator[Mapping[str, str]]:
    """The labels of the pod templates SELECTOR selects whose engine has no readiness probe."""
    for template, indexes in _templates(objects):
        labels = template.get("metadata", {}).get("labels") or {}
        if selector and any(selector.items() <= {**labels, LABEL_WORKER_INDEX: index}.items() for index in indexes) \
                and not _engine_probed(template):
            yield labels


def _engine_probed(template: Mapping[str, Any]) -> bool:
    containers = template.get("spec", {}).get("containers") or []
    return bool(containers) and isinstance(containers[0].get("readinessProbe"), Mapping)
