"""Writes the artifacts derived from schema sources: from the API's, the CRD and the chart's values
schema; from the upstream CRDs (``../shared/crds``, or ``$FUSION_SHARED_CRDS``; a few from release
sources or Go modules, below), the schemas the package validates what it writes against. (Each chart's
copy of the modules its programs run: ci/chart_copies.py.)

    python -m fusion_helm.schemagen [--check] [CHART_DIR]

``--check`` writes nothing and exits 1 if an artifact differs from what the sources give.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import pprint
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import yaml

from fusion_helm.base.kinds import (
    CERTIFICATE,
    DEFAULT_LAYOUT,
    DISAGGREGATED_SET,
    GATEWAY,
    HTTP_ROUTE,
    LEADER_WORKER_SET,
    POD_GROUP,
    POD_MONITOR,
    SCALED_OBJECT,
    TRIGGER_AUTHENTICATION,
    inference_pool,
)
from fusion_helm.base.needs import PICKERS, POOL_V1, POOL_V1ALPHA2, PREFILL_DECODE
from fusion_helm.kio.write import dump
from fusion_helm.model.component_types import ComponentType
from fusion_helm.model.inference_service import Layout
from fusion_helm.model.schema import (
    DRAFT_07,
    SOURCE,
    api_source,
    draft07_spec,
    spec_schema,
    to_draft07,
    to_structural,
)

UPSTREAM_KINDS = tuple((kind.api_version, kind.kind) for kind in (
    LEADER_WORKER_SET, DISAGGREGATED_SET, POD_GROUP, GATEWAY, HTTP_ROUTE,
    *(inference_pool(api) for api in (POOL_V1, POOL_V1ALPHA2)),
    *dict.fromkeys(reads.model for reads in PICKERS.values()),  # each once: generations share model kinds
    *dict.fromkeys(reads.rewrite for reads in PICKERS.values() if reads.rewrite is not None),
    POD_MONITOR, CERTIFICATE, SCALED_OBJECT, TRIGGER_AUTHENTICATION))
"""Every kind the expansion writes or takes over, at the versions it uses."""
VENDORED_CRDS = {"LLMD_ROUTER": "config/crd/bases/llm-d.ai_inferenceobjectives.yaml"}
"""CRDs of kinds we write that ../shared/crds lacks, read from the release sources in ../shared/vendor
(``<release>-<version>.tar.gz``, its version and sha256 as ci/cluster/versions.env pins them): the
key names the release there (``LLMD_ROUTER_VERSION``, ``LLMD_ROUTER_SHA256``)."""
VENDORED_RELEASES = {"LLMD_ROUTER": "llm-d-router"}
MODULE_CRDS = {"CERT_MANAGER": ("github.com/cert-manager/cert-manager",
                                "deploy/crds/cert-manager.io_certificates.yaml")}
"""CRDs of kinds we write that neither ../shared/crds nor ../shared/vendor holds, read from their release's
Go module at the version ci/cluster/versions.env pins (``<KEY>_VERSION``): `go mod download` fetches it
from the Go module proxy into Go's module cache, checked against the checksum database."""

HEADER = f"# Generated from fusion_helm/model/schemas/{SOURCE} by `make generate`; do not edit.\n"


def crd(api: dict[str, Any] | None = None) -> dict[str, Any]:
    api = api or api_source()
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        # Kept when the chart that installs it is uninstalled: every release's InferenceService would go.
        "metadata": {"name": f"{api['plural']}.{api['group']}", "annotations": {"helm.sh/resource-policy": "keep"}},
        "spec": {
            "group": api["group"],
            "names": {
                "kind": api["kind"],
                "listKind": f"{api['kind']}List",
                "plural": api["plural"],
                "singular": api["singular"],
                "shortNames": api["shortNames"],
            },
            "scope": "Namespaced",
            "versions": [{
                "name": api["version"],
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "additionalPrinterColumns": api["printerColumns"],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "description": f"{api['kind']} declares an LLM serving topology of roles.",
                    "required": ["spec"],
                    "properties": {
                        "apiVersion": {"type": "string"},
                        "kind": {"type": "string"},
                        "metadata": {"type": "object"},
                        "spec": to_structural(api["spec"]),
                        "status": api["status"],
                    },
                }},
            }],
        },
    }


def object_schema(api: dict[str, Any] | None = None) -> dict[str, Any]:
    """The whole InferenceService as a draft-07 JSON schema, for validators of rendered manifests such as
    kubeconform: the spec as the post-renderer validates it (unknown fields refused, a template's fields
    left to the pod's own schema), where a converter of the CRD's OpenAPI schema would close every
    object, the pod templates the CRD leaves open included."""
    api = api or api_source()
    spec = draft07_spec(api)
    del spec["$schema"]
    return {
        "$schema": DRAFT_07,
        "title": f"{api['kind']} {api['group']}/{api['version']}",
        "description": f"{api['kind']} declares an LLM serving topology of roles (generated from {SOURCE}).",
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "additionalProperties": False,
        "properties": {
            "apiVersion": {"type": "string", "enum": [f"{api['group']}/{api['version']}"]},
            "kind": {"type": "string", "enum": [api["kind"]]},
            "metadata": {"type": "object"},
            "spec": spec,
            "status": {"type": "object"},
        },
    }


def object_schema_path(api: dict[str, Any]) -> Path:
    """Where the CRD's chart holds it, as kubeconform's schema locations name a schema:
    ``{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json``."""
    return Path("schemas", str(api["group"]), f"{api['kind'].lower()}_{api['version']}.json")


def values_schema(api: dict[str, Any] | None = None) -> dict[str, Any]:
    """The chart's values are the InferenceService spec plus the chart's own settings."""
    spec = forms_apart(spec_schema() if api is None else draft07_spec(api))
    return {
        "$schema": DRAFT_07,
        "title": "fusioninfer chart values",
        "type": "object",
        "additionalProperties": False,
        "required": spec["required"],
        "properties": {
            "name": {
                "type": "string",
                "description": "Name of the InferenceService; empty for the release name.",
                "maxLength": 63,
                "pattern": "^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$",
            },
            **spec["properties"],
            "allowRoleRemoval": {
                "type": "array",
                "description": "Roles helm upgrade may remove, or change the componentType of: every replica of "
                               "such a role is deleted or restarted. Without it the chart refuses.",
                "items": {"type": "string"},
            },
            "allowLayoutChange": {
                "type": "boolean",
                "description": "Let helm upgrade change spec.layout: every LeaderWorkerSet is replaced and every "
                               "pod restarts. Without it the chart refuses.",
            },
            "hooks": {
                "type": "object",
                "description": "Helm hook Jobs: prerequisite checks before, status after install and upgrade.",
                "additionalProperties": False,
                "properties": {
                    "enabled": {"type": "boolean"},
                    "image": {"type": "string", "minLength": 1, "description": "A stock Python 3.11+ image."},
                    "statusWaitSeconds": {"type": "integer", "minimum": 0},
                    "ttlSecondsAfterFinished": {"type": "integer", "minimum": 0},
                    "podAnnotations": {"type": "object", "additionalProperties": {"type": "string"}},
                    "lwsConfig": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {"namespace": {"type": "string", "minLength": 1},
                                       "name": {"type": "string", "minLength": 1}},
                    },
                },
            },
            "global": {"type": "object"},
        },
        "allOf": [_ROUTED_PREFILL_DECODE_LAYOUTS],
    }


def forms_apart(node: Any) -> Any:
    """NODE with each pattern of alternative forms, ``^(A|B|C)$``, given as one pattern a form (anyOf): helm
    shows the pattern a value does not match, and three short ones say which forms there are where one long one
    does not (a weights source's hf://, pvc:// and s3://)."""
    if isinstance(node, list):
        return [forms_apart(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: forms_apart(value) for key, value in node.items()}
    forms = _alternatives(node.get("pattern", ""))
    if len(forms) > 1:
        del node["pattern"]
        node["anyOf"] = [{"pattern": f"^{form}$"} for form in forms]
    return node


def _alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of a pattern written ``^(A|B|…)$``; [] for any other."""
    if not (pattern.startswith("^(") and pattern.endswith(")$")):
        return []
    body, forms, depth, start = pattern[2:-2], [], 0, 0
    for index, char in enumerate(body):
        escaped = index > 0 and body[index - 1] == "\\"
        if char in "([" and not escaped:
            depth += 1
        elif char in ")]" and not escaped:
            depth -= 1
        elif char == "|" and depth == 0 and not escaped:
            forms.append(body[start:index])
            start = index + 1
    return [*forms, body[start:]] if depth == 0 and forms else []


_ROUTED_PREFILL_DECODE_LAYOUTS = {
    "$comment": "The role layout rolls prefill and decode apart, so a router would pair a prefill and a decode "
                "of different revisions; the post-renderer refuses it too, and helm here before it renders.",
    "if": {
        "required": ["layout", "roles"],
        "properties": {"roles": {"allOf": [
            {"contains": {"required": ["componentType"], "properties": {"componentType": {"const": kind}}}}
            for kind in sorted({ComponentType.ROUTER, *PREFILL_DECODE})
        ]}},
    },
    "then": {"properties": {"layout": {"enum": [layout.value for layout in Layout if layout is not Layout.ROLE]}}},
}


def upstream_crds(crds: Path | None = None, vendor: Path | None = None) -> list[dict[str, Any]]:
    """The upstream CRDs: every one in ../shared/crds, and VENDORED_CRDS out of their release sources
    (each tarball checked against its pinned sha256 first)."""
    crds, vendor = crds or shared_crds(), vendor or shared_vendor()
    texts = [path.read_bytes() for path in sorted(crds.glob("*.yaml"))]
    pins = dict(line.split("=", 1) for line in VERSIONS.read_text().split() if "=" in line and line[0] != "#")
    for release, member in VENDORED_CRDS.items():
        name = f"{VENDORED_RELEASES[release]}-{pins[release + '_VERSION']}"
        tarball = vendor / f"{name}.tar.gz"
        data = tarball.read_bytes()
        if hashlib.sha256(data).hexdigest() != pins[release + "_SHA256"]:
            raise SystemExit(f"{tarball}: not the sha256 {VERSIONS} pins")
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            extracted = archive.extractfile(f"{name}/{member}")
            assert extracted is not None, member
            texts.append(extracted.read())
    for release, (module, member) in MODULE_CRDS.items():
        texts.append(module_file(module, pins[release + "_VERSION"], member))
    return [yaml.load(text.decode("utf-8"), Loader=yaml.CSafeLoader) for text in texts]


def module_file(module: str, version: str, member: str) -> bytes:
    """MEMBER of Go module MODULE at VERSION, from Go's module cache (downloaded into it first if absent)."""
    assert module == module.lower(), "the module cache escapes upper-case letters: not done here"
    cache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    path = Path(cache) / f"{module}@{version}" / member
    if not path.is_file():
        done = subprocess.run(["go", "mod", "download", f"{module}@{version}"], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"go mod download {module}@{version} failed: {done.stderr.strip()}")
    return path.read_bytes()


def upstream_schemas(crds: list[dict[str, Any]]) -> dict[str, Any]:
    """``"<apiVersion> <kind>"`` → the structural schema of that CRD version, as the validator reads it."""
    found = {}
    for crd in crds:
        spec = crd["spec"]
        for version in spec["versions"]:
            api_version = f"{spec['group']}/{version['name']}"
            if (api_version, spec["names"]["kind"]) in UPSTREAM_KINDS:
                schema = dict(version["schema"]["openAPIV3Schema"])
                schema["properties"] = {k: v for k, v in schema["properties"].items() if k != "status"}
                found[f"{api_version} {spec['names']['kind']}"] = to_draft07(schema, runtime=True)
    missing = [f"{kind} {version}" for version, kind in UPSTREAM_KINDS if f"{version} {kind}" not in found]
    if missing:
        raise SystemExit(f"{shared_crds()}: no CRD for {', '.join(missing)}")
    return found


PIECE_BYTES = 1500
"""A sub-schema this large becomes a piece of its own, built only when a value needs it."""
GENERATED = '"""Generated from {source} by `make generate` (fusion_helm.schemagen); do not edit."""\n\n'


def python_module(source: str, names: dict[str, tuple[str, Any]]) -> str:
    """A module of NAMES (name → (type, value)), each value written as a Python literal."""
    callable_ = "    from collections.abc import Callable\n" if any("Callable" in a for a, _ in names.values()) else ""
    lines = [GENERATED.format(source=source), "from __future__ import annotations\n\n",
             f"TYPE_CHECKING = False\nif TYPE_CHECKING:\n{callable_}    from typing import Any\n"]
    for name, (annotation, value) in names.items():
        lines.append(f"\n{name}: {annotation} = {value if isinstance(value, str) else _literal(value)}\n")
    return "".join(lines)


def _literal(value: Any) -> str:
    return pprint.pformat(value, width=116, sort_dicts=False)


def api_module(api: dict[str, Any]) -> str:
    return python_module(f"fusion_helm/model/schemas/{SOURCE}", {
        "SOURCE": ("dict[str, Any]", api), "SPEC_SCHEMA": ("dict[str, Any]", draft07_spec(api))})


def upstream_module(schemas: dict[str, Any]) -> str:
    """SCHEMAS cut into pieces, each built only when needed (model/upstream.py): in SCHEMAS and PIECES,
    a piece is ``{"$ref": id}``. Identical sub-schemas (a LeaderWorkerSet's leader and worker templates)
    are one piece."""
    texts: dict[str, Any] = {}
    ids: dict[str, str] = {}

    def cut(node: Any) -> Any:
        if isinstance(node, list):
            return [cut(item) for item in node]
        if not isinstance(node, dict):
            return node
        node = {key: cut(value) for key, value in node.items()}
        text = json.dumps(node, sort_keys=True, separators=(",", ":"))
        if len(text) < PIECE_BYTES:
            return node
        piece = ids.setdefault(text, str(len(ids)))
        texts[piece] = node
        return {"$ref": piece}

    top = {name: cut(schema) for name, schema in sorted(schemas.items())}
    pieces = "{\n" + "".join(f"    {piece!r}: lambda: {_literal(node)},\n".replace("\n", "\n    ").rstrip(" ")
                              for piece, node in texts.items()) + "}"
    return python_module("the upstream CRDs (../shared/crds)", {
        "SCHEMAS": ("dict[str, Any]", top), "PIECES": ("dict[str, Callable[[], dict[str, Any]]]", pieces)})


def shared_crds() -> Path:
    return Path(os.environ.get("FUSION_SHARED_CRDS", Path("..") / "shared" / "crds"))


def shared_vendor() -> Path:
    return Path(os.environ.get("FUSION_SHARED_VENDOR", Path("..") / "shared" / "vendor"))


VERSIONS = Path("ci") / "cluster" / "versions.env"
CRD_CHART = "fusioninfer-crds"
"""The chart of the InferenceService CRD, beside the service chart (docs/lifecycle.md)."""


def served_fields_schema(crd_object: dict[str, Any]) -> dict[str, Any]:
    """The CRD's schema as the chart's check compares the served one with it: types and properties only."""
    def fields(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        kept = {key: fields(value) for key, value in node.items() if key in ("type", "items", "properties")}
        if "properties" in kept:
            kept["properties"] = {name: fields(value) for name, value in node["properties"].items()}
        return kept
    [version] = crd_object["spec"]["versions"]
    return {"version": version["name"], "schema": fields(version["schema"]["openAPIV3Schema"])}


def with_shared_words(api: dict[str, Any]) -> dict[str, Any]:
    """API with the words the schema shares with the code, each written where the code declares it: the
    layouts and their default, the picker generations."""
    layout = api["spec"]["properties"]["layout"]
    generation = api["spec"]["properties"]["roles"]["items"]["properties"]["endpointPicker"]["properties"]["generation"]
    for schema, field in ((layout, "enum"), (layout, "default"), (generation, "enum")):
        assert field not in schema, f"the schema source gives {field} that make generate writes"
    layout.update(enum=[str(layout) for layout in Layout], default=DEFAULT_LAYOUT)
    generation["enum"] = list(PICKERS)
    return api


def artifacts(chart: Path, package: Path) -> dict[Path, str]:
    """What `make generate` writes. The CRD goes into its own chart (CRD_CHART, beside CHART), which a
    cluster installs once; CHART carries its schema for the check that the served one is not older."""
    schemas = package / "model" / "schemas"
    api = with_shared_words(yaml.load((schemas / SOURCE).read_text(encoding="utf-8"), Loader=yaml.CSafeLoader))
    definition = crd(api)
    return {
        package / "model" / "generated" / "api.py": api_module(api),
        chart.parent / CRD_CHART / "templates" / f"{api['group']}_{api['plural']}.yaml": HEADER + dump(definition),
        chart.parent / CRD_CHART / object_schema_path(api): json.dumps(object_schema(api), indent=2) + "\n",
        chart / "files" / "crd-fields.json": json.dumps(served_fields_schema(definition), sort_keys=True) + "\n",
        chart / "values.schema.json": json.dumps(values_schema(api), indent=2) + "\n",
        package / "model" / "generated" / "upstream.py": upstream_module(upstream_schemas(upstream_crds())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusion_helm.schemagen", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("chart", nargs="?", default="charts/fusioninfer", type=Path)
    parser.add_argument("--package", default="fusion_helm", type=Path, help="the package's source directory")
    parser.add_argument("--check", action="store_true", help="fail if an artifact is out of date")
    args = parser.parse_args(argv)
    stale = []
    written = artifacts(args.chart, args.package)
    for path, text in written.items():
        current = path.read_text() if path.exists() else None
        if current == text:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if args.check and stale:
        names = ", ".join(map(str, stale))
        print(f"out of date: {names}; run `make generate`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
