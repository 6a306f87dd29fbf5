"""Every generated object validates against its upstream CRD schema, unknown fields rejected —
as an API server with strict field validation (Helm 4's default) would."""

from __future__ import annotations

import copy

import pytest
import yaml

from tests.helm import VALUES, Helm
from tests.schemas import Validators, custom_resource_errors, errors
from tests.support import EXAMPLES, render


@pytest.mark.parametrize("story", EXAMPLES)
def test_every_object_matches_its_upstream_schema(helm: Helm, validators: Validators, story: str) -> None:
    objects = render(helm, story)
    assert custom_resource_errors(validators, objects) == {}
    assert {obj["kind"] for obj in objects} >= {"InferenceService", "LeaderWorkerSet"}


def test_strict_validation_rejects_unknown_and_mistyped_fields(helm: Helm, validators: Validators) -> None:
    lws = next(o for o in render(helm, "story4-pd-multinode-deepseek-r1.yaml")
               if o["kind"] == "LeaderWorkerSet")
    validator = validators(lws["apiVersion"], lws["kind"])
    bad = copy.deepcopy(lws)
    bad["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["imagePullPolice"] = "x"
    assert any("imagePullPolice" in e for e in errors(validator, bad))
    bad = copy.deepcopy(lws)
    bad["spec"]["leaderWorkerTemplate"]["size"] = "4"
    assert errors(validator, bad)


def test_story_values_are_valid_inference_service_specs(validators: Validators) -> None:
    validator = validators("fusioninfer.io/v1alpha1", "InferenceService")
    for story in EXAMPLES:
        values = yaml.safe_load((VALUES / story).read_text())
        obj = {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
               "metadata": {"name": values["name"]}, "spec": {"roles": values["roles"]}}
        assert errors(validator, obj) == []


def test_the_shipped_schemas_are_the_upstream_crds_in_pieces() -> None:
    """What the package validates against is what ../shared/crds (and the CRDs it lacks, from the
    release sources in ../shared/vendor) says, read back piece by piece, and uses only keywords the
    validator implements."""
    from fusion_helm.model.upstream import checked_schemas
    from fusion_helm.schemagen import UPSTREAM_KINDS, upstream_crds, upstream_schemas

    shipped = checked_schemas()
    assert shipped == upstream_schemas(upstream_crds())
    assert sorted(shipped) == sorted(f"{version} {kind}" for version, kind in UPSTREAM_KINDS)
