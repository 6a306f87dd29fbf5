"""The chart: lints strictly on both helm versions, and its generated files match the schema source."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from fusion_helm.schemagen import crd, forms_apart, values_schema
from tests.goyaml import GoYAML
from tests.helm import BELOW_MINIMUM, CHART, CRD, CRD_CHART, HELM_BELOW_MINIMUM_VERSION, ROOT, VALUES, Helm

EXAMPLES = sorted(path.name for path in VALUES.glob("*.yaml"))


@pytest.mark.parametrize("values", [None, *EXAMPLES])
def test_helm_lint_strict(helm: Helm, values: str | None) -> None:
    args = ["lint", "--strict", str(CHART)] + (["-f", str(VALUES / values)] if values else [])
    result = helm.run(*args, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 chart(s) failed" in result.stdout


def test_the_crd_chart_lints_strict(helm: Helm) -> None:
    result = helm.run("lint", "--strict", str(CRD_CHART), check=False)
    assert result.returncode == 0 and "0 chart(s) failed" in result.stdout, result.stdout + result.stderr


def chart_readme(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "ci" / "chart_readme.py"), *map(str, args)],
                          capture_output=True, text=True)


def test_the_chart_readmes_document_every_value() -> None:
    result = chart_readme("--check")
    assert result.returncode == 0, result.stderr
    readme = (CHART / "README.md").read_text()
    for key in ("name", "roles", "monitoring", "hooks.image", "hooks.ttlSecondsAfterFinished"):
        assert f"| `{key}` |" in readme, key


def test_a_value_added_without_documentation_fails_the_readme_check(tmp_path: Path) -> None:
    chart = tmp_path / "fusioninfer"
    shutil.copytree(CHART, chart)
    values = (chart / "values.yaml").read_text()
    assert chart_readme("--check", chart).returncode == 0, "the copy starts documented and current"
    (chart / "values.yaml").write_text(values + "\nreplicaLimit: 10\n")
    undocumented = chart_readme("--check", chart)
    assert undocumented.returncode == 1
    assert "values.yaml: replicaLimit has no comment above it" in undocumented.stderr
    (chart / "values.yaml").write_text(values.replace("  statusWaitSeconds: 30\n", "  statusWaitSeconds: 30\n"
                                                      "  backoff: 2\n"))
    assert "hooks.backoff has no comment above it" in chart_readme("--check", chart).stderr
    (chart / "values.yaml").write_text(values + "\n# -- The most replicas a role may have.\nreplicaLimit: 10\n")
    assert "out of date" in chart_readme("--check", chart).stderr, "documented, the README must be regenerated"
    assert chart_readme(chart).returncode == 0
    assert "| `replicaLimit` | int | `10` | The most replicas a role may have. |" in (chart / "README.md").read_text()


def test_generated_artifacts_are_up_to_date() -> None:
    result = subprocess.run([sys.executable, "-m", "fusion_helm.schemagen", "--check", str(CHART)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    on_disk = yaml.safe_load(CRD.read_text())
    assert on_disk == crd()
    assert json.loads((CHART / "values.schema.json").read_text()) == values_schema()


def test_the_values_schema_is_draft07_and_takes_every_story() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    for story in EXAMPLES:
        assert list(validator.iter_errors(yaml.safe_load((VALUES / story).read_text()))) == []
    assert list(validator.iter_errors({"roles": [], "unknown": 1}))


def test_the_crd_is_served_with_status_short_name_and_columns() -> None:
    spec = crd()["spec"]
    [version] = spec["versions"]
    assert version["subresources"] == {"status": {}}
    assert spec["names"]["shortNames"] == ["fisvc"]
    assert [c["name"] for c in version["additionalPrinterColumns"]] == ["Roles", "Ready", "Age"]
    roles = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["roles"]
    assert roles["items"]["properties"]["template"]["x-kubernetes-preserve-unknown-fields"] is True


def test_crd_values_schema_and_validation_share_one_source() -> None:
    from fusion_helm.model.schema import api_source, spec_schema, to_draft07, to_structural
    from fusion_helm.model.validation import check_keywords

    source = api_source()["spec"]
    served = crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert served == to_structural(source)
    check_keywords(spec_schema())
    assert spec_schema() == {**to_draft07(source), "$schema": spec_schema()["$schema"]}
    # The same but for a pattern of several forms, which helm is given as one pattern a form.
    assert values_schema()["properties"]["roles"] == forms_apart(spec_schema()["properties"]["roles"])
    assert values_schema()["properties"]["roles"] != spec_schema()["properties"]["roles"]


def test_the_crd_keeps_a_field_of_several_forms_as_given_and_nothing_else_differs() -> None:
    from fusion_helm.model.schema import api_source

    source = api_source()["spec"]["properties"]["roles"]["items"]["properties"]
    served = crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "roles"]["items"]["properties"]
    assert {name for name in source if source[name] != served[name]} == {"strategy"}
    assert served["strategy"] == {"description": source["strategy"]["description"],
                                  "x-kubernetes-preserve-unknown-fields": True}


def test_helm_refuses_a_strategy_of_neither_form_by_the_values_schema(helm: Helm, tmp_path: Path) -> None:
    values = yaml.safe_load((VALUES / "router-pd-qwen3-8b.yaml").read_text())
    [router] = [role for role in values["roles"] if role["componentType"] == "router"]
    for wrong in ("round-robin", 3):
        router["strategy"] = wrong
        path = tmp_path / "values.yaml"
        path.write_text(yaml.safe_dump(values))
        result = helm.template(path, check=False)
        assert result.returncode != 0 and not result.stdout
        assert "strategy" in result.stderr, result.stderr


@pytest.mark.parametrize("example", ["router-pd-qwen3-8b.yaml", "story2-pd-qwen3-8b.yaml",
                                     "story1-monolithic-qwen3-8b.yaml"])
@pytest.mark.parametrize("layout", ["replica", "role", "disaggregated"])
def test_helm_refuses_by_the_values_schema_the_layouts_the_post_renderer_refuses_for_a_router(
        helm: Helm, tmp_path: Path, example: str, layout: str) -> None:
    """A router pairing prefill and decode in layout role is refused before anything renders; the schema
    and the post-renderer agree on every other combination (layout disaggregated needs prefill and decode,
    which the schema does not judge: it lets the post-renderer say so)."""
    values = {**yaml.safe_load((VALUES / example).read_text()), "layout": layout}
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    by_schema = helm.template(path, post_render=False, check=False)
    rendered = helm.template(path, check=False)
    if example == "router-pd-qwen3-8b.yaml" and layout == "role":
        assert by_schema.returncode != 0 and not by_schema.stdout
        assert "layout" in by_schema.stderr and "disaggregated" in by_schema.stderr, by_schema.stderr
        unchecked = helm.template(path, check=False, extra=("--skip-schema-validation",))
        assert unchecked.returncode != 0 and not unchecked.stdout  # and the post-renderer, without the schema
        assert "spec.layout" in unchecked.stderr, unchecked.stderr
    else:
        assert by_schema.returncode == 0, by_schema.stderr
        assert (rendered.returncode == 0) == (layout != "disaggregated" or "pd" in example), rendered.stderr


# Release names Helm takes (DNS labels) that YAML reads, unquoted, as something other than a string.
NOT_STRINGS_UNQUOTED = ["03", "1e3", "0x1f", "on", "no", "true", "null", "123"]


@pytest.mark.parametrize("release", NOT_STRINGS_UNQUOTED)
def test_every_name_namespace_and_label_is_a_string_whatever_the_release_is_named(
        helm: Helm, go_yaml: GoYAML, release: str) -> None:
    """Helm reads the rendered chart with Go's YAML reader; a release named 03 once made every
    object's app.kubernetes.io/instance label the integer 3, which the post-renderer refused."""
    rendered = helm.run("template", release, CHART, "--namespace", release, "-f", VALUES / "router-pd-qwen3-8b.yaml",
                        "--post-renderer", "fusion-postrender")
    documents = [d for d in rendered.stdout.split("\n---\n") if d.strip()]
    hooks = helm.run("template", release, CHART, "--namespace", release, "-f", VALUES / "router-pd-qwen3-8b.yaml",
                     "--show-only", "templates/hooks.yaml")
    documents += [d for d in hooks.stdout.split("\n---\n") if d.strip()]
    read = go_yaml.read(documents)
    assert [r["error"] for r in read if r["error"]] == []
    objects = [r["json"] for r in read if r["json"]]
    assert len(objects) > 10
    for obj in objects:
        metadata = obj["metadata"]
        where = f"{obj['kind']} {metadata.get('name')!r}"
        assert isinstance(metadata["name"], str), where
        assert all(isinstance(v, str) for v in (metadata.get("labels") or {}).values()), (where, metadata["labels"])
        assert isinstance(metadata.get("namespace", ""), str), where
        for subject in obj.get("subjects") or []:
            assert isinstance(subject["name"], str) and isinstance(subject.get("namespace", ""), str), where
    instances = {obj["metadata"]["labels"]["app.kubernetes.io/instance"] for obj in objects}
    assert instances == {release}


@pytest.mark.parametrize("chart", [CHART, CRD_CHART], ids=lambda path: path.name)
def test_a_helm_older_than_the_stated_minimum_is_refused(chart: Path) -> None:
    """The charts need Helm 3.17 (--take-ownership), which every README states; a helm 3.16 (ci/tools.env) is
    told so."""
    values = ["-f", str(VALUES / "story1-monolithic-qwen3-8b.yaml")] if chart == CHART else []
    result = subprocess.run([str(BELOW_MINIMUM), "template", "x", str(chart), *values], capture_output=True,
                            text=True)
    assert result.returncode != 0 and result.stdout == "", result.stdout
    assert (f"this chart needs Helm 3.17 or later (or Helm 4); this helm is {HELM_BELOW_MINIMUM_VERSION}"
            in result.stderr), result.stderr


def test_helm_show_readme_lists_every_value_the_chart_takes() -> None:
    """Each value values.schema.json declares, top-level and each role's field, has its row."""
    schema = json.loads((CHART / "values.schema.json").read_text())
    rows = {line.split("`")[1] for line in (CHART / "README.md").read_text().splitlines() if line.startswith("| `")}
    wanted = {key for key in schema["properties"] if key != "global"}
    wanted |= {f"roles[].{key}" for key in schema["properties"]["roles"]["items"]["properties"]}
    assert wanted <= rows, sorted(wanted - rows)
