"""Helm's stream as Documents, each stating its origin: one passed in as text keeps its exact text and
is parsed only as far as it is asked — its head to tell its kind, its whole data only when it is
expanded; one a reader gave as data (a ResourceList's item) and one generated are data."""

from __future__ import annotations

import re
from enum import Enum
from functools import cached_property

from fusion_helm.errors import InvalidSpec, clip
from fusion_helm.kio.construct import ReadError, compose, construct, head, head_of_data, unreadable
from fusion_helm.kio.libyaml import yaml
from fusion_helm.kio.stream import Chunk, split

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FILENAME_ANNOTATION = "postrenderer.helm.sh/postrender-filename"
"""Helm 4 sets it on every document it post-renders and files the output by it."""


class Origin(Enum):
    TEXT = "text"
    """Read from a stream's text, which it keeps: written back byte for byte."""
    DATA = "data"
    """Given as data by a reader (a ResourceList's item, already read as Go reads it)."""
    GENERATED = "generated"
    """Made by a filter."""


class Document:
    def __init__(self, chunk: Chunk | None = None, obj: Any = None, source: str | None = None,
                 origin: Origin = Origin.GENERATED, position: int = 0) -> None:
        self.chunk = chunk
        self.origin = Origin.TEXT if chunk else origin
        self.raw = chunk.text if chunk else None
        """Exact text as read, separator line included; None for a document of data."""
        self.position = chunk.position if chunk else position
        """1-based position in the input (0 for a generated document)."""
        self.first_line = chunk.first_line if chunk else 0
        self.source = chunk.source if chunk else source
        """The chart file it came from, per Helm 3's ``# Source:`` comment."""
        if chunk is None:
            self.__dict__["obj"] = obj

    @classmethod
    def of_data(cls, obj: Any, position: int) -> Document:
        """An input's document a reader has read already: OBJ, at 1-based POSITION."""
        return cls(obj=obj, origin=Origin.DATA, position=position)

    @property
    def generated(self) -> bool:
        return self.origin is Origin.GENERATED

    @cached_property
    def node(self) -> yaml.Node | None:
        """The composed node tree; InvalidSpec when the text is not one YAML document."""
        assert self.raw is not None
        try:
            return compose(self.raw)
        except (ReadError, yaml.YAMLError) as error:
            raise InvalidSpec(self.describe(), *unreadable(error, self.raw, self.first_line), subject=self) from None

    @cached_property
    def head(self) -> dict[str, Any]:
        """apiVersion, kind and metadata's name, namespace, labels and annotations, where strings."""
        if self.origin is Origin.TEXT:
            return head(self.node)
        if self.origin is Origin.DATA:
            return head_of_data(self.obj)
        return self.obj if isinstance(self.obj, dict) else {}

    @cached_property
    def obj(self) -> Any:
        """The whole document as Go reads it; InvalidSpec naming the field it cannot read."""
        try:
            return construct(self.node)
        except ReadError as error:
            raise InvalidSpec(self.where, error.field, error.message, subject=self) from None

    def could_be(self, kind: str, *words: str) -> bool:
        """False when the text cannot hold a document of KIND (with each of WORDS in it too): then it
        need not be parsed at all."""
        if self.chunk is None:
            return self.head.get("kind") == kind
        return self.chunk.could_hold(kind, *words)

    def could_match(self, words: re.Pattern[str] | tuple[str, ...]) -> bool:
        """False when no value of the document can hold any of WORDS (or match them): then it need not be
        parsed for them."""
        if self.chunk is None:
            return True
        text = self.chunk.text
        found = any(word in text for word in words) if isinstance(words, tuple) else words.search(text)
        return bool(found) or self.chunk.disguises

    @property
    def kind(self) -> str | None:
        return self.head.get("kind")

    @property
    def metadata(self) -> dict[str, Any]:
        metadata = self.head.get("metadata")
        return metadata if isinstance(metadata, dict) else {}

    @cached_property
    def filename(self) -> str | None:
        """The chart file it came from, per Helm 4's annotation."""
        annotations = self.metadata.get("annotations")
        name = annotations.get(FILENAME_ANNOTATION) if isinstance(annotations, dict) else None
        return name if isinstance(name, str) else None

    def describe(self) -> str:
        """Its position and chart file (a document that cannot be parsed is named without reading it)."""
        parsed = self.raw is None or "head" in self.__dict__
        origin = self.source or (self.filename if parsed else None)
        where = "generated document" if self.generated else f"document {self.position}"
        return f"{where} ({clip(origin)})" if origin else where

    @property
    def where(self) -> str:
        """How errors name it: kind and name, or kind and position when it has no name."""
        kind = self.kind or "object"
        name = self.metadata.get("name")
        return f"{clip(kind)} {clip(name)}" if name else f"{clip(kind)} in {self.describe()}"

    def derive(self, obj: dict[str, Any]) -> Document:
        """A generated document filed under this one's chart file."""
        filename = self.filename
        if filename is not None:
            metadata = obj.get("metadata", {})
            annotations = {**metadata.get("annotations", {}), FILENAME_ANNOTATION: filename}
            obj = {**obj, "metadata": {**metadata, "annotations": annotations}}
        return Document(obj=obj, source=self.source)


class about:  # named as the function it was; a class, as contextlib costs start-up time
    """An InvalidSpec raised within is about DOCUMENT, unless it already names the document it is about."""

    def __init__(self, document: Document) -> None:
        self.document = document

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, error: BaseException | None, trace: object) -> None:
        if isinstance(error, InvalidSpec) and error.subject is None:
            error.subject = self.document


def read_documents(text: str | list[Chunk]) -> list[Document]:
    """The stream's documents (or those of its chunks), unparsed until asked."""
    return [Document(chunk) for chunk in (split(text) if isinstance(text, str) else text)]


def write_documents(documents: list[Document]) -> str:
    from fusion_helm.kio.write import Writer

    writer = Writer()
    parts: list[str] = []
    for document in documents:
        if document.raw is not None:
            parts.append(document.raw)
            continue
        if parts and parts[-1][-1:] not in ("\n", "\r"):
            parts.append("\n")
        header = f"---\n# Source: {document.source}\n" if document.source else "---\n"
        parts.append(header + writer.document(document.obj))
    return "".join(parts)
