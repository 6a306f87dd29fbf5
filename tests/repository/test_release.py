"""The release as users get it, from `make dist`: the wheel installed into a fresh virtualenv
post-renders a story with its own commands (Helm 3) and its own Helm 4 plugin, as the working tree's
install does; its commands are our scripts, not an installer's wrappers; the chart packages carry
their README, metadata, the documents and examples the README names and nothing else. (Installing the
packages from an OCI registry: tests/controlplane/test_cluster_release.py.)"""

from __future__ import annotations

import email
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

from ci.chart_package import Unshippable, named_files
from fusion_helm.expand.generations import GENERATIONS
from tests.controlplane.builds import shared_crds
from tests.helm import BBR_CHART, CHART, CRD_CHART, ROOT, TOOLS, VALUES, Helm, make_helm, plugins_of

STORY = VALUES / "story2-pd-qwen3-8b.yaml"
COMMANDS = ("fusion-postrender", "fusion-krm", "fusion-helm")


def version() -> str:
    return str(yaml.safe_load((CHART / "Chart.yaml").read_text())["version"])


def test_the_wheel_s_commands_are_our_scripts_on_its_python(installed: Path) -> None:
    for name in COMMANDS:
        shebang, _, body = (installed / name).read_text().partition("\n")
        assert Path(shebang.removeprefix("#!")).parent == installed, shebang
        assert body == (ROOT / "bin" / name).read_text().partition("\n")[2], f"{name} is not bin/{name}"


def test_the_wheel_post_renders_as_the_working_tree_does(helm: Helm, installed: Path,
                                                         tmp_path: Path) -> None:
    """Helm 3 runs the venv's fusion-postrender from PATH; Helm 4 the plugin the wheel carries, installed
    from where `fusion-helm plugin-dir` says."""
    plugins = plugins_of(installed)
    assert installed.parent in plugins.parents, plugins
    from_wheel = make_helm(helm.major, tmp_path / "home", tools=installed, plugins=plugins)
    rendered = from_wheel.template(STORY).stdout
    assert "kind: LeaderWorkerSet" in rendered and "kind: PodGroup" in rendered
    assert rendered == helm.template(STORY).stdout


def test_the_wheel_s_krm_function_and_cli_render_as_the_working_tree_s(helm: Helm, installed: Path,
                                                                      tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(helm.template(STORY, post_render=False).stdout)
    items = [doc for doc in yaml.safe_load_all(manifest.read_text()) if doc]
    resource_list = json.dumps({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items})
    outputs = [(subprocess.run([str(tools / "fusion-helm"), "render", str(manifest)], capture_output=True,
                               text=True, check=True).stdout,
                subprocess.run([str(tools / "fusion-krm")], input=resource_list, capture_output=True, text=True,
                               check=True).stdout) for tools in (installed, TOOLS)]
    assert "kind: LeaderWorkerSet" in outputs[0][0] and "kind: LeaderWorkerSet" in outputs[0][1]
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("chart", [CHART, CRD_CHART, BBR_CHART], ids=lambda path: path.name)
def test_the_chart_packages_carry_their_readme_and_metadata(dist: Path, helm: Helm, chart: Path) -> None:
    package = dist / f"{chart.name}-{version()}.tgz"
    with tarfile.open(package) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames()}
        # what `helm show readme` names is in the package, as in the project (and what that names)
        named = named_files(chart / "README.md")
        assert {"docs/lifecycle.md" if chart == CRD_CHART else "values/router-pd-qwen3-8b.yaml"} <= set(named)
        for name in named:
            member = archive.extractfile(f"{chart.name}/{name}")
            assert member is not None and member.read() == (ROOT / name).read_bytes(), name
    assert "README.md" in names and "Chart.yaml" in names
    assert not {name for name in names if name.endswith(".in") or "__pycache__" in name}, names
    assert helm.run("show", "readme", package).stdout.strip() == (chart / "README.md").read_text().strip()
    metadata = yaml.safe_load(helm.run("show", "chart", package).stdout)
    assert {"kubeVersion", "maintainers", "icon"} <= set(metadata)
    # no address of the FusionInfer operator, another project (which defines the same CRD)
    assert "github.com/fusioninfer" not in json.dumps(metadata), metadata
    assert metadata["annotations"]["artifacthub.io/license"] == "Apache-2.0"
    lint = helm.run("lint", "--strict", package, check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_a_chart_readme_naming_a_file_the_project_lacks_is_not_packaged(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("Examples: values/router-pd-qwen3-8b.yaml and [the layouts](docs/no-such-doc.md).\n")
    with pytest.raises(Unshippable, match=r"names docs/no-such-doc\.md, which is no file"):
        named_files(readme)


def test_the_chart_lists_the_images_it_runs() -> None:
    """Artifact Hub's images: the hook Jobs' (the default hooks.image) and every picker generation's
    picker and prefill/decode sidecar."""
    annotations = yaml.safe_load((CHART / "Chart.yaml").read_text())["annotations"]
    listed = {entry["image"] for entry in yaml.safe_load(annotations["artifacthub.io/images"])}
    hooks = yaml.safe_load((CHART / "values.yaml").read_text())["hooks"]["image"]
    pickers = {image for generation in GENERATIONS.values()
               for image in (generation.image, generation.pd_sidecar and generation.pd_sidecar.image) if image}
    assert listed == {hooks, *pickers}
    [crd] = yaml.safe_load(annotations["artifacthub.io/crds"])
    ours = yaml.safe_load((CRD_CHART / "templates" / "fusioninfer.io_inferenceservices.yaml").read_text())
    assert (crd["name"], crd["kind"], crd["version"]) == (
        ours["metadata"]["name"], ours["spec"]["names"]["kind"], ours["spec"]["versions"][0]["name"])


def test_the_license_is_the_apache_license() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert 'license = "Apache-2.0"' in (ROOT / "pyproject.toml").read_text()


def test_the_wheel_reads_well_where_users_find_it(dist: Path) -> None:
    """Its index page: the user's description (not the developer README), keywords, classifiers, typed;
    the project's own tools are a dependency group, not a published extra."""
    [wheel] = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        [metadata_name] = [name for name in names if name.endswith(".dist-info/METADATA")]
        metadata = email.message_from_string(archive.read(metadata_name).decode())
    assert "fusion_helm/py.typed" in names
    assert metadata.get_payload().strip() == (ROOT / "docs" / "package.md").read_text().strip()
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert "Typing :: Typed" in metadata.get_all("Classifier")
    assert "helm" in metadata["Keywords"].split(",")
    assert metadata.get_all("Provides-Extra") == ["cluster"]
    assert not any("ruff" in requirement for requirement in metadata.get_all("Requires-Dist"))


SOURCE_DIRS = ("fusion_helm", "bin", "tests", "charts", "values", "docs", "ci", "hooks")


def test_the_sdist_holds_the_source_and_its_tests_run_from_it(dist: Path, tmp_path: Path) -> None:
    """A distribution builds and tests from the sdist: it holds every source file the suite reads, and
    tests run from it unpacked (a few here, finding the helm binaries and the upstream CRDs as this
    checkout does)."""
    [sdist] = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path, filter="data")
    [unpacked] = tmp_path.iterdir()
    def files(root: Path) -> set[str]:
        return {str(path.relative_to(root)) for top in SOURCE_DIRS for path in (root / top).rglob("*")
                if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"}
    assert files(ROOT) - files(unpacked) == set()
    assert (unpacked / "Makefile").is_file() and (unpacked / "LICENSE").is_file()
    ran = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests/chart/test_stories.py",
                          "tests/model/test_bad_input.py", f"--basetemp={tmp_path / 'run'}"],
                         cwd=unpacked, capture_output=True, text=True,
                         env={**os.environ, "FUSION_SHARED_CRDS": str(shared_crds())})
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert f"rootdir: {unpacked}" in ran.stdout and " passed" in ran.stdout.splitlines()[-1], ran.stdout[-2000:]
