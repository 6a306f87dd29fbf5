"""Write each chart's README.md (what `helm show readme` prints and Artifact Hub shows) from its
README.md.in and the comments in its values.yaml, helm-docs style: every top-level value, and every
value of a top-level map, must be documented by the comment block above it, or this fails naming it.

`--check` fails when a README is out of date or a value undocumented (`make lint`); without it,
writes them (`make generate`).
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
CHARTS = ("fusioninfer", "fusioninfer-crds")
TEMPLATE = "README.md.in"
VALUES_TABLE = "{{ values }}"
KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][A-Za-z0-9_]*):")
IMPLICIT = frozenset({"global"})
"""Values Helm itself gives every chart."""
MAX_INLINE_DEFAULT = 60
"""A longer default is left to values.yaml, which the table points to."""


class Undocumented(Exception):
    pass


def documented_values(values_text: str, where: str) -> Iterator[tuple[str, str]]:
    """(dotted key, its comment) for each value at depth one or two, in file order; Undocumented names
    the first without a comment above it."""
    comment: list[str] = []
    parents: list[str] = []
    for line in values_text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            comment.append(stripped[1:].removeprefix(" "))
            continue
        match = KEY.match(line)
        if match is None or len(match["indent"]) > 2:
            comment = []
            continue
        depth = len(match["indent"]) // 2
        parents = [*parents[:depth], match["key"]]
        key = ".".join(parents)
        text = as_cell([line.removeprefix("-- ") if i == 0 else line for i, line in enumerate(comment)])
        comment = []
        if not text:
            raise Undocumented(f"{where}: {key} has no comment above it; document it (helm-docs style: "
                               f"'# -- what it does' for a top-level value, '# what it does' under one)")
        yield key, text


def as_cell(lines: list[str]) -> str:
    """A comment block as one table cell: its prose joined, each run of indented lines (an example)
    kept as code, line by line."""
    cell: list[str] = []
    example: list[str] = []
    for line in [*lines, ""]:
        if line.startswith(" "):
            example.append(line)
            continue
        if example:
            indent = min(len(text) - len(text.lstrip()) for text in example)
            code = "<br>".join(html.escape(text[indent:]).replace(" ", "&nbsp;") for text in example)
            cell.append(f"<br><code>{code}</code><br>")
            example = []
        cell.append(line.strip())
    return " ".join(part for part in cell if part).replace("|", "&#124;").replace("<br> ", "<br>")


def value_at(values: dict[str, Any], key: str) -> Any:
    node: Any = values
    for part in key.split("."):
        node = node[part]
    return node


def type_of(value: Any) -> str:
    return {bool: "bool", int: "int", float: "float", str: "string", list: "list", dict: "object",
            type(None): "null"}[type(value)]


def default_of(value: Any) -> str:
    text = json.dumps(value, separators=(", ", ": "))
    return f"`{text}`" if len(text) <= MAX_INLINE_DEFAULT else "see `values.yaml`"


def schema_rows(chart: Path, documented: set[str]) -> Iterator[str]:
    """A row for each value values.schema.json declares and values.yaml does not show: the top-level
    ones (`layout`) and each role's fields (`roles[].autoscaling`), described by the schema."""
    path = chart / "values.schema.json"
    if not path.exists():
        return
    schema = json.loads(path.read_text())
    roles = schema["properties"].get("roles", {}).get("items", {}).get("properties", {})
    fields = [(key, node) for key, node in schema["properties"].items() if key not in documented | IMPLICIT]
    fields += [(f"roles[].{key}", node) for key, node in roles.items()]
    for key, node in fields:
        default = f"`{json.dumps(node['default'])}`" if "default" in node else "—"
        description = " ".join(node.get("description", "").split()).replace("|", "&#124;")
        yield f"| `{key}` | {schema_type(node)} | {default} | {description} |"


def schema_type(node: dict[str, Any]) -> str:
    """A schema's type as the table writes it: ``string or object`` for a oneOf of the two."""
    if "type" in node:
        return node["type"] if isinstance(node["type"], str) else " or ".join(node["type"])
    choices = [schema_type(choice) for choice in node.get("oneOf", node.get("anyOf", []))]
    return " or ".join(dict.fromkeys(choices)) if choices else "object"


def values_table(chart: Path) -> str:
    text = (chart / "values.yaml").read_text()
    values = yaml.safe_load(text) or {}
    rows = ["| Key | Type | Default | Description |", "| --- | --- | --- | --- |"]
    documented = set()
    for key, description in documented_values(text, f"{chart.name}/values.yaml"):
        value = value_at(values, key)
        documented.add(key)
        rows.append(f"| `{key}` | {type_of(value)} | {default_of(value)} | {description} |")
    rows += schema_rows(chart, documented)
    return "\n".join(rows) if len(rows) > 2 else "This chart has no values."


def readme(chart: Path) -> str:
    metadata = yaml.safe_load((chart / "Chart.yaml").read_text())
    template = (chart / TEMPLATE).read_text()
    header = (f"# {metadata['name']}\n\n![Version: {metadata['version']}](https://img.shields.io/badge/Version-"
              f"{metadata['version']}-informational) ![AppVersion: {metadata['appVersion']}](https://img.shields.io/"
              f"badge/AppVersion-{metadata['appVersion']}-informational)\n\n{metadata['description']}\n\n")
    return header + template.replace(VALUES_TABLE, values_table(chart))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="fail if a README is out of date")
    parser.add_argument("charts", nargs="*", type=Path, default=[ROOT / "charts" / name for name in CHARTS])
    args = parser.parse_args(argv)
    stale = []
    for chart in args.charts:
        try:
            wanted = readme(chart.resolve())
        except Undocumented as error:
            print(error, file=sys.stderr)
            return 1
        path = chart / "README.md"
        if args.check:
            if not path.exists() or path.read_text() != wanted:
                stale.append(str(path))
        else:
            path.write_text(wanted)
    if stale:
        print(f"out of date: {', '.join(stale)}; run `make generate`", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
