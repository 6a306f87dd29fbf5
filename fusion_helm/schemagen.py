"""Writes the artifacts derived from schema sources: from the API's, the CRD and the chart's values
schema; from the upstream CRDs (``../shared/crds``, or ``$FUSION_SHARED_CRDS``), the schemas the
package validates what it writes against.

    python -m fusion_helm.schemagen [--check] [CHART_DIR]

``--check`` writes nothing and exits 1 if an artifact differs from what the sources give.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from fusion_helm.expand.router.apis import GENERATIONS, required_apis
from fusion_helm.kio.write import dump
from fusion_helm.model import DISAGGREGATED, PoolAPI, Router
from fusion_helm.model.schema import COMPILED, DRAFT_07, SOURCE, api_source, compiled, spec_schema, to_draft07
from fusion_helm.model.upstream import UPSTREAM

UPSTREAM_KINDS = (
    ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"),
    ("scheduling.volcano.sh/v1beta1", "PodGroup"),
    ("gateway.networking.k8s.io/v1", "Gateway"),
    ("gateway.networking.k8s.io/v1", "HTTPRoute"),
    ("inference.networking.k8s.io/v1", "InferencePool"),
    ("inference.networking.x-k8s.io/v1alpha2", "InferencePool"),
    ("inference.networking.x-k8s.io/v1alpha2", "InferenceObjective"),
    ("inference.networking.x-k8s.io/v1alpha2", "InferenceModel"),
)
"""Every kind the expansion writes or takes over, at the versions it uses."""

HEADER = f"# Generated from fusion_helm/model/schemas/{SOURCE} by `make generate`; do not edit.\n"


def crd(api: dict[str, Any] | None = None) -> dict[str, Any]:
    api = api or api_source()
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{api['plural']}.{api['group']}"},
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
                        "spec": api["spec"],
                        "status": api["status"],
                    },
                }},
            }],
        },
    }


def values_schema(api: dict[str, Any] | None = None) -> dict[str, Any]:
    """The chart's values are the InferenceService spec plus the chart's own settings."""
    spec = spec_schema() if api is None else {"$schema": DRAFT_07, **to_draft07(api["spec"])}
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
            "hooks": {
                "type": "object",
                "description": "Helm hook Jobs: prerequisite checks before, status after install and upgrade.",
                "additionalProperties": False,
                "properties": {
                    "enabled": {"type": "boolean"},
                    "image": {"type": "string", "minLength": 1, "description": "A stock Python 3.11+ image."},
                    "statusWaitSeconds": {"type": "integer", "minimum": 0},
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
    }


def upstream_schemas(crds: Path) -> dict[str, Any]:
    """``"<apiVersion> <kind>"`` → the structural schema of that CRD version, as the validator reads it."""
    found = {}
    for path in sorted(crds.glob("*.yaml")):
        crd = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        spec = crd["spec"]
        for version in spec["versions"]:
            api_version = f"{spec['group']}/{version['name']}"
            if (api_version, spec["names"]["kind"]) in UPSTREAM_KINDS:
                schema = dict(version["schema"]["openAPIV3Schema"])
                schema["properties"] = {k: v for k, v in schema["properties"].items() if k != "status"}
                found[f"{api_version} {spec['names']['kind']}"] = to_draft07(schema, runtime=True)
    missing = [f"{kind} {version}" for version, kind in UPSTREAM_KINDS if f"{version} {kind}" not in found]
    if missing:
        raise SystemExit(f"{crds}: no CRD for {', '.join(missing)}")
    return found


def chart_decisions() -> str:
    """What the post-renderer decides that the chart's own checks need to know, as data the chart reads
    (templates/_decisions.tpl), so that the two never decide differently."""
    pools = {api.value: {"objects": required_apis(GENERATIONS[api], serves_models=False),
                         "models": required_apis(GENERATIONS[api], serves_models=True)} for api in PoolAPI}
    table = {"defaultPool": Router.DEFAULT_POOL_API.value, "pools": pools,
             "disaggregated": sorted(str(kind) for kind in DISAGGREGATED)}
    return ("{{/* Generated from fusion_helm by `make generate`; do not edit. What the post-renderer decides "
            "and the chart's checks need, as data: the APIs each pool API's router writes, the prefill/decode "
            "component types. */}}\n"
            "{{- define \"fusioninfer.decisions\" -}}\n" + json.dumps(table, sort_keys=True) + "\n{{- end -}}\n")


PIECE_BYTES = 1500
"""A sub-schema this large becomes a piece of its own, parsed only when a value needs it."""


def pieces(schemas: dict[str, Any]) -> str:
    """SCHEMAS cut into pieces, each read only when needed (model/upstream.py): a JSON header line
    ({"schemas": …, "pieces": {id: [start, end]}}), then the pieces' JSON texts, in which a piece is
    ``{"$ref": id}``. Identical sub-schemas (a LeaderWorkerSet's leader and worker templates) are one."""
    texts: dict[str, str] = {}
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
        texts[piece] = text
        return {"$ref": piece}

    top = {name: cut(schema) for name, schema in sorted(schemas.items())}
    offsets, body, at = {}, [], 0
    for piece, text in texts.items():
        offsets[piece] = [at, at + len(text)]
        body.append(text)
        at += len(text)
    header = json.dumps({"schemas": top, "pieces": offsets}, sort_keys=True, separators=(",", ":"))
    return header + "\n" + "".join(body) + "\n"


def shared_crds() -> Path:
    return Path(os.environ.get("FUSION_SHARED_CRDS", Path("..") / "shared" / "crds"))


def artifacts(chart: Path, package: Path) -> dict[Path, str]:
    schemas = package / "model" / "schemas"
    api = yaml.load((schemas / SOURCE).read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    return {
        schemas / COMPILED: json.dumps(compiled(api), indent=1, sort_keys=True) + "\n",
        chart / "crds" / f"{api['group']}_{api['plural']}.yaml": HEADER + dump(crd(api)),
        chart / "values.schema.json": json.dumps(values_schema(api), indent=2) + "\n",
        chart / "templates" / "_decisions.tpl": chart_decisions(),
        package / "model" / "schemas" / UPSTREAM: pieces(upstream_schemas(shared_crds())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusion_helm.schemagen", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("chart", nargs="?", default="charts/fusioninfer", type=Path)
    parser.add_argument("--package", default="fusion_helm", type=Path, help="the package's source directory")
    parser.add_argument("--check", action="store_true", help="fail if an artifact is out of date")
    args = parser.parse_args(argv)
    stale = []
    for path, text in artifacts(args.chart, args.package).items():
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
