"""Schema validation of an InferenceService spec, reported as one clear error.

A small validator for the JSON Schema keywords our schema source uses, so the post-renderer starts
fast (jsonschema alone takes longer to import than `helm template` takes to run). It refuses any
other keyword, and the tests check it agrees with jsonschema, the reference implementation.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any

from fusion_helm.errors import InvalidSpec, format_path
from fusion_helm.model.schema import spec_schema

Path = tuple[str | int, ...]
KEYWORDS = frozenset({
    "$schema", "description", "default", "type", "properties", "required", "additionalProperties",
    "items", "enum", "minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength", "pattern", "anyOf",
})
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}


def check_unique(where: str, path: str, keys: Sequence[Hashable], field: str, what: str) -> None:
    """Refuse the first repeated key of the list at PATH: ``<path>[i].<field>: duplicate <what> …``."""
    first_seen: dict[Hashable, int] = {}
    for index, key in enumerate(keys):
        first = first_seen.setdefault(key, index)
        if first != index:
            raise InvalidSpec(where, f"{path}[{index}].{field}", f"duplicate {what} {key!r} (also {path}[{first}])")


def validate_pod_template(template: Any, where: str, path: str) -> None:
    """Check a pod template (a PodTemplateSpec) as a role's ``template`` is checked."""
    schema = _checked()["properties"]["roles"]["items"]["properties"]["template"]
    error = first_error({**schema, "required": ["spec"]}, template)
    if error is not None:
        sub_path, message = error
        raise InvalidSpec(where, format_path([path, *sub_path]), message)


def validate_spec(spec: Any, where: str) -> None:
    """Raise InvalidSpec for the first schema violation in ``spec``, in document order."""
    error = first_error(_checked(), spec)
    if error is not None:
        path, message = error
        raise InvalidSpec(where, format_path(["spec", *path]), message)


@functools.cache
def _checked() -> Mapping[str, Any]:
    schema = spec_schema()
    unsupported = sorted(set(_keywords(schema)) - KEYWORDS)
    if unsupported:
        raise ValueError(f"schema uses keywords this validator does not implement: {unsupported}")
    return schema


def _keywords(schema: Mapping[str, Any]) -> Iterator[str]:
    yield from schema
    for sub in schema.get("properties", {}).values():
        yield from _keywords(sub)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), Mapping):
            yield from _keywords(schema[key])
    for alternative in schema.get("anyOf", ()):
        yield from _keywords(alternative)


def first_error(schema: Mapping[str, Any], value: Any, path: Path = ()) -> tuple[Path, str] | None:
    alternatives = schema.get("anyOf")
    if alternatives and all(first_error(alternative, value, path) for alternative in alternatives):
        kinds = " or ".join(str(alternative.get("type", "the schema")) for alternative in alternatives)
        return path, f"must be of type {kinds}, got {_type_name(value)}"
    expected = schema.get("type")
    if expected is not None and not _is_type(value, expected):
        return path, f"must be of type {expected}, got {_type_name(value)}"
    if isinstance(value, dict):
        return _object_error(schema, value, path)
    if isinstance(value, list):
        return _array_error(schema, value, path)
    return _scalar_error(schema, value, path)


def _object_error(schema: Mapping[str, Any], value: dict[str, Any], path: Path) -> tuple[Path, str] | None:
    properties: Mapping[str, Any] = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in value:
            return (*path, name), "is required"
    extra = schema.get("additionalProperties", True)
    for name in sorted(key for key in value if key not in properties):
        if extra is False:
            return (*path, name), f"unknown field (allowed: {', '.join(sorted(properties))})"
        if isinstance(extra, Mapping) and (error := first_error(extra, value[name], (*path, name))):
            return error
    for name, sub in properties.items():
        if name in value and (error := first_error(sub, value[name], (*path, name))):
            return error
    return None


def _array_error(schema: Mapping[str, Any], value: list[Any], path: Path) -> tuple[Path, str] | None:
    if len(value) < schema.get("minItems", 0):
        return path, f"must have at least {schema['minItems']} item(s), got {len(value)}"
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        return path, f"must have at most {schema['maxItems']} item(s), got {len(value)}"
    items = schema.get("items")
    if items is not None:
        for index, item in enumerate(value):
            if error := first_error(items, item, (*path, index)):
                return error
    return None


def _scalar_error(schema: Mapping[str, Any], value: Any, path: Path) -> tuple[Path, str] | None:
    if "enum" in schema and value not in schema["enum"]:
        return path, f"must be one of {', '.join(map(str, schema['enum']))}, got {value!r}"
    if "minimum" in schema and value < schema["minimum"]:
        return path, f"must be >= {schema['minimum']}, got {value}"
    if "maximum" in schema and value > schema["maximum"]:
        return path, f"must be <= {schema['maximum']}, got {value}"
    if "minLength" in schema and len(value) < schema["minLength"]:
        return path, f"must be at least {schema['minLength']} characters long, got {len(value)}"
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        return path, f"must be at most {schema['maxLength']} characters long, got {len(value)}"
    if "pattern" in schema and not re.search(schema["pattern"], value):
        return path, f"must match {schema['pattern']}, got {value!r}"
    return None


def _is_type(value: Any, expected: str) -> bool:
    # JSON has no booleans among its numbers, though Python's bool is an int.
    return isinstance(value, _TYPES[expected]) and not (isinstance(value, bool) and expected != "boolean")


def _type_name(value: Any) -> str:
    return next((name for name, types in _TYPES.items() if _is_type(value, name)), type(value).__name__)
