"""Data to YAML text that every reader reads back as written: keys in the order they were built, a
string quoted wherever Go's YAML 1.1 reader (Helm's, kubectl's), a YAML 1.2 reader or PyYAML would
read it plain as another type, multi-line strings as literal blocks."""

from __future__ import annotations

from typing import Any

import yaml

from fusion_helm.kio.scalars import needs_quotes


class _Dumper(yaml.CSafeDumper):
    # Generated objects share sub-structures; write them out in full rather than as YAML aliases.
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: _Dumper, text: str) -> yaml.Node:
    # The emitter falls back to another style where the one asked for cannot hold the text exactly.
    style = "|" if "\n" in text else "'" if needs_quotes(text) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_str)


def dump(obj: Any) -> str:
    """YAML text of one object (deterministic)."""
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=1 << 20)
