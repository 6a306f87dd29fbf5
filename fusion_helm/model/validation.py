"""Schema validation of an InferenceService spec, reported as one clear error."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, cast

import jsonschema
from jsonschema.exceptions import ValidationError, best_match

from fusion_helm.errors import InvalidSpec, format_path
from fusion_helm.model.schema import spec_schema

_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
               float: "number", type(None): "null"}


@functools.cache
def _spec_validator() -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(spec_schema())


def validate_spec(spec: Any, where: str) -> None:
    """Raise InvalidSpec for the most relevant schema violation in ``spec``, if any."""
    error = best_match(_spec_validator().iter_errors(spec))
    if error is not None:
        path, message = _describe(error)
        raise InvalidSpec(where, format_path(["spec", *path]), message)


def _describe(error: ValidationError) -> tuple[list[str | int], str]:
    path: list[str | int] = list(error.absolute_path)
    # jsonschema types these as possibly "unset"; for an error that was raised they are set.
    rule, expected, got = error.validator, cast(Any, error.validator_value), cast(Any, error.instance)
    schema = cast(Mapping[str, Any], error.schema)
    if rule == "required":
        missing = next(name for name in expected if name not in got)
        return [*path, missing], "is required"
    if rule == "additionalProperties":
        allowed = set(schema.get("properties", {}))
        unknown = sorted(name for name in got if name not in allowed)[0]
        return [*path, unknown], f"unknown field (allowed: {', '.join(sorted(allowed))})"
    if rule == "minimum":
        return path, f"must be >= {expected}, got {got}"
    if rule == "maximum":
        return path, f"must be <= {expected}, got {got}"
    if rule == "enum":
        return path, f"must be one of {', '.join(map(str, expected))}, got {got!r}"
    if rule == "type":
        return path, f"must be of type {expected}, got {_JSON_TYPES.get(type(got), 'value')}"
    if rule == "minItems":
        return path, f"must have at least {expected} item(s), got {len(got)}"
    if rule == "pattern":
        return path, f"must match {expected}, got {got!r}"
    if rule in ("minLength", "maxLength"):
        bound = "at least" if rule == "minLength" else "at most"
        return path, f"must be {bound} {expected} characters long, got {len(got)}"
    return path, error.message
