"""docs/pipelines.md, run: each recipe's files written and commands run with the real tools (kustomize,
kpt, helmfile built by ci/cluster/build.sh; helm 3 and 4), their objects compared with `helm template
--post-renderer`'s. Argo CD cannot run here: its plugin's generate command runs as the CMP server runs
it — in the Application's source directory of a checkout, with Argo CD's build environment and the
Application's parameters as environment variables."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.controlplane.builds import shared_crds, shared_dir
from tests.helm import CHART, CRD, CRD_CHART, ROOT, VALUES, Helm
from tests.recipes import Workspace, expected_output, section, sections
from tests.support import DOC_STORY, LWS_CHART, by_key, objects

RECIPES = sections()
STORIES = sorted(path.name for path in VALUES.glob("*.yaml"))
KUBE_VERSION = "1.35.3"
PUBLISHED = CRD_CHART / "schemas" / "{{ .Group }}" / "{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"
"""The InferenceService's schema the CRD's chart publishes, as a kubeconform schema location."""
CORE_KINDS = {"Service", "ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment", "Secret",
              "HorizontalPodAutoscaler", "PodDisruptionBudget", "ClusterRole", "ClusterRoleBinding", "Job",
              "NetworkPolicy", "PersistentVolumeClaim"}


@pytest.fixture
def workspace(helm: Helm, tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "clone", helm)


def post_rendered(helm: Helm, values: Path, *extra: str, chart: Path = CHART, release: str = "qwen",
                  namespace: str = "qwen") -> dict[tuple[str, str | None, str], dict[str, Any]]:
    """What `helm template --post-renderer fusion-postrender` makes of the chart, hooks included."""
    out = helm.run("template", release, chart, "--namespace", namespace, "-f", values, "--post-renderer",
                   "fusion-postrender", *extra).stdout
    return by_key(objects(out))


@pytest.mark.parametrize("story", STORIES)
def test_kustomize_with_the_krm_function_makes_the_post_renderers_objects(workspace: Workspace, story: str) -> None:
    recipe = section("kustomize")
    workspace.write(recipe.files)
    build = recipe.commands[0]
    assert DOC_STORY in build
    out = workspace.run(build.replace(DOC_STORY, story)).stdout
    assert by_key(objects(out)) == post_rendered(workspace.helm, VALUES / story)


def test_kustomize_fails_with_the_functions_error_on_a_bad_service(workspace: Workspace) -> None:
    recipe = section("kustomize")
    workspace.write(recipe.files)
    broken = recipe.commands[1]
    result = workspace.run(broken, check=False)
    assert result.returncode != 0 and result.stdout == ""
    for line in expected_output(broken):
        assert line in [printed.rstrip() for printed in result.stderr.splitlines()], result.stderr


def test_kpt_expands_a_package_in_place_and_again_changes_nothing(workspace: Workspace) -> None:
    [commands] = section("kpt").commands
    listing = workspace.run(commands).stdout.split()
    package = workspace.root / "qwen-pkg"
    assert "leaderworkerset_qwen-inference-service-decode-3.yaml" in listing
    files = {path: path.read_text() for path in package.rglob("*.yaml")}
    found = [obj for text in files.values() for obj in objects(text)]
    assert by_key(found) == post_rendered(workspace.helm, VALUES / DOC_STORY)
    workspace.run(f"kpt fn eval {package.name} --exec fusion-krm")
    assert {path: path.read_text() for path in package.rglob("*.yaml")} == files


KUBECONFORM_LOCATION = "{{ .Group }}_{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"
"""Where the converted upstream CRDs' schemas are, as kubeconform names a schema."""


def kubeconform_schemas(crds: list[Path], into: Path) -> Path:
    """The JSON schemas kubeconform's own converter (its openapi2jsonschema.py) makes of CRDS, in INTO."""
    into.mkdir()
    converter = shared_dir("kubeconform") / "openapi2jsonschema.py"
    subprocess.run([sys.executable, converter, *crds], cwd=into, check=True, capture_output=True,
                   env={"FILENAME_FORMAT": "{fullgroup}_{kind}_{version}", "PATH": os.environ["PATH"]})
    return into


def kubeconform(workspace: Workspace, manifest: Path, *locations: str) -> list[dict[str, Any]]:
    """Each resource of MANIFEST as kubeconform -strict judges it against the schemas at LOCATIONS."""
    args = [arg for location in locations for arg in ("-schema-location", location)]
    done = workspace.run(" ".join(["kubeconform", "-strict", "-output", "json", "-verbose", "-ignore-missing-schemas",
                                   *map(shlex.quote, args), str(manifest)]), check=False)
    resources: list[dict[str, Any]] = json.loads(done.stdout)["resources"]
    return resources


def test_the_kubeconform_recipe_validates_the_service_as_written(workspace: Workspace) -> None:
    [commands] = section("kubeconform").commands
    printed = workspace.run(commands).stdout
    assert printed.splitlines() == expected_output(commands)


@pytest.fixture(scope="module")
def upstream_schemas(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The upstream CRDs' kinds as kubeconform's converter makes their schemas."""
    return kubeconform_schemas(sorted(shared_crds().glob("*.yaml")), tmp_path_factory.mktemp("kubeconform") / "crds")


@pytest.mark.parametrize("story", STORIES)
def test_kubeconform_finds_every_rendered_object_valid_with_the_published_schema(
        workspace: Workspace, upstream_schemas: Path, story: str) -> None:
    upstream = upstream_schemas
    rendered = workspace.root / "rendered.yaml"
    rendered.write_text(workspace.helm.template(VALUES / story).stdout)
    judged = kubeconform(workspace, rendered, str(PUBLISHED), str(upstream / KUBECONFORM_LOCATION))
    assert [r for r in judged if r["status"] != "statusValid" and r["status"] != "statusSkipped"] == []
    # every kind checked but Kubernetes' own, whose schemas (kubeconform's default location) are on the network
    checked = {r["kind"] for r in judged if r["status"] == "statusValid"}
    assert "InferenceService" in checked and checked == {r["kind"] for r in judged} - CORE_KINDS


def test_kubeconform_s_converter_refuses_every_service_and_the_published_schema_refuses_a_bad_one(
        workspace: Workspace) -> None:
    converted = kubeconform_schemas([CRD], workspace.root.parent / "converted")
    rendered = workspace.root / "rendered.yaml"
    rendered.write_text(workspace.helm.template(VALUES / DOC_STORY).stdout)
    [service] = [r for r in kubeconform(workspace, rendered, str(converted / KUBECONFORM_LOCATION))
                 if r["kind"] == "InferenceService"]
    assert service["status"] == "statusInvalid" and "template/spec/containers/0" in service["msg"], service
    [published] = [r for r in kubeconform(workspace, rendered, str(PUBLISHED)) if r["kind"] == "InferenceService"]
    assert published["status"] == "statusValid", published
    bad = workspace.root / "bad.yaml"
    obj = next(o for o in objects(rendered.read_text()) if o["kind"] == "InferenceService")
    obj["spec"]["roles"][0]["replicas"] = "two"
    bad.write_text(yaml.safe_dump(obj))
    [refused] = kubeconform(workspace, bad, str(PUBLISHED))
    assert refused["status"] == "statusInvalid" and "/spec/roles/0/replicas" in refused["msg"], refused


def test_kpt_reports_the_functions_result(workspace: Workspace) -> None:
    package = workspace.root / "bad-pkg"
    package.mkdir()
    (package / "broken.yaml").write_text(section("kustomize").files["deploy/broken/inferenceservice.yaml"])
    result = workspace.run(f"kpt fn eval {package.name} --exec fusion-krm", check=False)
    assert result.returncode != 0
    message = "InferenceService broken: spec.roles[0].multinode.nodeCount: must be >= 1, got 0"
    assert f"[error] fusioninfer.io/v1alpha1/InferenceService/broken spec.roles[0].multinode.nodeCount: {message}" \
        in result.stderr + result.stdout


def test_helmfile_template_renders_through_the_post_renderer(workspace: Workspace) -> None:
    recipe = section("helmfile")
    workspace.write(recipe.files)
    [template] = [command for command in recipe.commands if " template" in command]
    out = workspace.run(template).stdout
    assert by_key(objects(out)) == post_rendered(workspace.helm, VALUES / DOC_STORY)


# --- Argo CD: the ConfigManagementPlugin's generate command, run as Argo CD's CMP server runs it.

def argocd_env(application: dict[str, Any]) -> dict[str, str]:
    """What Argo CD gives a CMP's commands besides the sidecar's own environment: the build environment,
    the Application's plugin env (prefixed ARGOCD_ENV_) and its parameters (ARGOCD_APP_PARAMETERS as
    JSON, and each as PARAM_<NAME>, PARAM_<NAME>_<i> or PARAM_<NAME>_<KEY>)."""
    spec, source = application["spec"], application["spec"]["source"]
    revision = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    env = {"ARGOCD_APP_NAME": application["metadata"]["name"], "ARGOCD_APP_NAMESPACE": spec["destination"]["namespace"],
           "ARGOCD_APP_PROJECT_NAME": spec["project"], "ARGOCD_APP_REVISION": revision,
           "ARGOCD_APP_REVISION_SHORT": revision[:7], "ARGOCD_APP_REVISION_SHORT_8": revision[:8],
           "ARGOCD_APP_SOURCE_PATH": source["path"], "ARGOCD_APP_SOURCE_REPO_URL": source["repoURL"],
           "ARGOCD_APP_SOURCE_TARGET_REVISION": source["targetRevision"], "KUBE_VERSION": KUBE_VERSION,
           "KUBE_API_VERSIONS": "v1,apps/v1,batch/v1,leaderworkerset.x-k8s.io/v1,scheduling.volcano.sh/v1beta1"}
    plugin = source.get("plugin") or {}
    env.update({f"ARGOCD_ENV_{entry['name']}": entry["value"] for entry in plugin.get("env", [])})
    parameters = plugin.get("parameters", [])
    env["ARGOCD_APP_PARAMETERS"] = json.dumps(parameters)
    for parameter in parameters:
        base = f"PARAM_{_escaped(parameter['name'])}"
        if "string" in parameter:
            env[base] = parameter["string"]
        env.update({f"{base}_{index}": item for index, item in enumerate(parameter.get("array", []))})
        env.update({f"{base}_{_escaped(key)}": value for key, value in parameter.get("map", {}).items()})
    return env


def _escaped(name: str) -> str:
    return re.sub("[^A-Z0-9_]", "_", name.upper())


def generate(workspace: Workspace, application: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """The plugin's generate command, in the Application's source directory of a checkout of the repository."""
    recipe = section("Argo CD")
    plugin = yaml.safe_load(recipe.files["argocd/plugin.yaml"])
    assert plugin["metadata"]["name"] == application["spec"]["source"]["plugin"]["name"]
    command = plugin["spec"]["generate"]
    source_directory = checkout(workspace) / application["spec"]["source"]["path"]
    return subprocess.run([*command["command"], *command.get("args", [])], cwd=source_directory,
                          env=workspace.env(**argocd_env(application)), text=True, capture_output=True, timeout=300)


def checkout(workspace: Workspace) -> Path:
    """A checkout of the repository (what Argo CD unpacks for the CMP server): the chart, the stories and
    the test fixtures' charts."""
    root = workspace.root.parent / "checkout"
    if not root.exists():
        for name in ("charts", "values", "tests/fixtures"):
            shutil.copytree(ROOT / name, root / name)
    return root


def doc_application() -> dict[str, Any]:
    return yaml.safe_load(section("Argo CD").files["argocd/application.yaml"])


def with_parameters(*parameters: dict[str, Any], path: str | None = None) -> dict[str, Any]:
    application = doc_application()
    source = application["spec"]["source"]
    source["plugin"]["parameters"] = list(parameters)
    if path is not None:
        source["path"] = path
    return application


@pytest.mark.parametrize("story", STORIES)
def test_argocd_generate_renders_the_post_renderers_objects(workspace: Workspace, story: str) -> None:
    application = doc_application() if story == DOC_STORY else \
        with_parameters({"name": "values-files", "array": [f"../../values/{story}"]})
    result = generate(workspace, application)
    assert result.returncode == 0, result.stderr
    want = post_rendered(workspace.helm, VALUES / story, "--kube-version", KUBE_VERSION)
    assert by_key(objects(result.stdout)) == want


def test_argocd_generate_takes_over_another_charts_leader_worker_sets(workspace: Workspace) -> None:
    application = with_parameters({"name": "take-over-lws", "string": "true"},
                                  {"name": "take-over-layout", "string": "role"}, path="tests/fixtures/lws-chart")
    result = generate(workspace, application)
    assert result.returncode == 0, result.stderr
    assert by_key(objects(result.stdout)) == post_rendered(
        workspace.helm, LWS_CHART / "values.yaml", "--kube-version", KUBE_VERSION, "--post-renderer-args",
        "--take-over-lws", "--post-renderer-args", "--take-over-layout=role", chart=LWS_CHART)


@pytest.mark.parametrize(("parameters", "error"), [
    ([{"name": "values-files", "array": ["missing.yaml"]}], "missing.yaml"),
    ([{"name": "values-files", "array": ["bad.yaml"]}], "replicas"),
    ([{"name": "take-over-lws", "string": "yes"}], "take-over-lws: must be true or false, got 'yes'"),
    ([{"name": "take-over-layout", "string": "roles"}], "invalid choice: 'roles'"),
])
def test_argocd_generate_fails_with_nothing_on_stdout(workspace: Workspace, parameters: list[dict[str, Any]],
                                                      error: str) -> None:
    (checkout(workspace) / CHART.relative_to(ROOT) / "bad.yaml").write_text(
        yaml.safe_dump({"roles": [{"name": "worker", "replicas": -1}]}))
    result = generate(workspace, with_parameters(*parameters))
    assert result.returncode != 0 and result.stdout == "" and error in result.stderr, result.stderr


def test_flux_pre_rendered_source_builds_as_kustomize_controller_builds_it(workspace: Workspace) -> None:
    [commands] = section("Flux").commands
    out = workspace.run(commands).stdout
    assert by_key(objects(out)) == post_rendered(workspace.helm, VALUES / DOC_STORY, "--no-hooks")
