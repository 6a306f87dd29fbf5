"""Writes the artifacts derived from the API's schema source: the CRD and the chart's values schema.

    python -m fusion_helm.schemagen [--check] [CHART_DIR]

``--check`` writes nothing and exits 1 if an artifact differs from what the source gives.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from fusion_helm.kio import dump
from fusion_helm.model.schema import DRAFT_07, SOURCE, api_source, spec_schema

HEADER = f"# Generated from fusion_helm/model/schemas/{SOURCE} by `make generate`; do not edit.\n"


def crd() -> dict[str, Any]:
    api = api_source()
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


def values_schema() -> dict[str, Any]:
    """The chart's values are the InferenceService spec plus the chart's own settings."""
    spec = spec_schema()
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


def artifacts(chart: Path) -> dict[Path, str]:
    return {
        chart / "crds" / f"{api_source()['group']}_{api_source()['plural']}.yaml": HEADER + dump(crd()),
        chart / "values.schema.json": json.dumps(values_schema(), indent=2) + "\n",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusion_helm.schemagen", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("chart", nargs="?", default="charts/fusioninfer", type=Path)
    parser.add_argument("--check", action="store_true", help="fail if an artifact is out of date")
    args = parser.parse_args(argv)
    stale = []
    for path, text in artifacts(args.chart).items():
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
