"""Copy the hook Jobs' Python into the chart, which Helm reads files from only inside itself (and
symbolic links make Helm 3 warn on every command): the package fusion_helm.hooks, with the package's own
__init__.py (standard library only), as a package the Jobs' volume lays out again.

    fusion_helm/__init__.py, fusion_helm/hooks/*.py → charts/fusioninfer/files/fusion_helm/...

`--check` fails when a copy is stale (`make lint`); without it, writes them (`make generate`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = ROOT / "charts" / "fusioninfer" / "files"


def wanted() -> dict[Path, str]:
    sources = [ROOT / "fusion_helm" / "__init__.py", *sorted((ROOT / "fusion_helm" / "hooks").glob("*.py"))]
    return {FILES / path.relative_to(ROOT): path.read_text() for path in sources}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="fail if a copy is out of date")
    args = parser.parse_args(argv)
    copies = wanted()
    present = {path for path in FILES.rglob("*.py")} if FILES.exists() else set()
    stale = sorted({path for path, text in copies.items() if not path.exists() or path.read_text() != text}
                   | (present - copies.keys()))
    if args.check:
        if stale:
            print(f"out of date: {', '.join(str(p.relative_to(ROOT)) for p in stale)}; run `make generate`",
                  file=sys.stderr)
        return 1 if stale else 0
    for path in present - copies.keys():
        path.unlink()
    for directory in sorted((d for d in FILES.rglob("*") if d.is_dir()), reverse=True):
        if not any(directory.iterdir()):
            directory.rmdir()
    for path, text in copies.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
