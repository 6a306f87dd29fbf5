"""Reading streams: valid YAML in every form libyaml reads is accepted, documents are cut where libyaml
cuts them, and documents we do not expand are never parsed."""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml

from fusion_helm import render
from fusion_helm.kio.document import read_documents, write_documents
from fusion_helm.kio.stream import split
from tests.helm import VALUES

PIECES = ["a: 1\n", "b: [1, 2]\n", "# comment\n", "---\n", "--- \n", "--- # c\n", "--- {c: 3}\n", "--- |\n  text\n",
          "...\n", "%YAML 1.1\n", "%TAG !e! tag:example.com,2000:\n", "k: !e!x v\n", "s: '---'\n", "q: \"x\u2028y\"\n",
          "l: |\n  ---\n  x\n", "\n", "-x: 1\n", "...x: 1\n", "--x: 1\n", "m:\n  - 1\n"]


def streams(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 7)))
        ending = rng.choice(["\n", "\r\n", "\r"])
        out.append(("\ufeff" if rng.random() < 0.1 else "") + text.replace("\n", ending))
    return out


def libyaml_documents(text: str) -> list[Any] | str:
    try:
        return list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return "error"


def our_documents(text: str) -> list[Any] | str:
    found = []
    for chunk in split(text):
        try:
            parsed = list(yaml.safe_load_all(chunk.text))
        except yaml.YAMLError:
            return "error"
        if len(parsed) > 1:
            return "error"
        found += parsed
    return found


def test_documents_are_cut_where_libyaml_cuts_them() -> None:
    cases = streams(4000)
    agreed = [text for text in cases if libyaml_documents(text) == our_documents(text)]
    assert len(agreed) == len(cases), [text for text in cases if text not in agreed][:5]
    assert sum(libyaml_documents(text) != "error" for text in cases) > 1000


def story2_stream() -> str:
    values = yaml.safe_load((VALUES / "story2-pd-qwen3-8b.yaml").read_text())
    service = {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService", "metadata": {"name": "qwen"},
               "spec": {"roles": values["roles"]}}
    return "---\n# Source: chart/templates/svc.yaml\n" + yaml.safe_dump(service) + \
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {note: \"x\u2028y\"}\n"


@pytest.mark.parametrize("form", ["CRLF", "CR", "BOM", "directives", "U+2028", "end markers"])
def test_valid_yaml_in_any_form_renders_the_same_objects(form: str) -> None:
    plain = story2_stream()
    text = {
        "CRLF": plain.replace("\n", "\r\n"),
        "CR": plain.replace("\n", "\r"),
        "BOM": "\ufeff" + plain,
        "directives": plain.replace("---\n", "%YAML 1.1\n%TAG !k! tag:yaml.org,2002:\n---\n", 1),
        "U+2028": plain.replace("{name: c}", "{name: c, annotations: {n: \"a\u2028b\"}}"),
        "end markers": plain.replace("\n---\napiVersion: v1", "\n...\n%YAML 1.1\n---\napiVersion: v1"),
    }[form]
    out = render(text)
    expected = [doc for doc in yaml.safe_load_all(render(plain)) if doc]
    got = [doc for doc in yaml.safe_load_all(out) if doc]
    if form == "U+2028":
        got[-1]["metadata"].pop("annotations")
    assert got == expected
    assert out.startswith(text[:text.index("spec:")])  # the service's own text is kept


def test_documents_we_do_not_expand_are_never_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    from fusion_helm.kio import document

    parsed: list[str] = []
    original = document.compose
    monkeypatch.setattr(document, "compose", lambda text: parsed.append(text) or original(text))
    foreign = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n" for i in range(50))
    broken = "---\n# a chart's own document that YAML cannot read\nkey: [unclosed\n"
    assert render(foreign + broken) == foreign + broken
    assert parsed == []
    render(story2_stream() + foreign)
    assert len(parsed) == 1 and "InferenceService" in parsed[0]


def test_a_stream_round_trips_byte_for_byte() -> None:
    text = "\ufeff%YAML 1.1\r\n---\r\na: 1\r\n...\r\n# c\r\n--- \r\nb: 2\rc: 3\r---\r"
    assert write_documents(read_documents(text)) == text
