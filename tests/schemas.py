"""Strict validation against the real CRD schemas: the upstream ones in shared/crds and our own, with
unknown fields made errors, as an API server with strict field validation (Helm 4's default) does.
(CEL rules are not checked here; the cluster tests' API server checks them.)"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema

from fusion_helm.model.schema import to_draft07
from fusion_helm.model.validation import form_of
from fusion_helm.schemagen import crd as our_crd


def strict_validator(openapi_schema: dict[str, Any]) -> jsonschema.Draft7Validator:
    """jsonschema over the CRD's structural schema, with unknown fields made errors."""
    schema = to_draft07(openapi_schema)
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


class Validators:
    """A validator per (apiVersion, kind), built on first use."""

    def __init__(self, upstream: Mapping[tuple[str, str], dict[str, Any]]) -> None:
        ours = our_crd()["spec"]
        self.schemas = {**upstream, **{(f"{ours['group']}/{v['name']}", ours["names"]["kind"]):
                                       v["schema"]["openAPIV3Schema"] for v in ours["versions"]}}
        self.cache: dict[tuple[str, str], jsonschema.Draft7Validator] = {}

    def __call__(self, api_version: str, kind: str) -> jsonschema.Draft7Validator:
        key = (api_version, kind)
        if key not in self.cache:
            assert key in self.schemas, f"no upstream schema for {kind} {api_version}"
            self.cache[key] = strict_validator(self.schemas[key])
        return self.cache[key]


def errors(validator: jsonschema.Draft7Validator, obj: dict[str, Any]) -> list[str]:
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(obj)]


BUILT_IN = {("v1", "ServiceAccount"), ("v1", "ConfigMap"), ("v1", "Service"), ("apps/v1", "Deployment"),
            ("rbac.authorization.k8s.io/v1", "Role"), ("rbac.authorization.k8s.io/v1", "RoleBinding"),
            ("networking.k8s.io/v1", "NetworkPolicy"), ("policy/v1", "PodDisruptionBudget"),
            ("v1", "PersistentVolumeClaim"), ("batch/v1", "Job")}
"""Kubernetes' own kinds: no CRD schema; the cluster tests' API server validates them."""


def custom_resource_errors(validators: Validators, objects: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Every object of a custom kind against its CRD schema: kind/name → errors (only those with some)."""
    found = {}
    for obj in objects:
        if (obj["apiVersion"], obj["kind"]) in BUILT_IN:
            continue
        problems = errors(validators(obj["apiVersion"], obj["kind"]), obj)
        if problems:
            found[f"{obj['kind']}/{obj['metadata']['name']}"] = problems
    return found


def prune_nulls(schema: Any, value: Any) -> Any:
    """VALUE as the API server validates it: a null field of the schema's properties is pruned unless
    the schema says it is nullable (the reference validator, jsonschema, knows nothing of that)."""
    if isinstance(schema, dict):
        schema = form_of(schema, value)
    if isinstance(value, dict) and isinstance(schema, dict):
        properties = schema.get("properties", {})
        return {key: prune_nulls(properties.get(key, schema.get("additionalProperties")), item)
                for key, item in value.items()
                if not (item is None and key in properties and not properties[key].get("nullable"))}
    if isinstance(value, list) and isinstance(schema, dict):
        return [prune_nulls(schema.get("items"), item) for item in value]
    return value
