"""A KRM function's input and output: a ``config.kubernetes.io/v1`` ResourceList as Documents.

The ResourceList is read as Go reads it; each item becomes a Document of its own text (what the
filters read, exactly as they read a document of Helm's stream), numbered by its position in
``items``, and is held to the limits of one document. What the filters pass through is written back
as the object read; what they make is written from their data.
"""

from __future__ import annotations

from fusion_helm.errors import InvalidSpec, format_path, show
from fusion_helm.kio.construct import ReadError, compose, construct, head, is_merge_key
from fusion_helm.kio.document import Document
from fusion_helm.kio.libyaml import MappingNode, SequenceNode, yaml
from fusion_helm.kio.stream import Chunk
from fusion_helm.kio.write import Writer, dump

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KIND = "ResourceList"
API_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1alpha1")
WHERE = "ResourceList"


class ResourceList:
    """The items as Documents, the function's configuration, and the apiVersion to answer in."""

    def __init__(self, api_version: str, documents: list[Document], items: dict[int, Any],
                 function_config: Any) -> None:
        self.api_version = api_version
        self.documents = documents
        self.function_config = function_config
        self._items = items
        """Each read item by its Document's id: written back as read when passed through."""

    def write(self, documents: list[Document], results: list[dict[str, Any]] | None = None) -> str:
        """The ResourceList answering this one: DOCUMENTS as its items, and RESULTS."""
        items = [self._items.get(id(document)) or document.obj for document in documents]
        out: dict[str, Any] = {"apiVersion": self.api_version, "kind": KIND, "items": items}
        if results:
            out["results"] = results
        return Writer().document(out)


def read_resource_list(text: str) -> ResourceList:
    """The ResourceList TEXT holds; InvalidSpec naming the field of the first thing Go could not read."""
    try:
        node = compose(text)
    except ReadError as error:
        raise InvalidSpec(WHERE, error.field, error.message) from None
    except yaml.YAMLError as error:
        problem = getattr(error, "problem", None) or str(error)
        raise InvalidSpec(WHERE, "", f"malformed YAML: {problem}") from None
    if not isinstance(node, MappingNode):
        raise InvalidSpec(WHERE, "", f"must be a {KIND} mapping ({', '.join(API_VERSIONS)})")
    fields = _fields(node)
    top = head(node)
    if top.get("kind") != KIND or top.get("apiVersion") not in API_VERSIONS:
        raise InvalidSpec(WHERE, "kind", f"must be kind {KIND}, apiVersion {' or '.join(API_VERSIONS)}")
    items_node = fields.get("items")
    if items_node is not None and not isinstance(items_node, SequenceNode):
        if _read(items_node, ("items",)) is not None:
            raise InvalidSpec(WHERE, "items", "must be a list")
        items_node = None
    documents: list[Document] = []
    items: dict[int, Any] = {}
    for index, item_node in enumerate(items_node.value if items_node is not None else ()):
        item = _read(item_node, ("items", index))
        if not isinstance(item, dict):
            raise InvalidSpec(WHERE, format_path(["items", index]), "must be a mapping (an object)")
        document = Document(Chunk(f"---\n{dump(item)}", index + 1, 1))
        documents.append(document)
        items[id(document)] = item
    config_node = fields.get("functionConfig")
    function_config = _read(config_node, ("functionConfig",)) if config_node is not None else None
    return ResourceList(top["apiVersion"], documents, items, function_config)


def _fields(node: MappingNode) -> dict[str, yaml.Node]:
    """The ResourceList's own fields by name: keys Go reads as the strings they are, each once."""
    fields: dict[str, yaml.Node] = {}
    for key, value in node.value:
        name = _read(key, ())
        if not isinstance(name, str) or is_merge_key(key):
            raise InvalidSpec(WHERE, "", f"has a key that is not a field name: {show(name)}")
        if name in fields:
            raise InvalidSpec(WHERE, format_path([name]), "given twice")
        fields[name] = value
    return fields


def _read(node: yaml.Node, at: tuple[str | int, ...]) -> Any:
    """NODE's data as Go reads it (each item held to one document's limits)."""
    try:
        return construct(node)
    except ReadError as error:
        raise InvalidSpec(WHERE, format_path([*at, *error.path]), error.message) from None
