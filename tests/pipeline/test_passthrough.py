"""What the post-renderer does not own comes out byte for byte; output is deterministic; Helm 4's
hooks and file annotations are respected."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helm import ROOT, VALUES, Helm, postrender

MIXED_CHART = ROOT / "tests" / "fixtures" / "mixed-chart"


def post_rendered(text: str, **env: str) -> str:
    """What fusion-postrender prints for TEXT, with ENV; it must succeed."""
    result = postrender(stdin=text, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def kinds(text: str) -> list[str]:
    return [doc["kind"] for doc in yaml.safe_load_all(text) if doc]


def test_documents_we_do_not_own_pass_byte_for_byte(helm: Helm) -> None:
    raw = helm.template(chart=MIXED_CHART, hooks=True, post_render=False).stdout
    service_at = raw.index("---\n# Source: mixed/templates/service.yaml")
    service_end = raw.index("\n---", service_at + 4) + 1
    before, service, after = raw[:service_at], raw[service_at:service_end], raw[service_end:]
    # Put the InferenceService in the middle of the stream, between documents it does not own.
    stream = service + before + after
    out = post_rendered(stream)
    assert out.startswith(service)
    assert out.endswith(before + after)
    generated = out[len(service):len(out) - len(before + after)]
    assert kinds(generated) == ["PodGroup", "LeaderWorkerSet", "LeaderWorkerSet", "NetworkPolicy"]
    assert generated.count("# Source: mixed/templates/service.yaml\n") == 4
    assert "kserve-owned" in before + after and "--- not a separator" in before + after


def test_empty_and_comment_only_documents_pass_through() -> None:
    stream = ("---\n# Source: c/templates/empty.yaml\n---\n# just a comment\n"
              "---\napiVersion: v1\nkind: List\nitems: []\n")
    assert post_rendered(stream) == stream


def test_objects_of_any_shape_pass_through() -> None:
    stream = "metadata: not-a-map\nkind: Foo\n---\nmetadata: {annotations: null}\n---\n{}\n"
    assert post_rendered(stream) == stream


@pytest.mark.parametrize("story", ["story4-pd-multinode-deepseek-r1.yaml", "router-pd-qwen3-8b.yaml"])
def test_the_same_input_gives_byte_identical_output(story: str) -> None:
    values = yaml.safe_load((VALUES / story).read_text())
    service = yaml.safe_dump({"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
                              "metadata": {"name": values["name"]}, "spec": {"roles": values["roles"]}})
    outputs = {post_rendered(service, PYTHONHASHSEED=seed) for seed in ("0", "1", "12345")}
    assert len(outputs) == 1
    assert "kind: LeaderWorkerSet" in outputs.pop()


def test_helm4_post_renders_hooks_and_we_leave_them_untouched(
    helm4: Helm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent, returned = tmp_path / "sent.yaml", tmp_path / "returned.yaml"
    tee = tmp_path / "tee-postrender"
    tee.write_text(f"#!/bin/sh\ntee {sent} | fusion-postrender | tee {returned}\n")
    tee.chmod(0o755)
    monkeypatch.setenv("FUSION_POSTRENDER", str(tee))  # the plugin's wrapper runs this instead
    rendered = helm4.template(chart=MIXED_CHART, hooks=True).stdout

    def hook_text(stream: str) -> str:
        [chunk] = [c for c in stream.split("\n---") if "kind: Job" in c]
        return chunk.lstrip("-\n")

    assert "helm.sh/hook" in hook_text(sent.read_text()), "helm 4 sends hooks through the post-renderer"
    assert hook_text(returned.read_text()) == hook_text(sent.read_text())
    plain = helm4.template(chart=MIXED_CHART, hooks=True, post_render=False).stdout
    assert yaml.safe_load(hook_text(rendered)) == yaml.safe_load(hook_text(plain))


def test_helm4_files_generated_objects_under_the_services_template(helm4: Helm) -> None:
    out = helm4.template(VALUES / "story2-pd-qwen3-8b.yaml").stdout
    assert "generated-by-postrender" not in out
    assert out.count("# Source: fusioninfer/templates/inferenceservice.yaml\n") == 1 + 6 + 1 + 2  # and 2 policies
    assert "postrenderer.helm.sh/postrender-filename" not in out  # helm 4 strips it again


def test_the_helm4_file_annotation_is_copied_onto_generated_objects() -> None:
    annotation = "postrenderer.helm.sh/postrender-filename"
    service = {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
               "metadata": {"name": "svc", "annotations": {annotation: "chart/templates/svc.yaml"}},
               "spec": {"roles": [{"name": "p", "componentType": "prefiller", "multinode": {"nodeCount": 2},
                                   "template": {"spec": {"containers": [{"name": "c",
                                                                         "image": "vllm/vllm-openai:v0.11.0"}]}}}]}}
    objects = [doc for doc in yaml.safe_load_all(post_rendered(yaml.safe_dump(service))) if doc]
    assert [o["kind"] for o in objects] == ["InferenceService", "PodGroup", "LeaderWorkerSet", "PodDisruptionBudget",
                                            "NetworkPolicy", "NetworkPolicy"]
    for obj in objects:
        assert obj["metadata"]["annotations"] == {annotation: "chart/templates/svc.yaml"}
    pod_annotations = objects[2]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["annotations"]
    assert annotation not in pod_annotations


def test_a_stream_with_nothing_to_expand_loads_neither_yaml_nor_the_model(tmp_path: Path) -> None:
    stream = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: \"regex \\\\d+\", b: x}\n" \
             "---\napiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l}\n"
    probe = ("import sys\nfrom fusion_helm.cli.postrender import run\nstatus = run([])\n"
             "loaded = sorted(m for m in sys.modules if m == 'yaml' or m.startswith(('fusion_helm.model', "
             "'fusion_helm.expand', 'fusion_helm.kio.document')))\nprint(loaded, file=sys.stderr)\nsys.exit(status)\n")
    result = subprocess.run([sys.executable, "-c", probe], input=stream, text=True, capture_output=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout == stream
    assert result.stderr == "[]\n"
    with_service = subprocess.run([sys.executable, "-c", probe], input=stream.replace("kind: ConfigMap",
                                  "kind: InferenceService\napiVersion: fusioninfer.io/v1alpha1"), text=True,
                                  capture_output=True, cwd=ROOT)
    assert "'yaml'" in with_service.stderr  # and one that might hold a service does


def test_a_service_without_a_router_loads_none_of_the_router() -> None:
    """Every helm call pays for what the post-renderer imports: a service's stages load their own modules
    (fusion_helm/expand/stages.py), and the default network policies need only the router's ports."""
    from tests.builders import role, service

    stream = yaml.safe_dump(service(role("chat", "worker")))
    probe = ("import sys\nfrom fusion_helm.cli.postrender import run\nstatus = run([])\n"
             "print(sorted(m for m in sys.modules if m == 'typing' or m.startswith('fusion_helm.expand.router')), "
             "file=sys.stderr)\nsys.exit(status)\n")
    result = subprocess.run([sys.executable, "-c", probe], input=stream, text=True, capture_output=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "kind: NetworkPolicy" in result.stdout
    assert result.stderr == "['fusion_helm.expand.router', 'fusion_helm.expand.router.ports']\n"


def test_the_claimed_kinds_are_the_models() -> None:
    from fusion_helm.base import kinds
    from fusion_helm.model import API_GROUP, API_VERSION, KIND
    from fusion_helm.model.upstream import has_schema

    assert (kinds.API_GROUP, kinds.INFERENCE_SERVICE.api_version, kinds.INFERENCE_SERVICE.kind) == (
        API_GROUP, API_VERSION, KIND)
    assert has_schema(kinds.LEADER_WORKER_SET.api_version, kinds.LEADER_WORKER_SET.kind)
