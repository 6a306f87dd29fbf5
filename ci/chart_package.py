"""Package the charts as users get them: each with the documents and example values its README names
(and those they name in turn), at the paths the README gives, so a reader of `helm show readme` finds
every one in `helm pull --untar`. A name that is no file of the project fails the packaging.

    ci/chart_package.py --helm HELM --destination DIR CHART...
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMED = re.compile(r"(?<![\w/.-])(?:\.\./)?((?:docs|values)/[\w.-]+\.(?:md|yaml))"  # docs/router.md, ../values/x
                   r"|\]\(([\w.-]+\.(?:md|yaml))[#)]")                              # [a link](router.md)


class Unshippable(Exception):
    pass


def named_files(readme: Path, root: Path = ROOT) -> list[str]:
    """The project's files README names (`docs/router.md`), and those they name in turn, as paths from
    the project's root, where the package holds them too; a document in docs/ names its neighbours by
    link (`[the router](router.md)`)."""
    found: set[str] = set()
    pending = [(readme, readme.read_text())]
    while pending:
        document, text = pending.pop()
        for match in NAMED.finditer(text):
            if match[1] is None and document.parent != root / "docs":
                continue
            name = match[1] or f"docs/{match[2]}"
            if name in found:
                continue
            path = root / name
            if not path.is_file():
                raise Unshippable(f"{document.name} names {name}, which is no file of the project")
            found.add(name)
            if path.suffix == ".md":
                pending.append((path, path.read_text()))
    return sorted(found)


def package(chart: Path, helm: str, destination: Path) -> None:
    with tempfile.TemporaryDirectory() as staging:
        staged = Path(staging) / chart.name
        shutil.copytree(chart, staged)
        for name in named_files(chart / "README.md"):
            (staged / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / name, staged / name)
        subprocess.run([helm, "package", str(staged), "--destination", str(destination)], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--helm", required=True)
    parser.add_argument("--destination", type=Path, required=True)
    parser.add_argument("charts", nargs="+", type=Path)
    args = parser.parse_args()
    try:
        for chart in args.charts:
            package(chart.resolve(), args.helm, args.destination)
    except Unshippable as error:
        print(f"chart_package: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
