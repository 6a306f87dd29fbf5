"""Reading and writing Helm's streams: Helm 3's (`---` + `# Source:`) and Helm 4's (annotations)."""

from __future__ import annotations

import pytest

from fusion_helm.errors import InvalidSpec
from fusion_helm.kio.document import FILENAME_ANNOTATION, read_documents, write_documents

HELM3 = ("---\n# Source: c/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
         "---\n# Source: c/templates/b.yaml\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n")
HELM4 = (f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n"
         f"    {FILENAME_ANNOTATION}: 'c/templates/a.yaml'\n---\napiVersion: v1\nkind: Secret\n"
         f"metadata:\n  name: b\n  annotations:\n    {FILENAME_ANNOTATION}: 'c/templates/b.yaml'")


@pytest.mark.parametrize("stream", [HELM3, HELM4, "", "\n", "--- \napiVersion: v1\n"])
def test_round_trip_is_byte_exact(stream: str) -> None:
    assert write_documents(read_documents(stream)) == stream


def test_origin_is_read_from_either_helm() -> None:
    assert [d.source for d in read_documents(HELM3)] == ["c/templates/a.yaml", "c/templates/b.yaml"]
    assert [d.filename for d in read_documents(HELM4)] == ["c/templates/a.yaml", "c/templates/b.yaml"]


def test_generated_documents_follow_their_parent_origin() -> None:
    [parent, _] = read_documents(HELM4)  # last document has no trailing newline in helm 4 streams
    child = parent.derive({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    assert child.obj["metadata"]["annotations"] == {FILENAME_ANNOTATION: "c/templates/a.yaml"}
    [last] = read_documents(HELM4)[1:]
    out = write_documents([last, last.derive({"kind": "X", "metadata": {}})])
    assert out.endswith("'c/templates/b.yaml'\n---\nkind: X\nmetadata:\n  annotations:\n"
                        f"    {FILENAME_ANNOTATION}: c/templates/b.yaml\n")
    [helm3_parent, _] = read_documents(HELM3)
    assert write_documents([helm3_parent.derive({"kind": "Z"})]) == "---\n# Source: c/templates/a.yaml\nkind: Z\n"


def test_block_scalars_and_inline_separators() -> None:
    stream = "a: |\n  ---\n  text\n---\nb: 1\n--- {c: 2}\n"
    assert [d.obj for d in read_documents(stream)] == [{"a": "---\ntext\n"}, {"b": 1}, {"c": 2}]


def test_unsafe_tags_are_never_constructed() -> None:
    [document] = read_documents("kind: InferenceService\nspec: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(InvalidSpec, match=r"spec: unsupported tag '!!python/object/apply:os\.system'"):
        _ = document.obj


def test_describe_names_position_and_origin() -> None:
    first, second = read_documents("---\n# Source: c/t.yaml\na: 1\n---\nb: 2\n")
    assert first.describe() == "document 1 (c/t.yaml)"
    assert second.describe() == "document 2"
