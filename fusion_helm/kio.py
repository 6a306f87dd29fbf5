"""The one place YAML comes in and goes out: Helm's multi-document stream as a list of Documents.

Documents read from the stream keep their exact text, so what no filter replaces is written back
byte for byte, ``# Source:`` comments and all. Documents a filter generates are dumped from data
and inherit their parent's origin: Helm 3's ``# Source:`` comment and Helm 4's file annotation.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import yaml

from fusion_helm.errors import InvalidSpec

FILENAME_ANNOTATION = "postrenderer.helm.sh/postrender-filename"
"""Helm 4 sets it on every document it post-renders and files the output by it."""

_SEPARATOR = re.compile(r"^---(?:[ \t].*)?$", re.MULTILINE)
_SOURCE = re.compile(r"^# Source: (.+)$", re.MULTILINE)


class _Dumper(yaml.CSafeDumper):
    # Generated objects share sub-structures; write them out in full rather than as YAML aliases.
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: _Dumper, text: str) -> yaml.Node:
    # Scripts and embedded configuration read best as literal blocks (the emitter falls back to a
    # quoted style where a block cannot hold the text exactly).
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if "\n" in text else None)


_Dumper.add_representer(str, _represent_str)


@dataclass(frozen=True)
class Document:
    obj: Any
    """The parsed object: a mapping, or None for a document that holds only comments."""
    raw: str | None = None
    """Exact text as read, separator line included; None for a generated document."""
    source: str | None = None
    """The chart file it came from, per Helm 3's ``# Source:`` comment."""
    position: int = 0
    """1-based position in the input stream (0 for a generated document)."""

    @property
    def filename(self) -> str | None:
        """The chart file it came from, per Helm 4's annotation."""
        metadata = self.obj.get("metadata") if isinstance(self.obj, dict) else None
        annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
        name = annotations.get(FILENAME_ANNOTATION) if isinstance(annotations, dict) else None
        return name if isinstance(name, str) else None

    def describe(self) -> str:
        where = f"document {self.position}"
        origin = self.source or self.filename
        return f"{where} ({origin})" if origin else where

    def derive(self, obj: dict[str, Any]) -> Document:
        """A generated document filed under this one's chart file."""
        filename = self.filename
        if filename is not None:
            metadata = obj.get("metadata", {})
            annotations = {**metadata.get("annotations", {}), FILENAME_ANNOTATION: filename}
            obj = {**obj, "metadata": {**metadata, "annotations": annotations}}
        return Document(obj=obj, source=self.source)


def read_documents(text: str) -> list[Document]:
    """Split a multi-document stream and parse each document; InvalidSpec names the bad one."""
    starts = [match.start() for match in _SEPARATOR.finditer(text)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    chunks = [text[start:end] for start, end in zip(starts, [*starts[1:], len(text)], strict=True)]
    documents = []
    for position, chunk in enumerate(chunks, start=1):
        if not chunk:
            continue
        source = _SOURCE.search(chunk)
        unparsed = Document(obj=None, raw=chunk, source=source[1].strip() if source else None,
                            position=position)
        first_line = text.count("\n", 0, starts[position - 1]) + 1
        documents.append(replace(unparsed, obj=_parse(chunk, unparsed, first_line)))
    return documents


def _parse(chunk: str, document: Document, first_line: int) -> Any:
    try:
        obj = yaml.load(chunk, Loader=yaml.CSafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        at = f" (line {first_line + mark.line} of the input)" if mark is not None else ""
        raise InvalidSpec(document.describe(), "", f"malformed YAML: {error.problem}{at}") from None
    except yaml.YAMLError as error:
        raise InvalidSpec(document.describe(), "", f"malformed YAML: {error}") from None
    if obj is not None and not isinstance(obj, dict):
        raise InvalidSpec(document.describe(), "", f"not a mapping: a Kubernetes object is a mapping, "
                                                   f"got {type(obj).__name__}")
    return obj


def load(text: str) -> Any:
    """One YAML document as data; ValueError naming the problem when it is malformed."""
    try:
        return yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ValueError(f"{error.problem}{at}") from None
    except yaml.YAMLError as error:
        raise ValueError(str(error)) from None


def dump(obj: Any) -> str:
    """YAML text of one object, keys in the order they were built (deterministic)."""
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=1 << 20)


def write_documents(documents: list[Document]) -> str:
    parts: list[str] = []
    for document in documents:
        if document.raw is not None:
            parts.append(document.raw)
            continue
        if parts and not parts[-1].endswith("\n"):
            parts.append("\n")
        header = f"---\n# Source: {document.source}\n" if document.source else "---\n"
        parts.append(header + dump(document.obj))
    return "".join(parts)


ObjectKey = tuple[str, str | None, str]


def latest_by_key(objects: Iterable[Mapping[str, Any]], kinds: Container[str]) -> dict[ObjectKey, Mapping[str, Any]]:
    """Objects of KINDS by (kind, namespace, name); a later copy replaces an earlier one (a stream
    rendered twice, or post-rendered output expanded again, names each object more than once)."""
    found: dict[ObjectKey, Mapping[str, Any]] = {}
    for obj in objects:
        metadata = obj.get("metadata") or {}
        if obj.get("kind") in kinds and isinstance(metadata.get("name"), str):
            found[(obj["kind"], metadata.get("namespace"), metadata["name"])] = obj
    return found
