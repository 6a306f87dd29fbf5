"""LeaderWorkerSets that opt in (or all, on request) are replaced by the objects that serve them as
an InferenceService would be: one LeaderWorkerSet per replica, and a PodGroup for a multi-node one."""

from __future__ import annotations

from fusion_helm.errors import InvalidSpec
from fusion_helm.expand import expand
from fusion_helm.filters import Filter
from fusion_helm.kio import Document, ObjectKey
from fusion_helm.labels import LABEL_SERVICE
from fusion_helm.model.leader_worker_set import is_leader_worker_set, opts_in, parse_leader_worker_set


def take_over_leader_worker_sets(every_one: bool = False) -> Filter:
    """Take over the LeaderWorkerSets annotated ``fusioninfer.io/take-over: "true"``, or EVERY_ONE.
    Those the expansion made (labelled with a service) are never taken over again."""

    def take_over(documents: list[Document]) -> list[Document]:
        out: list[Document] = []
        generated: list[tuple[Document, Document]] = []
        for document in documents:
            obj = document.obj
            if isinstance(obj, dict) and is_leader_worker_set(obj) and not _generated(obj) \
                    and (every_one or opts_in(obj)):
                replaced = [document.derive(made) for made in expand(parse_leader_worker_set(obj))]
                generated += ((document, made) for made in replaced)
                out += replaced
            else:
                out.append(document)
        _check_collisions(documents, generated)
        _check_selectors(documents, {(origin.obj["metadata"].get("namespace"), origin.obj["metadata"]["name"])
                                     for origin, _ in generated})
        return out

    return take_over


def _generated(obj: dict[str, object]) -> bool:
    metadata = obj.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, dict) else None
    return isinstance(labels, dict) and LABEL_SERVICE in labels


def _key(document: Document) -> ObjectKey | None:
    obj = document.obj
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str):
        return None
    return str(obj.get("kind")), metadata.get("namespace"), metadata["name"]


def _check_collisions(documents: list[Document], generated: list[tuple[Document, Document]]) -> None:
    """A generated object must not replace another object of the stream (nor another generated one)."""
    taken = {key: document for document in documents if (key := _key(document)) is not None}
    for origin, made in generated:
        key = _key(made)
        if key is not None and key in taken and taken[key] is not origin:
            kind, _, name = key
            raise InvalidSpec(f"{origin.obj['kind']} {origin.obj['metadata']['name']}", "metadata.name",
                              f"taking it over makes {kind} {name}, which the stream already has "
                              f"({taken[key].describe() if taken[key].position else 'another taken-over object'});"
                              " rename one")
        if key is not None:
            taken[key] = origin


LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"


def _check_selectors(documents: list[Document], taken: set[tuple[str | None, str]]) -> None:
    """A Service selecting a taken-over LeaderWorkerSet's pods by its name would select nothing: LWS
    labels the pods with the per-replica LeaderWorkerSets' names."""
    for document in documents:
        obj = document.obj
        if not taken or not isinstance(obj, dict) or obj.get("kind") != "Service" or obj.get("apiVersion") != "v1":
            continue
        spec, metadata = obj.get("spec"), obj.get("metadata")
        selector = spec.get("selector") if isinstance(spec, dict) else None
        name = selector.get(LWS_NAME_LABEL) if isinstance(selector, dict) else None
        if name is not None and isinstance(metadata, dict) and (metadata.get("namespace"), name) in taken:
            raise InvalidSpec(f"Service {obj['metadata'].get('name')}", f"spec.selector.{LWS_NAME_LABEL}",
                              f"selects the pods of LeaderWorkerSet {name}, which is taken over: its pods now "
                              f"belong to {name}-group-<i>; select {LABEL_SERVICE}: {name} instead")
