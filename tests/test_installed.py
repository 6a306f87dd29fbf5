"""The tests run the working tree twice over: in process (imported from it) and through the commands
helm runs, which import the copy installed in the environment (a regular install: what users get).
Both must be the same code, or a test would pass on one and vouch for the other."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helm import ROOT, TOOLS


def package_files(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts}


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
