"""A KRM function's input and output: a ``config.kubernetes.io/v1`` ResourceList as Documents.

The ResourceList is read as Go reads it; each item becomes a Document of that data (the filters read
it as they read a document of Helm's stream, without parsing it again), numbered by its position in
``items``, and is held to the limits of one document. Every item is written from its data: what the
filters pass through as read, what they make as made.
"""

from __future__ import annotations

from fusion_helm.errors import InvalidSpec, format_path, show
from fusion_helm.kio.construct import ReadError, compose, construct, head, is_merge_key, unreadable
from fusion_helm.kio.document import Document
from fusion_helm.kio.libyaml import MappingNode, SequenceNode, yaml
from fusion_helm.kio.write import Writer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KIND = "ResourceList"
API_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1alpha1")
WHERE = "ResourceList"


class ResourceList:
    """The items as Documents, the function's configuration, and the apiVersion to answer in."""

    def __init__(self, api_version: str, documents: list[Document], function_config: Any) -> None:
        self.api_version = api_version
        self.documents = documents
        self.function_config = function_config

    def write(self, documents: list[Document], results: list[dict[str, Any]] | None = None) -> str:
        """The ResourceList answering this one: DOCUMENTS as its items (each as read or made), and RESULTS."""
        items = [document.obj for document in documents]
        out: dict[str, Any] = {"apiVersion": self.api_version, "kind": KIND, "items": items}
        if results:
            out["results"] = results
        return Writer().document(out)


def read_resource_list(text: str) -> ResourceList:
    """The ResourceList TEXT holds; InvalidSpec naming the field of the first thing Go could not read."""
    try:
        node = compose(text)
    except (ReadError, yaml.YAMLError) as error:
        raise InvalidSpec(WHERE, *unreadable(error, text)) from None
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
    for index, item_node in enumerate(items_node.value if items_node is not None else ()):
        item = _read(item_node, ("items", index))
        if not isinstance(item, dict):
            raise InvalidSpec(WHERE, format_path(["items", index]), "must be a mapping (an object)")
        documents.append(Document.of_data(item, index + 1))
    config_node = fields.get("functionConfig")
    function_config = _read(config_node, ("functionConfig",)) if config_node is not None else None
    return ResourceList(top["apiVersion"], documents, function_config)


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
