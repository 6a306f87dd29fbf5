"""Helpers the test modules share: renders of the examples, the router example, the charts of the
fixtures, strings Go and YAML readers disagree on, one-field mutations of a spec."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from tests.fuzz.cases import paths
from tests.helm import ROOT, VALUES, Helm

EXAMPLES = sorted(path.name for path in VALUES.glob("*.yaml"))
"""Every values file of the repository: the design's stories and the examples."""
REPLACEMENTS: list[Any] = [None, True, -1, 0, 1.5, "", "x", "UPPER", "a" * 64, [], [{}], {}, {"k": 1}]

EXAMPLE = "router-pd-qwen3-8b.yaml"


def router(**fields: Any) -> dict[str, Any]:
    return {"name": "router", "componentType": "router", "gateway": {"gatewayClassName": "istio", "listeners": [
        {"name": "http", "protocol": "HTTP", "port": 80}]}, **fields}


def monolithic_v1alpha2(tmp_path: Path) -> Path:
    """Story 1 behind a v1alpha2 router with weighted LoRA adapters, attached to an existing Gateway."""
    values = yaml.safe_load((VALUES / "story1-monolithic-qwen3-8b.yaml").read_text())
    values["roles"].append({
        "name": "router", "componentType": "router",
        "poolAPIVersion": "inference.networking.x-k8s.io/v1alpha2",
        "strategy": {"scorers": [{"type": "queue-size"}, {"type": "prefix-cache", "weight": 2,
                                                          "parameters": {"hashBlockSize": 32}}]},
        "endpointPicker": {"flags": {"v": "4"}, "resources": {"requests": {"cpu": "1"}}},
        "httproute": {"parentRefs": [{"name": "shared-gateway", "namespace": "gateways"}]},
        "models": [{"name": "chat", "modelName": "qwen3-chat", "criticality": "Sheddable",
                    "targetModels": [{"name": "chat-lora-v1", "weight": 90}, {"name": "chat-lora-v2", "weight": 10}]}],
    })
    path = tmp_path / "monolithic-v1alpha2.yaml"
    path.write_text(yaml.safe_dump(values))
    return path


def documented_request() -> tuple[dict[str, str], str]:
    """The request docs/router.md shows a client of the example router sending: (headers, body model)."""
    text = (VALUES.parent / "docs" / "router.md").read_text()
    block = text.split("POST /v1/completions\n", 1)[1].split("```", 1)[0].strip().splitlines()
    headers = dict(line.split(": ", 1) for line in block[:-1])
    return headers, yaml.safe_load(block[-1])["model"]


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [obj for obj in objects if obj["kind"] == kind]


def render(helm: Helm, story: str) -> list[dict[str, Any]]:
    out = helm.template(VALUES / story).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


DOC_STORY = "story2-pd-qwen3-8b.yaml"


LWS_CHART = ROOT / "tests" / "fixtures" / "lws-chart"


ROLLOUT_CHART = ROOT / "tests" / "fixtures" / "lws-rollout-chart"


def by_key(objects: list[dict[str, Any]]) -> dict[tuple[str, str | None, str], dict[str, Any]]:
    """Objects by kind, namespace and name (helm 4 orders its output by kind; kustomize by its own rules),
    each key once."""
    keyed = {(obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"]): obj for obj in objects}
    assert len(keyed) == len(objects)
    return keyed


def objects(text: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(text) if doc]


class Renders:
    """`helm template` of the chart through the post-renderer, each values file with its settings rendered
    once however many tests read it (the session's `renders` fixture): the printed text, or its objects
    (a copy for each test, which may change them)."""

    def __init__(self, helm: Helm) -> None:
        self.helm = helm
        self._texts: dict[tuple[Path, tuple[str, ...]], str] = {}
        self._objects: dict[tuple[Path, tuple[str, ...]], list[dict[str, Any]]] = {}

    def text(self, values: Path, *settings: str) -> str:
        """What helm prints for VALUES with SETTINGS (``--set`` arguments)."""
        key = (values, settings)
        if key not in self._texts:
            self._texts[key] = self.helm.template(values, extra=settings).stdout
        return self._texts[key]

    def __call__(self, values: Path, *settings: str) -> list[dict[str, Any]]:
        """The objects helm prints for VALUES with SETTINGS."""
        key = (values, settings)
        if key not in self._objects:
            self._objects[key] = objects(self.text(values, *settings))
        return copy.deepcopy(self._objects[key])


def mutations(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for path in list(paths(spec))[1:]:
        *parent_path, last = path
        for replacement in [*REPLACEMENTS, "DELETE", "ADD"]:
            variant = copy.deepcopy(spec)
            parent = variant
            for key in parent_path:
                parent = parent[key]
            if replacement == "DELETE":
                if isinstance(parent, dict):
                    del parent[last]
                else:
                    parent.pop(last)
            elif replacement == "ADD":
                if not isinstance(parent, dict):
                    continue
                parent["unexpectedField"] = 1
            else:
                parent[last] = replacement
            yield variant


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


TRICKY_STRINGS = [*SCALARS, "a: b", "- x", "#x", "x #y", " lead", "trail ", "multi\nline", "tab\there", "'q'", '"d"',
                  "\u2028", "a\u2028b", "\x85", "é", "😀", "{x}", "[x]", "@x", "`x", "!x", "&x", "*x", "%x", "|", ">",
                  "? x", "---", "...", "--- x", "x\n---\ny", "\ufeffbom", "\\", "a\\nb", "\x7f", "\t"]


_HOOK_RENDERS: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = {}
"""hook_objects' renders for the session, by helm, values files (with what they hold), and settings."""


def hook_objects(helm: Helm, *values: Path, post_render: bool = False,
                 extra: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """The chart's hook objects for VALUES, by ``kind/name``: rendered once for the session per helm, values
    and settings (a copy for each caller, which may change it)."""
    key = (helm.path, tuple((path, path.read_bytes()) for path in values), post_render, extra)
    if key not in _HOOK_RENDERS:
        out = helm.template(*values, hooks=True, post_render=post_render, extra=extra).stdout
        docs = [doc for doc in yaml.safe_load_all(out)
                if doc and "helm.sh/hook" in doc["metadata"].get("annotations", {})]
        _HOOK_RENDERS[key] = {f"{doc['kind']}/{doc['metadata']['name']}": doc for doc in docs}
    return copy.deepcopy(_HOOK_RENDERS[key])


def rendered_spec(helm: Helm, values: Path) -> dict[str, Any]:
    """The InferenceService spec the chart gives the check Job for VALUES (its ConfigMap's spec.json)."""
    [configmap] = [o for key, o in hook_objects(helm, values).items() if key.startswith("ConfigMap/")]
    spec: dict[str, Any] = json.loads(configmap["data"]["spec.json"])
    return spec


def lay_out(objects: dict[str, dict[str, Any]], pod: dict[str, Any], into: Path) -> None:
    """POD's ConfigMap volume laid out under INTO as the volume lays it out, from the rendered OBJECTS."""
    [volume] = [volume for volume in pod["volumes"] if "configMap" in volume]
    data = objects[f"ConfigMap/{volume['configMap']['name']}"]["data"]
    for item in volume["configMap"]["items"]:
        path = into / item["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data[item["key"]])
