"""Filters: each owns what it claims and its transform.

``claims(chunk)`` says from a document's text whether it could be one the filter transforms (False:
the document need not be parsed for it; a filter that claims none of a stream's documents is not run,
and a stream none of whose documents any filter claims passes as it is); calling the filter transforms
a list of Documents into a list of Documents. No filter makes a document a later one would claim. The filter
modules import only the standard library until a filter is called: the pipeline asks their claims of
every stream, including those with nothing to expand.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    from fusion_helm.kio.document import Document
    from fusion_helm.kio.stream import Chunk

    class Filter(Protocol):
        def claims(self, chunk: Chunk) -> bool: ...

        def __call__(self, documents: list[Document]) -> list[Document]: ...
