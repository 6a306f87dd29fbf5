"""Each InferenceService is followed by the objects that serve it; other documents pass through."""

from fusion_helm.base.kinds import API_GROUP, INFERENCE_SERVICE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from fusion_helm.kio.document import Document
    from fusion_helm.kio.stream import Chunk


class ExpandServices:
    def claims(self, chunk: "Chunk") -> bool:
        return chunk.could_hold(INFERENCE_SERVICE.kind, API_GROUP)

    def __call__(self, documents: "list[Document]") -> "list[Document]":
        from fusion_helm.expand import expand
        from fusion_helm.filters.expansions import Expansion, place
        from fusion_helm.kio.document import about
        from fusion_helm.model import is_inference_service, parse_inference_service

        expansions = []
        for document in documents:
            if document.could_be(INFERENCE_SERVICE.kind, API_GROUP) and is_inference_service(document.head):
                with about(document):
                    service = parse_inference_service(document.obj, where=document.where)
                    made = (document.derive(obj) for obj in expand(service))
                    expansions.append(Expansion(document, service.name, made, replaces_origin=False))
        return place(documents, expansions)
