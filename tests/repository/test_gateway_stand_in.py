"""The gateway stand-in's own tests (ci/cluster/pickers/picker-probe, Go): HTTPRoute matching and
precedence, weighted backends, the body-based router's exchange, and the picker gateway's behaviour that
the control-plane tests route through. Run with the Go toolchain the control plane is built with."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.helm import ROOT


@pytest.mark.usefixtures("control_plane_build")
def test_the_gateway_stand_in_s_go_tests_pass() -> None:
    done = subprocess.run(["go", "test", "-count=1", "./picker-probe"], cwd=ROOT / "ci" / "cluster" / "pickers",
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok" in done.stdout, done.stdout
