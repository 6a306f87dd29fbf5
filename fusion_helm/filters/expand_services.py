"""Each InferenceService is followed by the objects that serve it; other documents pass through."""

from __future__ import annotations

from fusion_helm.expand import expand
from fusion_helm.filters.expansions import Expansion, place
from fusion_helm.kio.document import Document, about
from fusion_helm.model import API_GROUP, KIND, is_inference_service, parse_inference_service


def expand_services(documents: list[Document]) -> list[Document]:
    expansions = []
    for document in documents:
        if document.could_be(KIND, API_GROUP) and is_inference_service(document.head):
            with about(document):
                service = parse_inference_service(document.obj, where=document.where)
                expansions.append(Expansion(document, service.name, (document.derive(obj) for obj in expand(service)),
                                            replaces_origin=False))
    return place(documents, expansions)
