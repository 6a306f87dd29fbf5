from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helm import ROOT, Helm, make_helm

SHARED_CRDS = Path(os.environ.get("FUSION_SHARED_CRDS", ROOT.parent / "shared" / "crds"))


@pytest.fixture(scope="session", params=[3, 4], ids=["helm3", "helm4"])
def helm(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Helm:
    """Each test that takes it runs once with helm 3.17 and once with helm 4.1."""
    return make_helm(request.param, tmp_path_factory.mktemp(f"helm{request.param}-home"))


@pytest.fixture(scope="session")
def helm4(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    return make_helm(4, tmp_path_factory.mktemp("helm4-only-home"))


@pytest.fixture(scope="session")
def upstream_crds() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) → the upstream CRD's openAPIV3Schema for that version."""
    if not SHARED_CRDS.is_dir():
        raise RuntimeError(f"upstream CRD schemas not found at {SHARED_CRDS} "
                           "(set FUSION_SHARED_CRDS to the shared/crds directory)")
    schemas = {}
    for path in sorted(SHARED_CRDS.glob("*.yaml")):
        crd = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            schemas[(f"{group}/{version['name']}", kind)] = version["schema"]["openAPIV3Schema"]
    return schemas
