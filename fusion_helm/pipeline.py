"""Reader → filters → writer: the whole post-render transform, from text to text."""

from __future__ import annotations

from collections.abc import Sequence

from fusion_helm.filters import Filter
from fusion_helm.filters.expand_services import expand_services
from fusion_helm.kio import read_documents, write_documents

DEFAULT_FILTERS: tuple[Filter, ...] = (expand_services,)


def render(text: str, filters: Sequence[Filter] = DEFAULT_FILTERS) -> str:
    """Expand every InferenceService in a multi-document stream; raises InvalidSpec on bad input."""
    documents = read_documents(text)
    for apply in filters:
        documents = apply(documents)
    return write_documents(documents)
