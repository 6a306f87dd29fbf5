"""Schema validation — of an InferenceService spec, and of objects against upstream CRD schemas —
reported as one clear error.

A small validator for the JSON Schema keywords structural schemas use, so the post-renderer starts
fast (jsonschema alone takes longer to import than `helm template` takes to run). It refuses any
other keyword, and the tests check it agrees with jsonschema, the reference implementation. Where the
API server differs from plain JSON Schema it follows the API server: a null field is pruned as if
absent (unless ``nullable``), ``format: int32``/``int64`` bound integers, and
``x-kubernetes-list-type`` ``map``/``set`` lists may not repeat an item or key.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Hashable, Iterator, Mapping, Sequence

from fusion_helm.errors import InvalidSpec, format_path, show
from fusion_helm.model.cel import RULES, failed_rule
from fusion_helm.model.metadata import check_labels_and_annotations, is_dns_label
from fusion_helm.model.schema import spec_schema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

Path = tuple[str | int, ...]
KEYWORDS = frozenset({
    "$schema", "description", "default", "type", "properties", "required", "additionalProperties",
    "items", "enum", "minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength", "pattern", "anyOf",
    "oneOf", "not", "minProperties", "maxProperties", "format", "nullable", "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys", RULES,
})
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}
_INTEGER_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_DATE_TIME = r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[-+]\d\d:\d\d)"
QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
                    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
"""The upstream CRDs' pattern of a resource quantity."""
DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_FRIENDLY_PATTERNS = {QUANTITY_PATTERN: "a resource quantity such as 500m, 16Gi or 8"}
_DIGITS = frozenset("0123456789")


def check_unique(where: str, path: str, keys: Sequence[Hashable], field: str, what: str) -> None:
    """Refuse the first repeated key of the list at PATH: ``<path>[i].<field>: duplicate <what> …``."""
    first_seen: dict[Hashable, int] = {}
    for index, key in enumerate(keys):
        first = first_seen.setdefault(key, index)
        if first != index:
            raise InvalidSpec(where, f"{path}[{index}].{field}", f"duplicate {what} {show(key)} (also {path}[{first}])")


def validate_pod_template(template: Any, where: str, path: str) -> Any:
    """Check a pod template (a PodTemplateSpec) as a role's ``template`` is checked; return it with its
    null fields pruned, as the API server stores it."""
    schema = {**spec_schema()["properties"]["roles"]["items"]["properties"]["template"], "required": ["spec"]}
    check(where, path, schema, template)
    pruned = prune_nulls(schema, template)
    check_pods_of(pruned, where, path)
    return pruned


def check_pods_of(template: Mapping[str, Any], where: str, path: str) -> None:
    """What the API server refuses of the pods a template makes, though it takes the template: its
    labels and annotations are checked as a pod's (a LeaderWorkerSet's template is not checked, and
    then every StatefulSet and pod made from it is refused), and every container needs an image."""
    check_labels_and_annotations(where, f"{path}.metadata", template.get("metadata") or {})
    spec = template.get("spec") or {}
    for field in ("initContainers", "containers"):
        for index, container in enumerate(spec.get(field) or []):
            if not container.get("image"):
                raise InvalidSpec(where, f"{path}.spec.{field}[{index}].image",
                                  "is required: Kubernetes runs no container without an image (a template may "
                                  "leave it out; every pod made from it would be refused)")


def validate_spec(spec: Any, where: str) -> Any:
    """Raise InvalidSpec for the first schema violation in ``spec``, in document order; return it with
    its null fields pruned, as the API server stores it."""
    check(where, "spec", spec_schema(), spec)
    return prune_nulls(spec_schema(), spec)


def check(where: str, path: str, schema: Mapping[str, Any], value: Any) -> None:
    """InvalidSpec at PATH + the violation's own path for the first violation of SCHEMA by VALUE."""
    error = first_error(schema, value)
    if error is not None:
        sub_path, message = error
        raise InvalidSpec(where, format_path([path, *sub_path]) if path else format_path(sub_path), message)


def prune_nulls(schema: Mapping[str, Any], value: Any) -> Any:
    """VALUE without the null fields the API server prunes (those of the schema's properties that are
    not nullable)."""
    schema = form_of(schema, value)
    if isinstance(value, dict):
        properties: Mapping[str, Any] = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        out = {}
        for key, item in value.items():
            sub = properties.get(key, extra if isinstance(extra, Mapping) else None)
            if sub is None:
                out[key] = item
            elif item is not None or sub.get("nullable") or key not in properties:
                out[key] = prune_nulls(sub, item)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [prune_nulls(schema["items"], item) for item in value]
    return value


def form_of(schema: Mapping[str, Any], value: Any) -> Mapping[str, Any]:
    """Of a field of several forms (``anyOf``), the form of VALUE's type; else SCHEMA itself."""
    forms: list[Mapping[str, Any]] = schema.get("anyOf", [])
    for form in forms:
        if "type" in form and _is_type(value, form["type"]):
            return form
    return schema


def check_keywords(schema: Mapping[str, Any]) -> None:
    """Refuse a schema that uses a keyword this validator does not implement (tests run it over every
    schema the package ships)."""
    unsupported = sorted(set(_keywords(schema)) - KEYWORDS)
    if unsupported:
        raise ValueError(f"schema uses keywords this validator does not implement: {unsupported}")


def _keywords(schema: Mapping[str, Any]) -> Iterator[str]:
    yield from schema
    for sub in schema.get("properties", {}).values():
        yield from _keywords(sub)
    for key in ("items", "additionalProperties", "not"):
        if isinstance(schema.get(key), Mapping):
            yield from _keywords(schema[key])
    for key in ("anyOf", "oneOf"):
        for alternative in schema.get(key, ()):
            yield from _keywords(alternative)


def first_error(schema: Mapping[str, Any], value: Any, path: Path = ()) -> tuple[Path, str] | None:
    alternatives: list[Mapping[str, Any]] | None = schema.get("anyOf")
    if alternatives:
        errors = [first_error(alternative, value, path) for alternative in alternatives]
        if all(errors):
            form = form_of(schema, value)
            if form is not schema:
                return errors[alternatives.index(form)]  # the form of the value's type says best what is wrong
            kinds = " or ".join(str(alternative.get("type", "the schema")) for alternative in alternatives)
            return path, f"must be of type {kinds}, got {_type_name(value)}"
    if "oneOf" in schema:
        matching = sum(first_error(alternative, value, path) is None for alternative in schema["oneOf"])
        if matching != 1:
            return path, f"must match exactly one of {len(schema['oneOf'])} forms, matches {matching}"
    if "not" in schema and first_error(schema["not"], value, path) is None:
        return path, "is not allowed here"
    expected = schema.get("type")
    if expected is not None and not _is_type(value, expected) and not (value is None and schema.get("nullable")):
        return path, f"must be of type {expected}, got {_type_name(value)}"
    if isinstance(value, dict):
        error = _object_error(schema, value, path)
    elif isinstance(value, list):
        error = _array_error(schema, value, path)
    else:
        error = _scalar_error(schema, value, path)
    if error is None and RULES in schema:
        # The API server runs a field's rules once its own schema holds, on the field as stored: nulls
        # pruned, defaults applied.
        failed = failed_rule(schema[RULES], defaulted(schema, value))
        if failed is not None:
            return (*path, *failed[0]), failed[1]
    return error


def defaulted(schema: Mapping[str, Any], value: Any) -> Any:
    """VALUE as the API server stores it: null fields pruned (``prune_nulls``) and every absent field the
    schema gives a ``default`` set to it, at every depth."""
    return _with_defaults(schema, prune_nulls(schema, value))


def _with_defaults(schema: Mapping[str, Any], value: Any) -> Any:
    if isinstance(value, dict):
        properties: Mapping[str, Any] = schema.get("properties", {})
        result = {name: _with_defaults(properties[name], item) if name in properties else item
                  for name, item in value.items()}
        for name, sub in properties.items():
            if name not in result and "default" in sub:
                result[name] = _with_defaults(sub, sub["default"])
        return result
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [_with_defaults(schema["items"], item) for item in value]
    return value


def _object_error(schema: Mapping[str, Any], value: dict[str, Any], path: Path) -> tuple[Path, str] | None:
    properties: Mapping[str, Any] = schema.get("properties", {})
    for name in schema.get("required", ()):
        if value.get(name) is None and not (name in value and properties.get(name, {}).get("nullable")):
            return (*path, name), "is required"
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        return path, f"must have at least {schema['minProperties']} field(s), got {len(value)}"
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        return path, f"must have at most {schema['maxProperties']} field(s), got {len(value)}"
    extra = schema.get("additionalProperties", True)
    for name in sorted(key for key in value if key not in properties):
        if extra is False:
            return (*path, name), f"unknown field (allowed: {', '.join(sorted(properties))})"
        if isinstance(extra, Mapping) and (error := first_error(extra, value[name], (*path, name))):
            return error
    for name, sub in properties.items():
        item = value.get(name)
        if item is None and not sub.get("nullable"):
            continue  # absent, or pruned by the API server
        if error := first_error(sub, item, (*path, name)):
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
    return _list_type_error(schema, value, path)


def _list_type_error(schema: Mapping[str, Any], value: list[Any], path: Path) -> tuple[Path, str] | None:
    """Kubernetes' list types: a set holds no item twice, a map no two items with the same keys."""
    list_type = schema.get("x-kubernetes-list-type")
    if list_type not in ("set", "map"):
        return None
    keys = schema.get("x-kubernetes-list-map-keys", ())
    defaults = {key: (schema.get("items") or {}).get("properties", {}).get(key, {}).get("default") for key in keys}
    seen: dict[str, int] = {}
    for index, item in enumerate(value):
        identity = item if list_type == "set" else {key: item.get(key, defaults[key]) for key in keys}
        text = repr(identity)  # the same items (by the same keys, in order) have the same text
        if text in seen:
            what = "item" if list_type == "set" else "item with " + ", ".join(
                f"{key} {show(identity[key])}" for key in keys)
            return (*path, index), f"duplicate {what} (also [{seen[text]}])"
        seen[text] = index
    return None


def _scalar_error(schema: Mapping[str, Any], value: Any, path: Path) -> tuple[Path, str] | None:
    if "enum" in schema and value not in schema["enum"]:
        return path, f"must be one of {', '.join(map(str, schema['enum']))}, got {show(value)}"
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        low, high = _INTEGER_RANGES.get(schema.get("format", ""), (None, None))
        minimum, maximum = schema.get("minimum", low), schema.get("maximum", high)
        if minimum is not None and value < minimum:
            return path, f"must be >= {minimum}, got {show(value)}"
        if maximum is not None and value > maximum:
            return path, f"must be <= {maximum}, got {show(value)}"
        return None
    if isinstance(value, str):
        return _string_error(schema, value, path)
    return None


def _string_error(schema: Mapping[str, Any], value: str, path: Path) -> tuple[Path, str] | None:
    if "minLength" in schema and len(value) < schema["minLength"]:
        return path, f"must be at least {schema['minLength']} characters long, got {len(value)}"
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        return path, f"must be at most {schema['maxLength']} characters long, got {len(value)}"
    pattern = schema.get("pattern")
    if pattern is not None and not _matches(pattern, value):
        friendly = _FRIENDLY_PATTERNS.get(pattern) or _source_words(pattern)
        wanted = f"be {friendly}" if friendly else f"match {pattern}"
        return path, f"must {wanted}, got {show(value)}"
    return _format_error(schema.get("format"), value, path)


def _format_error(form: str | None, value: str, path: Path) -> tuple[Path, str] | None:
    if form == "date-time" and not re.fullmatch(_DATE_TIME, value):
        return path, f"must be an RFC 3339 date-time, got {show(value)}"
    if form in ("ipv4", "ipv6"):
        import ipaddress  # rare: only a Gateway's addresses have it

        try:
            address = ipaddress.ip_address(value)
        except ValueError:
            address = None
        if address is None or address.version != int(form[-1]):
            return path, f"must be an {form.upper()} address, got {show(value)}"
    return None


def _source_words(pattern: str) -> str | None:
    """The weights sources' pattern (spec.model.source, adapters', a role's), in words: the forms and an example
    of each, where a wrong one is refused."""
    model = spec_schema()["properties"]["model"]["properties"]["source"]
    if pattern != model.get("pattern"):
        return None
    return ("a weights source in one of three forms: hf://ORG/NAME (a Hugging Face model, e.g. hf://Qwen/Qwen3-8B), "
            "s3://BUCKET/PATH (e.g. s3://models/qwen3-8b) or pvc://CLAIM/PATH (e.g. pvc://models/qwen3-8b)")


def _matches(pattern: str, value: str) -> bool:
    """Whether VALUE matches PATTERN as Go's regexp (the API server's) matches it: ``$`` is the end of the
    text, not a final line break. The two patterns met in every render are checked without compiling."""
    check = _PATTERN_CHECKS.get(pattern)
    if check is not None:
        return check(value)
    return _compiled(pattern).search(value) is not None


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def is_quantity_text(text: str) -> bool:
    """Whether TEXT matches QUANTITY_PATTERN."""
    end = _number(text, 1 if text[:1] in ("+", "-") else 0)
    if end < 0:
        return False
    suffix = text[end:]
    if suffix in _QUANTITY_SUFFIXES:
        return True
    start = 2 if suffix[1:2] in ("+", "-") else 1
    return suffix[:1] in ("e", "E") and _number(suffix, start) == len(suffix)


_QUANTITY_SUFFIXES = frozenset({"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"})


def _number(text: str, start: int) -> int:
    """Where ``[0-9]+(\\.[0-9]*)?|\\.[0-9]+`` starting at START ends (the longest), or -1."""
    end = start
    while end < len(text) and text[end] in _DIGITS:
        end += 1
    digits = end > start
    if end < len(text) and text[end] == ".":
        end += 1
        fraction = end
        while end < len(text) and text[end] in _DIGITS:
            end += 1
        if not digits and end == fraction:
            return -1
    elif not digits:
        return -1
    return end


_PATTERN_CHECKS = {QUANTITY_PATTERN: is_quantity_text, DNS_LABEL_PATTERN: is_dns_label}


def _is_type(value: Any, expected: str) -> bool:
    # JSON has no booleans among its numbers, though Python's bool is an int.
    return isinstance(value, _TYPES[expected]) and not (isinstance(value, bool) and expected != "boolean")


def _type_name(value: Any) -> str:
    return next((name for name, types in _TYPES.items() if _is_type(value, name)), type(value).__name__)
