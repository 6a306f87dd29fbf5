"""Reader → filters → writer: the whole post-render transform, from text to text.

A stream none of whose documents can be one the filters claim (an InferenceService; a LeaderWorkerSet
to take over) passes as it is, without loading the model or a YAML library: most charts a
post-renderer sees in a Helm pipeline have nothing for it.
"""

from __future__ import annotations

from fusion_helm import kinds
from fusion_helm.collector import paused
from fusion_helm.kio.stream import Chunk, split

TYPE_CHECKING = False
if TYPE_CHECKING:
    from fusion_helm.filters import Filter
    from fusion_helm.kio.document import Document


DEFAULT_LAYOUT = kinds.TAKE_OVER_LAYOUTS[0]


def filters(take_over_every_leader_worker_set: bool = False, take_over_layout: str = DEFAULT_LAYOUT
            ) -> tuple[Filter, ...]:
    """LeaderWorkerSets annotated to be taken over (or every one), in TAKE_OVER_LAYOUT unless annotated
    with another (one of kinds.TAKE_OVER_LAYOUTS), then every InferenceService."""
    from fusion_helm.filters.expand_services import expand_services
    from fusion_helm.filters.take_over import take_over_leader_worker_sets

    return take_over_leader_worker_sets(every_one=take_over_every_leader_worker_set,
                                        layout=take_over_layout), expand_services


def claims(chunk: Chunk, take_over_every_leader_worker_set: bool = False) -> bool:
    """Whether the document could be one the filters expand (False: it need not be read). The take-over
    layout claims nothing more: it only shapes what is taken over."""
    annotation = () if take_over_every_leader_worker_set else (kinds.TAKE_OVER_ANNOTATION,)
    return chunk.could_hold(kinds.INFERENCE_SERVICE, kinds.API_GROUP) \
        or chunk.could_hold(kinds.LEADER_WORKER_SET, *annotation)


def apply(documents: list[Document], take_over_every_leader_worker_set: bool = False,
          take_over_layout: str = DEFAULT_LAYOUT) -> list[Document]:
    for step in filters(take_over_every_leader_worker_set, take_over_layout):
        documents = step(documents)
    return documents


def render(text: str, take_over_every_leader_worker_set: bool = False, take_over_layout: str = DEFAULT_LAYOUT
           ) -> str:
    """Expand every InferenceService (and taken-over LeaderWorkerSet) in a multi-document stream;
    raises InvalidSpec on bad input."""
    chunks = split(text)
    if not any(claims(chunk, take_over_every_leader_worker_set) for chunk in chunks):
        return text
    from fusion_helm.kio.document import read_documents, write_documents

    with paused():
        return write_documents(apply(read_documents(chunks), take_over_every_leader_worker_set, take_over_layout))
