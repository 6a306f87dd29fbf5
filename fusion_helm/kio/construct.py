"""YAML text to data as Go's ``sigs.k8s.io/yaml`` reads it — Helm's and the API server clients' reader.

libyaml composes a node tree (no value constructed). A document's head (apiVersion, kind, name,
namespace, labels, annotations) is read from the nodes alone; only the documents we expand are built
whole, by :func:`construct`, which reads every scalar as Go does and holds the input to the limits:
depth, and values with every alias expanded. What Go would read differently from what was meant, or
cannot read at all, is an error naming the field: a key that is not a string, a duplicate key, a tag
on text it does not fit, a number JSON cannot carry.
"""

from __future__ import annotations

import base64
import binascii
import math

from fusion_helm.errors import format_path, show
from fusion_helm.kio import scalars
from fusion_helm.kio.libyaml import MappingNode, Node, ScalarNode, SequenceNode, yaml
from fusion_helm.kio.nesting import deeper_than
from fusion_helm.limits import MAX_DEPTH, MAX_NODES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

Path = tuple[str | int, ...]

PLAIN_TAG = "!fusion/plain"
"""What our composer tags a plain scalar without a tag with: it is resolved as Go resolves it."""
_CORE = "tag:yaml.org,2002:"
STR_TAG, SEQ_TAG, MAP_TAG = f"{_CORE}str", f"{_CORE}seq", f"{_CORE}map"
_BINARY_TAG, _MERGE_TAG = f"{_CORE}binary", f"{_CORE}merge"
_TYPED_TAGS = {f"{_CORE}{kind}": kind for kind in (scalars.INT, scalars.FLOAT, scalars.BOOL, scalars.NULL,
                                                   scalars.TIMESTAMP)}
_KIND_NAMES = {scalars.INT: "an integer", scalars.FLOAT: "a number", scalars.BOOL: "a boolean",
               scalars.NULL: "null", scalars.MERGE: "a merge key", scalars.TIMESTAMP: "a timestamp",
               scalars.STR: "a string"}
_JSON_EXPONENT_FROM = 1e21
"""Go's encoding/json writes floats from this magnitude on with an exponent."""
_MAX_HEAD_MERGES = 8


class ReadError(Exception):
    """A value Go's reader would read otherwise, or that exceeds a limit: at PATH, why."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message

    @property
    def field(self) -> str:
        return format_path(self.path)


class _Composer(yaml.CSafeLoader):
    """libyaml's composer, with untagged plain scalars left for :func:`_scalar` to resolve."""

    def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            return PLAIN_TAG if implicit[0] else STR_TAG
        return SEQ_TAG if kind is SequenceNode else MAP_TAG


def compose(text: str) -> Node | None:
    """The node tree of one YAML document, or None for an empty one; yaml.YAMLError when malformed,
    ReadError when nested too deep for libyaml to be asked (every text libyaml composes passes here)."""
    if deeper_than(text, MAX_DEPTH):
        raise ReadError((), f"nested deeper than {MAX_DEPTH} levels")
    composer = _Composer(text)
    try:
        return composer.get_single_node()
    finally:
        composer.dispose()


def construct(node: Node | None) -> Any:
    """The document's data as Go reads it; ReadError at the first value it cannot take as written."""
    if node is None:
        return None
    return _Builder().value(node, (), 0)


class _Builder:
    def __init__(self) -> None:
        self.budget = MAX_NODES

    def value(self, node: Node, path: Path, depth: int) -> Any:
        self.budget -= 1
        if self.budget < 0:
            raise ReadError(path, f"the document holds more than {MAX_NODES:,} values once its aliases are "
                                  "expanded")
        if depth > MAX_DEPTH:
            raise ReadError(path, f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, ScalarNode):
            return _scalar(node, path)
        wanted = SEQ_TAG if isinstance(node, SequenceNode) else MAP_TAG
        if node.tag != wanted:
            raise _tag_error(node, path)
        if isinstance(node, SequenceNode):
            return [self.value(item, (*path, index), depth + 1) for index, item in enumerate(node.value)]
        return self.mapping(node, path, depth)

    def mapping(self, node: Node, path: Path, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        written: dict[str, str] = {}  # key → how it was set: "explicit" or "merged"
        merges = 0
        for key_node, value_node in node.value:
            if is_merge_key(key_node):
                merges += 1
                if merges > 1:
                    raise ReadError((*path, "<<"), "duplicate merge key <<")
                for key, value in self.merged(value_node, (*path, "<<"), depth).items():
                    if written.get(key) == "explicit":
                        raise ReadError((*path, key), "is set here and by the merge (<<) after it; YAML readers "
                                                      "disagree on which wins: write the merge first")
                    out[key], written[key] = value, "merged"
                continue
            key = _key(key_node, path)
            if written.get(key) == "explicit":
                raise ReadError((*path, key), "duplicate key")
            out[key], written[key] = self.value(value_node, (*path, key), depth + 1), "explicit"
        return out

    def merged(self, node: Node, path: Path, depth: int) -> dict[str, Any]:
        """What ``<<: NODE`` brings in: a mapping, or mappings of which the first to set a key wins."""
        sources = node.value if isinstance(node, SequenceNode) else [node]
        out: dict[str, Any] = {}
        for index, source in enumerate(sources):
            where = (*path, index) if isinstance(node, SequenceNode) else path
            if not isinstance(source, MappingNode):
                raise ReadError(where, "a merge (<<) takes a mapping or a list of mappings")
            for key, value in self.mapping(source, where, depth + 1).items():
                out.setdefault(key, value)
        return out


def is_merge_key(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.value == "<<" and node.tag in (PLAIN_TAG, _MERGE_TAG)


def _key(node: Node, path: Path) -> str:
    if not isinstance(node, ScalarNode):
        raise ReadError(path, "a mapping key must be a string, not a " +
                        ("list" if isinstance(node, SequenceNode) else "mapping"))
    key = _scalar(node, path)
    if not isinstance(key, str):
        raise ReadError(path, f"key {show(node.value)} is read as {_KIND_NAMES[_kind(key)]} by YAML 1.1 readers such "
                              "as Helm's and kubectl's: quote it")
    return key


def _tag_error(node: Node, path: Path) -> ReadError:
    tag = f"!!{node.tag[len(_CORE):]}" if node.tag.startswith(_CORE) else node.tag
    if node.tag in (STR_TAG, SEQ_TAG, MAP_TAG, _BINARY_TAG, *_TYPED_TAGS):
        what = {ScalarNode: "scalar", SequenceNode: "list", MappingNode: "mapping"}[type(node)]
        return ReadError(path, f"the tag {show(tag)} does not fit a {what}")
    return ReadError(path, f"unsupported tag {show(tag)}")


def _kind(value: object) -> str:
    if value is None:
        return scalars.NULL
    return {bool: scalars.BOOL, int: scalars.INT, float: scalars.FLOAT}.get(type(value), scalars.STR)


def _scalar(node: ScalarNode, path: Path) -> Any:
    text, tag = node.value, node.tag
    if tag == STR_TAG:
        return text
    if tag == _BINARY_TAG:
        return _binary(text, path)
    if tag == PLAIN_TAG:
        kind, value = scalars.resolve_plain(text)
    elif tag in _TYPED_TAGS:
        kind, value = scalars.resolve_plain(text)
        wanted = _TYPED_TAGS[tag]
        if kind == scalars.INT and wanted == scalars.FLOAT:
            kind, value = scalars.FLOAT, float(value)  # type: ignore[arg-type]
        if kind != wanted:
            raise ReadError(path, f"{show(text)} is not {_KIND_NAMES[wanted]}, as its tag !!{wanted} says")
    else:
        raise _tag_error(node, path)
    if kind in (scalars.STR, scalars.TIMESTAMP, scalars.MERGE):
        return text
    if kind == scalars.FLOAT:
        return _number(value, text, path)  # type: ignore[arg-type]
    return value


def _number(value: float, text: str, path: Path) -> int | float:
    """Go hands a float to JSON, which writes an integral one below 1e21 as an integer, in the shortest
    digits that read back as the same float (1e3 → 1000, -9.223372036854776e18 → -9223372036854776000)."""
    if math.isnan(value) or math.isinf(value):
        raise ReadError(path, f"{show(text)} is not a finite number, which JSON cannot carry: quote it for a string")
    if not value.is_integer() or abs(value) >= _JSON_EXPONENT_FROM:
        return value
    shortest = repr(value)
    if "e" not in shortest:
        return int(value)
    mantissa, exponent = shortest.split("e")
    whole, _, fraction = mantissa.partition(".")
    return int(whole + fraction) * int(10 ** (int(exponent) - len(fraction)))  # exponent >= 16 here


def _binary(text: str, path: Path) -> str:
    try:
        return base64.b64decode("".join(text.split()), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise ReadError(path, "!!binary that is not base64 of UTF-8 text") from None


def head(node: Node | None) -> dict[str, Any]:
    """apiVersion, kind and metadata (name, namespace, labels, annotations) where they are strings, read
    from the nodes without building the rest; a value Go could not read is left out."""
    out: dict[str, Any] = {}
    fields = _entries(node)
    for name in ("apiVersion", "kind"):
        text = _string(fields.get(name))
        if text is not None:
            out[name] = text
    metadata_fields = _entries(fields.get("metadata"))
    metadata: dict[str, Any] = {}
    for name in ("name", "namespace"):
        text = _string(metadata_fields.get(name))
        if text is not None:
            metadata[name] = text
    for name in ("labels", "annotations"):
        if name in metadata_fields:
            metadata[name] = {key: text for key, value in _entries(metadata_fields[name]).items()
                              if (text := _string(value)) is not None}
    if metadata:
        out["metadata"] = metadata
    return out


def head_of_data(obj: Any) -> dict[str, Any]:
    """The same head from an object already read (a ResourceList's item)."""
    out: dict[str, Any] = {}
    fields = obj if isinstance(obj, dict) else {}
    out.update({name: fields[name] for name in ("apiVersion", "kind") if isinstance(fields.get(name), str)})
    given = fields.get("metadata")
    given = given if isinstance(given, dict) else {}
    metadata: dict[str, Any] = {name: given[name] for name in ("name", "namespace") if isinstance(given.get(name), str)}
    for name in ("labels", "annotations"):
        if name in given:
            values = given[name] if isinstance(given[name], dict) else {}
            metadata[name] = {key: text for key, text in values.items()
                              if isinstance(key, str) and isinstance(text, str)}
    if metadata:
        out["metadata"] = metadata
    return out


def _entries(node: Node | None, merges: int = 0) -> dict[str, Node]:
    """A mapping node's string keys to their value nodes, merges applied; {} for anything else."""
    if not isinstance(node, MappingNode):
        return {}
    out: dict[str, Node] = {}
    for key_node, value_node in node.value:
        if is_merge_key(key_node):
            if merges >= _MAX_HEAD_MERGES:  # merges may refer to themselves
                continue
            for source in value_node.value if isinstance(value_node, SequenceNode) else [value_node]:
                for key, value in _entries(source, merges + 1).items():
                    out.setdefault(key, value)
        elif (text := _string(key_node)) is not None:
            out[text] = value_node
    return out


def _string(node: Node | None) -> str | None:
    if not isinstance(node, ScalarNode):
        return None
    try:
        value = _scalar(node, ())
    except ReadError:
        return None
    return value if isinstance(value, str) else None




def unreadable(error: ReadError | yaml.YAMLError, text: str, first_line: int | None = None) -> tuple[str, str]:
    """Why TEXT is not one document Go can read, as (the field it stops at, "" for the text as a
    whole; the message): what Go could not take as written, or the malformed YAML libyaml found —
    placed on the line of the input the text is part of when it begins at FIRST_LINE of it."""
    if isinstance(error, ReadError):
        return error.field, error.message
    if isinstance(error, yaml.reader.ReaderError):  # a character YAML refuses: libyaml says at which offset
        line = text.count("\n", 0, error.position)
        character = error.character if isinstance(error.character, int) else ord(str(error.character)[:1] or "?")
        at = f"line {first_line + line} of the input" if first_line is not None else f"line {line + 1}"
        return "", f"malformed YAML: character U+{character:04X} is not allowed in YAML (a control character), at {at}"
    problem = getattr(error, "problem", None) or str(error)
    mark = getattr(error, "problem_mark", None)
    at = f" (line {first_line + mark.line} of the input)" if first_line is not None and mark is not None else ""
    return "", f"malformed YAML: {problem}{at}"


def load(text: str) -> Any:
    """One YAML document as data, read as Go reads it (the text of a field: a problem is placed by its
    own line and column); ValueError naming the problem."""
    try:
        return construct(compose(text))
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ValueError(f"{error.problem}{at}") from None
    except yaml.YAMLError as error:
        raise ValueError(str(error)) from None
    except ReadError as error:
        raise ValueError(f"{error.field}: {error.message}" if error.path else error.message) from None
