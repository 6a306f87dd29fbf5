"""Reader → filters → writer: the whole post-render transform, from text to text."""

from __future__ import annotations

from collections.abc import Sequence

from fusion_helm.filters import Filter
from fusion_helm.filters.expand_services import expand_services
from fusion_helm.filters.take_over import take_over_leader_worker_sets
from fusion_helm.kio import Document, read_documents, write_documents

DEFAULT_FILTERS: tuple[Filter, ...] = (take_over_leader_worker_sets(), expand_services)
"""LeaderWorkerSets annotated to be taken over, then every InferenceService."""


def filters(take_over_every_leader_worker_set: bool = False) -> tuple[Filter, ...]:
    if not take_over_every_leader_worker_set:
        return DEFAULT_FILTERS
    return (take_over_leader_worker_sets(every_one=True), expand_services)


def apply(documents: list[Document], filters: Sequence[Filter] = DEFAULT_FILTERS) -> list[Document]:
    for step in filters:
        documents = step(documents)
    return documents


def render(text: str, filters: Sequence[Filter] = DEFAULT_FILTERS) -> str:
    """Expand every InferenceService (and taken-over LeaderWorkerSet) in a multi-document stream;
    raises InvalidSpec on bad input."""
    return write_documents(apply(read_documents(text), filters))
