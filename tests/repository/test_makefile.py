"""Set-up as a newcomer meets it: `make help` lists every target; an older Python is named in one line
before anything is made, a virtualenv another Python made is made anew; `make demo` installs the
package alone (not the project's tools); `make helm4-plugin` installs where a Helm 3 beside it keeps
loading its plugins."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helm import PLUGIN, ROOT, binary

pytestmark = pytest.mark.source_tree  # make installs the package from the source tree

ENV = {key: value for key, value in os.environ.items() if not key.startswith(("HELM_", "MAKE", "XDG_"))}


def make(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, env=env or ENV, text=True,
                          capture_output=True, timeout=300)


def python_3_10(tmp_path: Path) -> Path:
    """An interpreter that is Python 3.10 to whatever asks it with -c (as the Makefile does)."""
    path = tmp_path / "python3.10"
    path.write_text(f'#!/bin/sh\n[ "$1" = -c ] && exec {sys.executable} -c '
                    f'"import sys; sys.version_info = (3, 10, 13, \'final\', 0)\n$2"\nexec {sys.executable} "$@"\n')
    path.chmod(0o755)
    return path


def test_help_lists_every_target_the_makefile_declares() -> None:
    phony = set(re.search(r"^\.PHONY: (.*)$", (ROOT / "Makefile").read_text(), re.M)[1].split())
    listed = make("help")
    assert listed.returncode == 0
    assert {line.split(":")[0] for line in listed.stdout.splitlines() if not line.startswith(" ")} == phony


def test_an_older_python_is_named_before_anything_is_made(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    for python, named in ((python_3_10(tmp_path), "3.10.13"), (tmp_path / "no-such-python", "not found")):
        done = make("demo", f"PYTHON={python}", f"VENV={venv}")
        assert done.returncode != 0 and done.stdout == ""
        assert done.stderr.startswith(f"make: this project needs Python 3.11 or newer; {python} is {named}. "
                                      "Name one with PYTHON=, e.g. make PYTHON=python3.11\n"), done.stderr
        assert not venv.exists()


def test_a_virtualenv_another_python_made_is_made_anew(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    (venv / ".made-by-python-3.10.13").touch()  # as the failed run of an older Python left it
    version = ".".join(map(str, sys.version_info[:3]))
    done = make("venv", f"PYTHON={sys.executable}", f"VENV={venv}")
    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in venv.glob(".made-by-*")) == [f".made-by-python-{version}"]
    assert (venv / "bin" / "pip").exists()  # made anew, with pip this time
    again = make("venv", f"PYTHON={sys.executable}", f"VENV={venv}")
    assert again.stdout == "make: Nothing to be done for 'venv'.\n", again.stdout  # and kept from then on


def test_demo_installs_the_package_and_not_the_project_s_tools(tmp_path: Path) -> None:
    planned = make("--dry-run", "demo", f"PYTHON={sys.executable}", f"VENV={tmp_path / 'venv'}")
    assert planned.returncode == 0, planned.stderr
    installs = [line for line in planned.stdout.splitlines() if " install " in line]
    assert installs == [f"{tmp_path}/venv/bin/pip install --quiet --upgrade pip",
                        f"{tmp_path}/venv/bin/pip install --quiet ."], installs


def test_helm4_plugin_installs_where_helm_3_keeps_loading_plugins(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**ENV, "HOME": str(home)}
    done = make("helm4-plugin", f"HELM={binary(4)}", env=env)
    assert done.returncode == 0, done.stderr
    assert (home / ".local" / "share" / "helm4" / "plugins" / PLUGIN.name).exists()
    export = done.stdout.splitlines()[-1].strip()
    assert export.startswith('export HELM_PLUGINS="$(') and export.endswith('/.local/share/helm4/plugins"'), export
    helm3 = subprocess.run([str(binary(3)), "plugin", "list"], env=env, text=True, capture_output=True)
    assert helm3.returncode == 0, helm3.stderr
    listed = subprocess.run(["sh", "-c", f"{export}\nexec {binary(4)} plugin list"], env=env, text=True,
                            capture_output=True)
    assert listed.returncode == 0 and "fusion-postrender" in listed.stdout, listed.stdout + listed.stderr
