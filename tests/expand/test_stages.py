"""The table of stages is the expansion's map: docs/architecture.md states it, each stage has its test module
here, and the expansion's modules are each in a layer of the import contracts."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from fusion_helm.expand.stages import STAGES
from tests.helm import ROOT

HERE = Path(__file__).parent
EXPAND = ROOT / "fusion_helm" / "expand"


def documented() -> list[list[str]]:
    """The rows of docs/architecture.md's table of stages, each cell's text."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    table = text[text.index("| stage |"):].split("\n\n")[0].splitlines()[2:]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in table]


def test_the_documented_table_is_the_table() -> None:
    rows = documented()
    assert [row[0].strip("`") for row in rows] == [stage.name for stage in STAGES]
    for row, stage in zip(rows, STAGES, strict=True):
        steps = stage.load()
        _, when, pods, objects, role_objects = row
        assert when == stage.when, stage.name
        assert pods.split(":")[0] == (str(steps.pods.pods) if steps.pods else "—"), stage.name
        assert (objects != "—") == (steps.objects is not None), stage.name
        assert (role_objects != "—") == (steps.role_objects is not None), stage.name


def test_a_role_s_objects_come_from_stages_next_to_each_other() -> None:
    """A role's objects are written together, where the first stage with per-role objects stands: those
    stages follow one another, or the order the table says would not be the output's."""
    with_role_objects = [index for index, stage in enumerate(STAGES) if stage.load().role_objects is not None]
    assert with_role_objects == list(range(with_role_objects[0], with_role_objects[-1] + 1))


def test_each_stage_has_its_test_module() -> None:
    missing = [stage.name for stage in STAGES if not (HERE / f"test_{stage.name}.py").is_file()]
    assert missing == []


def test_every_module_of_the_expansion_is_in_a_layer_of_the_import_contracts() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    [layers] = [contract["layers"] for contract in contracts if contract.get("containers") == ["fusion_helm.expand"]]
    layered = {name for layer in layers for name in re.split(r"\s*\|\s*", layer)}
    modules = {path.stem for path in EXPAND.glob("*.py") if path.stem != "__init__"} | {
        path.name for path in EXPAND.iterdir() if (path / "__init__.py").is_file()}
    assert modules - layered == set()
