"""Each InferenceService is followed by the objects that serve it; other documents pass through."""

from __future__ import annotations

from fusion_helm.expand import expand
from fusion_helm.kio import Document
from fusion_helm.model import is_inference_service, parse_inference_service


def expand_services(documents: list[Document]) -> list[Document]:
    out: list[Document] = []
    for document in documents:
        out.append(document)
        if document.obj is not None and is_inference_service(document.obj):
            service = parse_inference_service(document.obj)
            out += (document.derive(obj) for obj in expand(service))
    return out
