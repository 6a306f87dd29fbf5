"""Copy the hook Jobs' Python into the chart, which Helm reads files from only inside itself (and
symbolic links make Helm 3 warn on every command):

    hooks/*.py                                   → charts/fusioninfer/files/hooks/
    fusion_helm/status.py, fusion_helm/labels.py → charts/fusioninfer/files/

`--check` fails when a copy is stale (`make lint`); without it, writes them (`make generate`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = ROOT / "charts" / "fusioninfer" / "files"


def wanted() -> dict[Path, str]:
    copies = {FILES / "hooks" / path.name: path.read_text() for path in sorted((ROOT / "hooks").glob("*.py"))}
    copies.update({FILES / name: (ROOT / "fusion_helm" / name).read_text() for name in ("status.py", "labels.py")})
    return copies


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
    for path, text in copies.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
