"""The post-renderer's validator agrees with jsonschema, the reference, on every variant of the stories'
specs that one mutation can make: wrong types, missing and unknown fields, out-of-range values."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import jsonschema
import pytest
import yaml

from fusion_helm import InvalidSpec, render
from fusion_helm.model.schema import spec_schema
from fusion_helm.model.validation import first_error
from tests.helm import VALUES
from tests.schemas import prune_nulls
from tests.support import mutations


def story_specs() -> Iterator[dict[str, Any]]:
    for path in [*sorted(VALUES.glob("story*.yaml")), VALUES / "router-pd-qwen3-8b.yaml"]:
        values = yaml.safe_load(path.read_text())
        yield {"roles": values["roles"], "schedulingStrategy": {"schedulerName": "volcano"}}


def variants() -> list[dict[str, Any]]:
    return [variant for spec in story_specs() for variant in [spec, *mutations(spec)]]


VARIANTS = variants()


def test_there_are_enough_variants_to_mean_something() -> None:
    assert len(VARIANTS) > 2000


@pytest.mark.parametrize("chunk", range(8))
def test_agrees_with_jsonschema(chunk: int) -> None:
    reference = jsonschema.Draft7Validator(spec_schema())
    invalid = 0
    for variant in VARIANTS[chunk::8]:
        ours = first_error(spec_schema(), variant)
        theirs = list(reference.iter_errors(prune_nulls(spec_schema(), variant)))
        assert (ours is None) == (not theirs), (variant, ours, [e.message for e in theirs])
        if ours is None:
            continue
        invalid += 1
        path, message = ours
        if message == "is required" or message.startswith("unknown field"):
            path = path[:-1]  # jsonschema reports these on the object that holds the field
        assert path in reported_paths(theirs), (variant, ours)
    assert invalid > 0


def reported_paths(errors: Iterable[jsonschema.ValidationError]) -> set[tuple[str | int, ...]]:
    """Where jsonschema reports ERRORS, and for a field of several forms (anyOf), what each form
    found wrong: ours names the form of the value's type."""
    return {path for error in errors
            for path in (tuple(error.absolute_path), *reported_paths(error.context or ()))}


def service_variants() -> Iterator[dict[str, Any]]:
    for spec in story_specs():
        obj = {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
               "metadata": {"name": "svc", "labels": {"team": "a"}}, "spec": spec}
        yield obj
        yield from mutations(obj)


def test_any_single_mutation_renders_or_gives_one_clear_error() -> None:
    outcomes = {"rendered": 0, "refused": 0}
    for variant in service_variants():
        try:
            render(yaml.safe_dump(variant))
            outcomes["rendered"] += 1
        except InvalidSpec as error:
            assert str(error).startswith(("InferenceService", "document")), str(error)
            outcomes["refused"] += 1
    assert outcomes["rendered"] > 100 and outcomes["refused"] > 1000, outcomes


def test_patterns_end_where_go_s_end() -> None:
    """Go's regexp (the API server's) reads `$` as the end of the text; Python's `re` also before a final
    line break. A role named "a\\n" or a quantity "1\\n" must be refused as the API server refuses them."""
    from fusion_helm.model.validation import first_error

    assert first_error({"type": "string", "pattern": "^[a-z]+$"}, "abc\n") is not None
    assert first_error({"type": "string", "pattern": "^a(b|c)$"}, "ab") is None
    spec = {"roles": [{"name": "a\n", "componentType": "worker", "template": {"spec": {"containers": [
        {"name": "c", "image": "i"}]}}}]}
    assert first_error(spec_schema(), spec) == (("roles", 0, "name"),
                                                 "must match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$, got 'a\\n'")


def test_the_patterns_checked_without_compiling_match_as_go_s_regexp_does() -> None:
    import random
    import re

    from fusion_helm.model.metadata import is_dns_label
    from fusion_helm.model.validation import DNS_LABEL_PATTERN, QUANTITY_PATTERN, is_quantity_text

    quantity, label = re.compile(QUANTITY_PATTERN[:-1] + r"\Z"), re.compile(DNS_LABEL_PATTERN[:-1] + r"\Z")
    rng = random.Random(5)
    for _ in range(100_000):
        text = "".join(rng.choice("0123456789.+-eEKMGTPinukm aZ-\n") for _ in range(rng.randint(0, 7)))
        assert is_quantity_text(text) == bool(quantity.search(text)), text
        assert is_dns_label(text) == bool(label.search(text)), text
