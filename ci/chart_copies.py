"""Write each chart's copy of the modules its programs run (fusion_helm.programs and what they import of
fusion_helm.base): Helm reads files only inside a chart, and Helm 3 never post-renders hooks, so a chart
carries, in files/fusion_helm, every module its pods run with ``python -m``, each under a line saying whose
copy it is. The package is the only place to edit (and to search).

`--check` writes nothing and fails when a copy differs from its source, or when a chart still holds a copy
no program imports (`make lint`); without it, writes them and removes those (`make generate`).
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "fusion_helm"
HEADER = "# A copy of {source}, made by `make generate` (ci/chart_copies.py) for the chart; do not edit.\n"
PROGRAMS = {"fusioninfer": ("fusion_helm.programs.check", "fusion_helm.programs.report"),
            "fusioninfer-bbr": ("fusion_helm.programs.gateway_models",)}
"""Chart → the modules its pods run with ``python -m`` (the hook Jobs; the shared Gateway's /v1/models)."""


def shipped(package: Path, programs: tuple[str, ...]) -> list[str]:
    """The modules PROGRAMS import of the package, themselves included, and their subpackages'
    ``__init__``: what a chart ships of PACKAGE (its source directory) for them, as paths below its parent,
    sorted. In the pod, fusion_helm itself is a namespace package (its own __init__ imports all of it)."""
    found: set[str] = set()
    pending = list(programs)
    while pending:
        module = pending.pop()
        path = f"{module.replace('.', '/')}.py"
        if path in found:
            continue
        found.add(path)
        found.add(f"{module.rpartition('.')[0].replace('.', '/')}/__init__.py")
        tree = ast.parse((package.parent / path).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(f"{package.name}."):
                pending += [f"{node.module}.{alias.name}" if (package.parent / node.module.replace(".", "/") /
                                                              f"{alias.name}.py").is_file() else node.module
                            for alias in node.names]
    return sorted(found)


def copies(charts: Path, package: Path) -> dict[Path, str]:
    """Each chart's copies (below CHARTS), by path, with their text."""
    return {charts / name / "files" / path: HEADER.format(source=path) + (package.parent / path).read_text(
        encoding="utf-8") for name, programs in PROGRAMS.items() for path in shipped(package, programs)}


def strays(charts: Path, package: Path, wanted: dict[Path, str]) -> list[Path]:
    """Copies of the package in the charts that `copies` no longer writes (a module no program imports now): a
    chart would still ship them."""
    return sorted(path for name in PROGRAMS for path in (charts / name / "files" / package.name).rglob("*.py")
                  if path not in wanted)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="fail if a copy is out of date")
    args = parser.parse_args(argv)
    charts = ROOT / "charts"
    wanted = copies(charts, PACKAGE)
    stale = [path for path, text in wanted.items() if not path.exists() or path.read_text() != text]
    extra = strays(charts, PACKAGE, wanted)
    if args.check:
        if stale or extra:
            names = ", ".join(str(path.relative_to(ROOT)) for path in [*stale, *extra])
            print(f"out of date: {names}; run `make generate`", file=sys.stderr)
            return 1
        return 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(wanted[path])
    for path in extra:
        path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
