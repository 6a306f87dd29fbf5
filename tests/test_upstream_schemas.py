"""Every generated object validates against its upstream CRD schema, unknown fields rejected —
as an API server with strict field validation (Helm 4's default) would."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
import yaml

from fusion_helm.model.schema import to_draft07
from fusion_helm.schemagen import crd as our_crd
from tests.helm import VALUES, Helm
from tests.test_stories import STORIES, render


def strict_validator(openapi_schema: dict[str, Any]) -> jsonschema.Draft7Validator:
    """jsonschema over the CRD's structural schema, with unknown fields made errors."""
    schema = to_draft07(openapi_schema)
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


@pytest.fixture(scope="module")
def validators(upstream_crds: dict[tuple[str, str], dict[str, Any]]):
    cache: dict[tuple[str, str], jsonschema.Draft7Validator] = {}
    ours = our_crd()["spec"]
    own = {(f"{ours['group']}/{v['name']}", ours["names"]["kind"]): v["schema"]["openAPIV3Schema"]
           for v in ours["versions"]}

    def get(api_version: str, kind: str) -> jsonschema.Draft7Validator:
        key = (api_version, kind)
        if key not in cache:
            schemas = {**upstream_crds, **own}
            assert key in schemas, f"no upstream schema for {kind} {api_version}"
            cache[key] = strict_validator(schemas[key])
        return cache[key]

    return get


def errors(validator: jsonschema.Draft7Validator, obj: dict[str, Any]) -> list[str]:
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(obj)]


@pytest.mark.parametrize("story", sorted(STORIES))
def test_every_object_matches_its_upstream_schema(helm: Helm, validators, story: str) -> None:
    objects = render(helm, story)
    for obj in objects:
        validator = validators(obj["apiVersion"], obj["kind"])
        assert errors(validator, obj) == [], f"{obj['kind']} {obj['metadata']['name']}"
    assert {obj["kind"] for obj in objects} >= {"InferenceService", "LeaderWorkerSet"}


def test_strict_validation_rejects_unknown_and_mistyped_fields(helm: Helm, validators) -> None:
    lws = next(o for o in render(helm, "story4-pd-multinode-deepseek-r1.yaml")
               if o["kind"] == "LeaderWorkerSet")
    validator = validators(lws["apiVersion"], lws["kind"])
    bad = copy.deepcopy(lws)
    bad["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["imagePullPolice"] = "x"
    assert any("imagePullPolice" in e for e in errors(validator, bad))
    bad = copy.deepcopy(lws)
    bad["spec"]["leaderWorkerTemplate"]["size"] = "4"
    assert errors(validator, bad)


def test_story_values_are_valid_inference_service_specs(validators) -> None:
    validator = validators("fusioninfer.io/v1alpha1", "InferenceService")
    for story in STORIES:
        values = yaml.safe_load((VALUES / story).read_text())
        obj = {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
               "metadata": {"name": values["name"]}, "spec": {"roles": values["roles"]}}
        assert errors(validator, obj) == []
