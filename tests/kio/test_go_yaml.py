"""We read what Helm reads and Helm reads what we wrote: Go's sigs.k8s.io/yaml (the reader Helm and
kubectl use) is the oracle, built from the Go module proxy and run on the same texts."""

from __future__ import annotations

from typing import Any

import yaml

from fusion_helm import parse_inference_service
from fusion_helm.expand import expand
from fusion_helm.kio.construct import load
from fusion_helm.kio.write import dump
from tests import builders
from tests.goyaml import GoYAML
from tests.helm import VALUES
from tests.support import SCALARS, TRICKY_STRINGS, router


def test_we_read_plain_scalars_as_go_does(go_yaml: GoYAML) -> None:
    documents = [f"v: {text}\n" for text in SCALARS]
    disagreements = []
    for text, document, go in zip(SCALARS, documents, go_yaml.read(documents), strict=True):
        try:
            ours: Any = load(document)
        except ValueError:
            ours = None
        if go["error"] is not None:
            if ours is not None:
                disagreements.append((text, ours, go["error"]))
        elif ours != go["json"] or type(ours["v"]) is not type(go["json"]["v"]):
            disagreements.append((text, ours, go["json"]))
    assert disagreements == []


def test_a_key_we_accept_is_the_key_go_reads(go_yaml: GoYAML) -> None:
    documents = [f"{text}: v\n" for text in SCALARS if text]
    accepted = refused = 0
    for document, go in zip(documents, go_yaml.read(documents), strict=True):
        try:
            ours = load(document)
        except ValueError as error:
            assert "quote it" in str(error) or "merge" in str(error) or go["error"], (document, error)
            refused += 1
            continue
        accepted += 1
        assert go["json"] == ours, document
    assert accepted > 100 and refused > 100


def test_go_reads_every_string_we_write_as_that_string(go_yaml: GoYAML) -> None:
    objects = [{"key": text, text: "value", "list": [text]} for text in TRICKY_STRINGS if text]
    documents = [dump(obj) for obj in objects]
    for obj, document, go in zip(objects, documents, go_yaml.read(documents), strict=True):
        assert go["error"] is None, (document, go["error"])
        assert go["json"] == obj, document
        assert yaml.safe_load(document) == obj, document


def story_objects() -> list[dict[str, Any]]:
    objects = []
    for path in [*sorted(VALUES.glob("*.yaml"))]:
        values = yaml.safe_load(path.read_text())
        spec = {key: value for key, value in values.items() if key != "name"}
        service = {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
                   "metadata": {"name": values.get("name", "svc"), "namespace": "llm",
                                "labels": {"on": "y", "n": "0o17"}}, "spec": spec}
        objects += expand(parse_inference_service(service))
        if any(role["componentType"] == "prefiller" for role in spec["roles"]):
            in_a_set = {**service, "spec": {**spec, "layout": "disaggregated"}}
            in_a_set["metadata"] = {**service["metadata"], "name": f"{service['metadata']['name']}-set"}
            objects += expand(parse_inference_service(in_a_set))
    objects += expand(parse_inference_service(builders.service(*builders.every_bootstrap(), router())))
    assert any(obj["kind"] == "DisaggregatedSet" for obj in objects)
    return objects


def test_go_reads_every_generated_object_as_we_meant_it(go_yaml: GoYAML) -> None:
    objects = story_objects()
    documents = [dump(obj) for obj in objects]
    for obj, go in zip(objects, go_yaml.read(documents), strict=True):
        assert go["error"] is None
        assert go["json"] == obj, obj["metadata"]["name"]
