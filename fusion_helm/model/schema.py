"""Loads the API's schema source and derives the draft-07 JSON Schema from it.

The source is an OpenAPI v3 *structural* schema (what a CRD carries). JSON Schema draft-07 is what
Helm validates values with and what the post-renderer validates InferenceServices with; the two
dialects differ only in a few Kubernetes extensions, translated here.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SOURCE = "inferenceservice.v1alpha1.yaml"
"""The schema source, in schemas/; `make generate` writes it as Python (generated/api.py), which the
post-renderer reads on every run: far faster than YAML."""
DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def api_source() -> dict[str, Any]:
    """The schema source: group, names, printer columns and the spec/status schemas."""
    from fusion_helm.model.generated.api import SOURCE as source

    return source


def draft07_spec(source: dict[str, Any]) -> dict[str, Any]:
    """The draft-07 schema of the spec of the schema source SOURCE."""
    return {"$schema": DRAFT_07, **to_draft07(source["spec"])}


RUNTIME_DROPPED = frozenset({"description", "example", "x-kubernetes-map-type"})
"""What the run-time validator does not read: documentation."""
RUNTIME_KEPT = frozenset({"x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-validations"})
RULE_KEYS = ("rule", "message", "fieldPath")
"""What the run-time validator reads of a CEL rule (model/cel.py)."""
RUNTIME_FORMATS = frozenset({"int32", "int64", "date-time", "ipv4", "ipv6"})


def to_draft07(node: Any, runtime: bool = False) -> Any:
    """Translate a structural schema into JSON Schema draft-07 that rejects unknown fields.

    An object with ``properties`` and without ``x-kubernetes-preserve-unknown-fields`` gets
    ``additionalProperties: false``: the API server prunes such fields or, with strict field
    validation, rejects them, so they must not pass here silently. For the RUNTIME validator
    (model/validation.py), documentation and CEL rules are left out and the Kubernetes list types and
    the formats it checks kept.
    """
    if isinstance(node, list):
        return [to_draft07(item, runtime) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if (key.startswith("x-kubernetes-") and not (runtime and key in RUNTIME_KEPT)) \
                or (runtime and key in RUNTIME_DROPPED):
            continue
        if key == "x-kubernetes-validations":
            # Transition rules (oldSelf) judge an update against its past: none applies to a render.
            rules = [{name: rule[name] for name in RULE_KEYS if name in rule} for rule in value
                     if "oldSelf" not in rule["rule"]]
            if rules:
                out[key] = rules
        elif key in ("properties", "definitions"):
            out[key] = {name: to_draft07(sub, runtime) for name, sub in value.items()}
        elif key == "format" and (value not in RUNTIME_FORMATS if runtime else value in ("int32", "int64")):
            continue
        else:
            out[key] = to_draft07(value, runtime)
    if node.get("x-kubernetes-int-or-string") and "anyOf" not in out:
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if (
        node.get("type") == "object"
        and "properties" in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
        and "additionalProperties" not in node
    ):
        out["additionalProperties"] = False
    return out


def to_structural(node: Any) -> Any:
    """The CRD's form of the schema source. A structural schema cannot say that a field takes several
    types (``anyOf`` of typed forms), and CEL cannot see an untyped field: the CRD keeps such a field's
    value as given, and the draft-07 schemas (the chart's values, the post-renderer) check its forms."""
    if isinstance(node, list):
        return [to_structural(item) for item in node]
    if not isinstance(node, dict):
        return node
    forms = node.get("anyOf")
    if forms and "type" not in node and not node.get("x-kubernetes-int-or-string") \
            and all("type" in form for form in forms):
        return {**{key: value for key, value in node.items() if key != "anyOf"},
                "x-kubernetes-preserve-unknown-fields": True}
    return {key: to_structural(value) for key, value in node.items()}


def spec_schema() -> dict[str, Any]:
    """Draft-07 schema of ``InferenceService.spec``."""
    from fusion_helm.model.generated.api import SPEC_SCHEMA

    return SPEC_SCHEMA
