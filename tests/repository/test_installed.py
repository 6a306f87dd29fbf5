"""The tests run the working tree twice over: in process (imported from it) and through the commands
helm runs, which import the copy installed in the environment (a regular install: what users get).
Both must be the same code, or a test would pass on one and vouch for the other."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.helm import ROOT, TOOLS


def package_files(root: Path) -> dict[str, bytes]:
    """Each file of the package below ROOT, by its path."""
    return {str(path.relative_to(root)): path.read_bytes()
            for directory, _, names in os.walk(root, followlinks=True) for path in map(Path(directory).joinpath, names)
            if "__pycache__" not in path.parts}


def test_the_installed_copy_is_the_working_tree_s() -> None:
    installed = Path(subprocess.run([str(TOOLS / "python"), "-c", "import fusion_helm; print(fusion_helm.__file__)"],
                                    capture_output=True, text=True, check=True, cwd="/").stdout.strip()).parent
    assert installed != ROOT / "fusion_helm", "expected a regular install, not the working tree itself"
    ours, theirs = package_files(ROOT / "fusion_helm"), package_files(installed)
    stale = sorted(name for name in ours.keys() | theirs.keys() if ours.get(name) != theirs.get(name))
    assert not stale, f"the installed fusion_helm differs from the working tree in {stale[:5]}: run `make setup`"
    for name in ("fusion-postrender", "fusion-krm", "fusion-helm"):
        body = (TOOLS / name).read_text().partition("\n")[2]
        assert body == (ROOT / "bin" / name).read_text().partition("\n")[2], f"{name}: run `make setup`"


START_UP = {"fusion_helm", "fusion_helm.cli", "fusion_helm.cli.io", "fusion_helm.cli.postrender",
            "fusion_helm.filters", "fusion_helm.filters.expand_services", "fusion_helm.filters.take_over",
            "fusion_helm.base", "fusion_helm.base.kinds", "fusion_helm.kio", "fusion_helm.kio.stream",
            "fusion_helm.limits", "fusion_helm.pipeline"}
"""What the post-renderer loads for a stream with nothing to expand (most of what it sees in a Helm
pipeline): a few small modules of our own, and nothing of the standard library that a bare Python
does not load too (not even ``__future__``: these modules go without ``from __future__ import
annotations`` and quote the annotations that name what only type checkers import)."""


def loaded(command: list[str], stdin: bytes) -> set[str]:
    """The modules COMMAND imports (Python's -X importtime report), given STDIN."""
    done = subprocess.run([str(TOOLS / "python"), "-X", "importtime", *command], input=stdin, capture_output=True,
                          check=True, cwd="/")
    return {line.rsplit("|", 1)[1].strip() for line in done.stderr.decode().splitlines()[1:] if "|" in line}


def test_a_stream_with_nothing_to_expand_loads_only_the_start_up_modules(tmp_path: Path) -> None:
    stream = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata:\n  key: value\n"
    copy = tmp_path / "copy.py"
    copy.write_text("import sys\nsys.stdout.buffer.write(sys.stdin.buffer.read())\n")
    bare = loaded([str(copy)], stream)
    ours = loaded([str(TOOLS / "fusion-postrender")], stream)
    assert ours - bare == START_UP
