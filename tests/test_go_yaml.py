"""We read what Helm reads and Helm reads what we wrote: Go's sigs.k8s.io/yaml (the reader Helm and
kubectl use) is the oracle, built from the Go module proxy and run on the same texts."""

from __future__ import annotations

import random
from typing import Any

import yaml

from fusion_helm import parse_inference_service
from fusion_helm.expand import expand
from fusion_helm.kio.construct import load
from fusion_helm.kio.write import dump
from tests.goyaml import GoYAML
from tests.helm import VALUES

SPECIAL = ["y", "Y", "n", "N", "yes", "No", "on", "OFF", "true", "False", "null", "Null", "~", "", "<<", "=",
           ".inf", "-.Inf", "+.INF", ".nan", ".NaN", "0", "00", "007", "08", "089", "0x1F", "0X1f", "0o17", "0O17",
           "0b101", "-0b101", "+0b1", "0b", "0x", "1e3", "1E3", "1e+3", "1.5e-3", "1.", ".5", "+.5", "-.5e2",
           "1_000", "1__0", "_1", "1_", "1:20", "1:20:30", "-1:20", "190:20:30.15", "2001-12-14",
           "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10", "2001-2-3", "2001-02-30", "2001-12-14T25:00:00Z",
           "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
           "18446744073709551615", "18446744073709551616", "+18446744073709551615", "1e308", "1e309", "1e-400",
           "1" + "0" * 400, "1" + "0" * 5000, ".", "..", "-", "+", "+-1", "1.2.3", "1e", "e3", "0e0", "-0", "-0.0",
           "Infinity", "NaN", "inf", "1,000", "0x_1", "0b_1", "0o_7", "0_7", "0.5_0", "1e1_0"]


def generated_scalars(count: int, seed: int = 20261123) -> list[str]:
    """Plain-scalar texts made of the characters that decide a YAML type: signs, digits, dots,
    exponents, base prefixes, underscores, colons."""
    rng = random.Random(seed)
    alphabet = "0123456789+-._:eExXoObBaAfFyYnN~"
    out = []
    while len(out) < count:
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))
        try:  # only texts that are one plain scalar in YAML at all
            if isinstance(yaml.safe_load(f"v: {text}"), dict) and "#" not in text:
                out.append(text)
        except yaml.YAMLError:
            continue
    return out


SCALARS = SPECIAL + generated_scalars(3000)


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


TRICKY_STRINGS = [*SCALARS, "a: b", "- x", "#x", "x #y", " lead", "trail ", "multi\nline", "tab\there", "'q'", '"d"',
                  "\u2028", "a\u2028b", "\x85", "é", "😀", "{x}", "[x]", "@x", "`x", "!x", "&x", "*x", "%x", "|", ">",
                  "? x", "---", "...", "--- x", "x\n---\ny", "\ufeffbom", "\\", "a\\nb", "\x7f", "\t"]


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
                   "metadata": {"name": values.get("name", "svc"), "labels": {"on": "y", "n": "0o17"}}, "spec": spec}
        objects += expand(parse_inference_service(service))
        if any(role["componentType"] == "prefiller" for role in spec["roles"]):
            in_a_set = {**service, "spec": {**spec, "layout": "disaggregated"}}
            in_a_set["metadata"] = {**service["metadata"], "name": f"{service['metadata']['name']}-set"}
            objects += expand(parse_inference_service(in_a_set))
    assert any(obj["kind"] == "DisaggregatedSet" for obj in objects)
    return objects


def test_go_reads_every_generated_object_as_we_meant_it(go_yaml: GoYAML) -> None:
    objects = story_objects()
    documents = [dump(obj) for obj in objects]
    for obj, go in zip(objects, go_yaml.read(documents), strict=True):
        assert go["error"] is None
        assert go["json"] == obj, obj["metadata"]["name"]
