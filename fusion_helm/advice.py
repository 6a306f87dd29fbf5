"""Advice on a valid service: what renders and installs, but would serve badly. ``fusion-helm validate``
prints it as warnings; nothing refuses it (the user may know better).

- A pod the InferencePool selects should say when its model has loaded. Without a readiness probe on its
  engine the pod is Ready, and routed to, as soon as its containers start — minutes before the engine
  answers.
- Prefill and decode come in pairs: a prefiller without a decoder (or the reverse) serves as a worker
  would; an engine of either that moves no KV cache cannot hand over a prefill; prefill and decode roles
  with neither a router nor a frontend have nothing to send a request's prefill and decode apart.
- An engine whose parallelism asks for fewer GPUs than its replica has leaves the others idle (one that
  asks for more is refused: it cannot start)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from fusion_helm.base.kinds import DISAGGREGATED_SET, INFERENCE_POOL, INFERENCE_SERVICE, LEADER_WORKER_SET
from fusion_helm.base.labels import LABEL_ROLE_NAME, LABEL_SERVICE, LABEL_WORKER_INDEX
from fusion_helm.base.needs import PREFILL_DECODE
from fusion_helm.errors import format_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fusion_helm.kio.document import Document

WORKLOADS = (LEADER_WORKER_SET.kind, DISAGGREGATED_SET.kind)


def stream_warnings(documents: Sequence[Document]) -> list[str]:
    """``warnings`` of an expanded stream: of its InferenceServices and what the expansion wrote. A document
    of anyone else's is passed through as written and never read here: advice must not refuse a stream the
    expansion takes."""
    return warnings([doc.obj for doc in documents if (doc.generated or doc.could_be(INFERENCE_SERVICE.kind))
                     and isinstance(doc.obj, dict)])


def warnings(objects: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per thing to fix, naming its InferenceService and the field: each service's serving mistakes,
    then each role whose routed pods have no readiness probe, in the order of the services and their roles."""
    return [*(line for obj in objects if obj.get("kind") == INFERENCE_SERVICE.kind
              and obj.get("apiVersion") == INFERENCE_SERVICE.api_version for line in _serving(obj)),
            *_unprobed(objects)]


def _serving(obj: Mapping[str, Any]) -> Iterator[str]:
    from fusion_helm.model import ComponentType, parse_inference_service
    from fusion_helm.model.engine import moves_kv
    from fusion_helm.model.engine_flags import DISAGGREGATION_MODE, KV_TRANSFER_CONFIG, Engine
    from fusion_helm.model.parallelism import gpu_fit

    service = parse_inference_service(obj)
    kinds = {role.component_type for role in service.roles}
    for role in service.roles:
        if role.component_type in PREFILL_DECODE:
            [other] = PREFILL_DECODE - {role.component_type}
            if other not in kinds:
                missing = "nothing prefills for it" if other == ComponentType.PREFILLER else \
                    "nothing decodes its prefills"
                yield (f"{service.where}: {role.path}.componentType: a {role.component_type} and no {other}: "
                       f"{missing}, and it serves whole requests as a worker would; add a {other} role, or make it "
                       "componentType worker")
            server = role.server(service.where)
            if server.engine is not None and not moves_kv(server):
                yield (f"{service.where}: {role.template_path}.spec.containers[0].args: a {role.component_type} "
                       "whose engine moves no KV cache cannot hand a prefill to a decode; give vLLM "
                       f"{KV_TRANSFER_CONFIG.name(Engine.VLLM)} (a kv_connector) or SGLang "
                       f"{DISAGGREGATION_MODE.name(Engine.SGLANG)}")
        fit = gpu_fit(role, service.where)
        if fit is not None and fit.asked < fit.has:
            yield (f"{service.where}: {fit.field}: {fit.asks_by} asks for {fit.asked} GPUs, and a replica has "
                   f"{fit.has} ({fit.has_by}): {fit.has - fit.asked} of them idle; raise its parallelism, or give "
                   "the replica fewer GPUs")
    if service.disaggregated and service.router is None and not service.frontends:
        yield (f"{service.where}: spec.roles: prefill and decode roles with no router or frontend: nothing sends "
               "a request's prefill and its decode to different pods unless a router of your own does; add a "
               "role of componentType router (or frontend)")


def _unprobed(objects: Sequence[Mapping[str, Any]]) -> list[str]:
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
