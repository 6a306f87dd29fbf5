"""LeaderWorkerSets that opt in (or all, on request) are replaced by the objects that serve them as
an InferenceService would be: one LeaderWorkerSet per replica (layout replica) or the one kept whole
(layout role), and a PodGroup for a multi-node one."""

from fusion_helm.base.kinds import LEADER_WORKER_SET, TAKE_OVER_ANNOTATION, TAKE_OVER_LAYOUTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from fusion_helm.filters.expansions import Expansion
    from fusion_helm.kio.document import Document
    from fusion_helm.kio.stream import Chunk
    from fusion_helm.options import Options


class TakeOver:
    """Take over the LeaderWorkerSets annotated ``fusioninfer.io/take-over: "true"``, or every one, in
    the options' layout unless one's ``fusioninfer.io/layout`` annotation names another. Those the
    expansion made (labelled with a service) are never taken over again."""

    def __init__(self, options: "Options | None" = None) -> None:
        """OPTIONS None: the defaults, annotated LeaderWorkerSets only, in the first layout."""
        self.every_one = options is not None and options.take_over_every_leader_worker_set
        self.layout = options.take_over_layout if options is not None else TAKE_OVER_LAYOUTS[0]
        self._words = () if self.every_one else (TAKE_OVER_ANNOTATION,)

    def claims(self, chunk: "Chunk") -> bool:
        return chunk.could_hold(LEADER_WORKER_SET.kind, *self._words)

    def __call__(self, documents: "list[Document]") -> "list[Document]":
        from fusion_helm.convert.leader_worker_set import parse_leader_worker_set
        from fusion_helm.expand import expand
        from fusion_helm.filters.expansions import Expansion, place
        from fusion_helm.kio.document import about
        from fusion_helm.model import Layout

        expansions = []
        renamed: set[tuple[str | None, str]] = set()  # whose pods LWS now labels with other names
        for document in documents:
            if self._taken(document):
                with about(document):
                    service = parse_leader_worker_set(document.obj, where=document.where,
                                                      default_layout=self.layout)
                    made = (document.derive(obj) for obj in expand(service))
                    expansions.append(Expansion(document, service.name, made, replaces_origin=True))
                if service.layout is Layout.REPLICA:
                    renamed.add((document.metadata.get("namespace"), service.name))
        expansions += _carried_services(documents, renamed)
        return place(documents, expansions)

    def _taken(self, document: "Document") -> bool:
        from fusion_helm.base.labels import LABEL_SERVICE  # (here, not at the top: claims are asked at start-up)

        return document.could_be(LEADER_WORKER_SET.kind, *self._words) \
            and document.kind == LEADER_WORKER_SET.kind \
            and document.head.get("apiVersion") == LEADER_WORKER_SET.api_version \
            and LABEL_SERVICE not in (document.metadata.get("labels") or {}) \
            and (self.every_one or (document.metadata.get("annotations") or {}).get(TAKE_OVER_ANNOTATION) == "true")


def _carried_services(documents: "list[Document]", taken: set[tuple[str | None, str]]) -> "list[Expansion]":
    """A Service selecting a LeaderWorkerSet TAKEN over in the replica layout by its name would select
    nothing: LWS labels the pods with the per-replica LeaderWorkerSets' names. It selects them by the
    service label the expansion gives every pod of it instead, the rest of its selector (a leader's own
    label, LWS's worker index) kept. (In the role layout the LeaderWorkerSet keeps its name, and its pods
    their label.)"""
    if not taken:
        return []
    from fusion_helm.base.kinds import SERVICE
    from fusion_helm.base.labels import LABEL_LWS_NAME, LABEL_SERVICE
    from fusion_helm.errors import InvalidSpec
    from fusion_helm.filters.expansions import Expansion

    carried: list[Expansion] = []
    for document in documents:
        if not document.could_be(SERVICE.kind, LABEL_LWS_NAME) or document.kind != SERVICE.kind \
                or document.head.get("apiVersion") != SERVICE.api_version:
            continue
        try:
            obj = document.obj
        except InvalidSpec:
            continue  # a Service Go cannot read: not ours to judge
        spec = obj.get("spec")
        selector = spec.get("selector") if isinstance(spec, dict) else None
        name = selector.get(LABEL_LWS_NAME) if isinstance(selector, dict) else None
        if isinstance(name, str) and (document.metadata.get("namespace"), name) in taken:
            assert isinstance(spec, dict) and isinstance(selector, dict)
            renamed = {LABEL_SERVICE if key == LABEL_LWS_NAME else key: value for key, value in selector.items()}
            made = document.derive({**obj, "spec": {**spec, "selector": renamed}})
            carried.append(Expansion(document, name, [made], replaces_origin=True))
    return carried
