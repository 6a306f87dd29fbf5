"""Filters: pure functions from a list of Documents to a list of Documents."""

from collections.abc import Callable

from fusion_helm.kio.document import Document

Filter = Callable[[list[Document]], list[Document]]

__all__ = ["Filter"]
