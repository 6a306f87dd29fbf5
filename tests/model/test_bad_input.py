"""Bad input: one clear error naming the document and field path, non-zero exit, empty stdout."""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from fusion_helm.errors import show
from tests.helm import CHART, CLI_PLUGIN, PLUGIN, VALUES, Helm, make_helm, postrender, tool_path

STORY4 = yaml.safe_load((VALUES / "story4-pd-multinode-deepseek-r1.yaml").read_text())


def service(name: str = "qwen", roles: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
            "metadata": {"name": name}, "spec": {"roles": copy.deepcopy(roles or STORY4["roles"])}}


def with_role_change(path: str, value: Any, name: str = "qwen") -> str:
    """Story 4 with one field of role 1 (decode) set, e.g. ``multinode.nodeCount``."""
    obj = service(name)
    *parents, last = path.split(".")
    node = obj["spec"]["roles"][1]
    for key in parents:
        node = node[key]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return yaml.safe_dump(obj)


DELETE = object()


def with_model_and_decode_container(fields: dict[str, Any]) -> str:
    """Story 4 with a model source (its weights read by the pods), an autoscaler on decode (its drain) and FIELDS
    set on decode's serving container."""
    obj = service()
    obj["spec"]["model"] = {"source": "hf://deepseek-ai/DeepSeek-R1", "revision": "a" * 40}
    obj["spec"]["layout"] = "role"
    decode = obj["spec"]["roles"][1]
    decode.pop("replicas")
    decode["autoscaling"] = {"minReplicas": 1, "maxReplicas": 2}
    decode["template"]["spec"]["containers"][0].update(fields)
    return yaml.safe_dump(obj)

CASES = {
    "unknown componentType": (
        with_role_change("componentType", "encoder"),
        "InferenceService qwen: spec.roles[1].componentType: must be one of worker, prefiller, "
        "decoder, router, frontend, got 'encoder'"),
    "duplicate role names": (
        with_role_change("name", "prefill"),
        "InferenceService qwen: spec.roles[1].name: duplicate role name 'prefill' (also spec.roles[0])"),
    "nodeCount 0": (
        with_role_change("multinode.nodeCount", 0),
        "InferenceService qwen: spec.roles[1].multinode.nodeCount: must be >= 1, got 0"),
    "negative replicas": (
        with_role_change("replicas", -1),
        "InferenceService qwen: spec.roles[1].replicas: must be >= 0, got -1"),
    "missing template": (
        with_role_change("template", DELETE),
        "InferenceService qwen: spec.roles[1].template: is required for componentType decoder"),
    "missing containers": (
        with_role_change("template.spec.containers", DELETE),
        "InferenceService qwen: spec.roles[1].template.spec.containers: is required"),
    "empty containers": (
        with_role_change("template.spec.containers", []),
        "InferenceService qwen: spec.roles[1].template.spec.containers: must have at least 1 item(s), got 0"),
    "unknown field": (
        with_role_change("replica", 2),
        "InferenceService qwen: spec.roles[1].replica: unknown field (allowed: autoscaling, canaryOf, componentType, "
        "disruptionBudget, endpointPicker, endpointPickerConfig, frontend, gateway, httproute, inferencePaths, model, "
        "modelNames, modelRewrites, models, multinode, name, networkTopology, poolAPIVersion, recoveryPolicy, "
        "replicas, rollout, service, sharedGateway, strategy, targetPort, template)"),
    "a serving role turned router": (
        with_role_change("componentType", "router"),
        "InferenceService qwen: spec.roles[1].multinode: only allowed on componentType worker, prefiller or decoder, "
        "not router: a router's pods are its endpoint pickers, set up by endpointPicker (their number by "
        "endpointPicker.replicas), and clients reach it through its Gateway"),
    "LWS name over 63": (
        with_role_change("name", "d" * 60, name="svc"),
        f"InferenceService svc: spec.roles[1].name: LeaderWorkerSet name 'svc-{'d' * 60}-1' would be "
        "66 characters, over the limit of 63; shorten the InferenceService or role name"),
    "worker pod name over 63": (
        with_role_change("name", "d" * 53, name="svc"),
        f"InferenceService svc: spec.roles[1].name: StatefulSet name 'svc-{'d' * 53}-1' would be "
        "59 characters, over the limit of 52; shorten the InferenceService or role name"),
    "malformed YAML": (
        "---\napiVersion: v1\nkind: ConfigMap\n---\n# Source: chart/templates/y.yaml\n"
        "apiVersion: fusioninfer.io/v1alpha1\nkind: InferenceService\nmetadata: {name: [x\n",
        "document 2 (chart/templates/y.yaml): malformed YAML: did not find expected ',' or ']' "
        "(line 9 of the input)"),
    "shell-form command on a multi-node role": (
        with_role_change("template.spec.containers", [{"name": "vllm", "image": "vllm/vllm-openai:v0.11.0",
                                                       "command": ["sh", "-c"], "args": ["vllm serve m"]}]),
        "InferenceService qwen: spec.roles[1].template.spec.containers[0].args[0]: bootstrap ray gives it flags "
        "of its own, but the script cannot pass flags to its engine (its last command is 'vllm', no exec): end it "
        "by exec'ing the engine with \"$@\" last (exec vllm serve … \"$@\"), and flags given as the script's "
        "arguments reach it"),
    "bad quantity": (
        with_role_change("template.spec.containers", [{"name": "vllm", "image": "vllm/vllm-openai:v0.11.0",
                                                       "args": ["m", "--kv-transfer-config.kv_connector", "Nixl"],
                                                       "resources": {"requests": {"cpu": "lots"}}}]),
        "InferenceService qwen: spec.roles[1].template.spec.containers[0].resources.requests.cpu: not a quantity: "
        "'lots'"),
    "scheduler override": (
        with_role_change("template.spec.schedulerName", "default-scheduler"),
        "InferenceService qwen: spec.roles[1].template.spec.schedulerName: is set by the expansion to "
        "'volcano', not 'default-scheduler'; set spec.schedulingStrategy.schedulerName instead"),
    "resources not a map": (
        with_role_change("template.spec.containers", [{"name": "vllm", "image": "x",
                                                       "resources": {"limits": "8"}}]),
        "InferenceService qwen: spec.roles[1].template.spec.containers[0].resources.limits: must be of type "
        "object, got string"),
    "fractional number as a quantity": (
        with_role_change("template.spec.containers", [{"name": "vllm", "image": "x",
                                                       "resources": {"requests": {"cpu": 0.5}}}]),
        "InferenceService qwen: spec.roles[1].template.spec.containers[0].resources.requests.cpu: must be of "
        "type integer or string, got number"),
    "ports not a list": (
        with_role_change("template.spec.containers", [{"name": "vllm", "image": "x", "ports": "8000"}]),
        "InferenceService qwen: spec.roles[1].template.spec.containers[0].ports: must be of type array, "
        "got string"),
    "labels that are not strings": (
        yaml.safe_dump({**service(), "metadata": {"name": "qwen", "labels": {"tier": 1}}}),
        "InferenceService qwen: metadata.labels.tier: must be a string, got 1"),
    "a serving container without an image": (
        with_role_change("template.spec.containers", [{"name": "vllm", "image": None}]),
        "InferenceService qwen: spec.roles[1].template.spec.containers[0].image: is required: Kubernetes runs no "
        "container without an image (a template may leave it out; every pod made from it would be refused)"),
    "a pod label value Kubernetes refuses": (
        with_role_change("template.metadata", {"labels": {"app": "a b"}}),
        "InferenceService qwen: spec.roles[1].template.metadata.labels.app: must be a label value (at most 63 "
        "letters, digits, '-', '_' and '.', beginning and ending with a letter or digit), got 'a b'"),
    "an unquoted timestamp as a pod label, which Go reads as its text": (
        with_role_change("template.metadata", {"labels": {"when": "TIMESTAMP"}}).replace(
            "TIMESTAMP", "2024-01-01 12:00:00"),
        "InferenceService qwen: spec.roles[1].template.metadata.labels.when: must be a label value (at most 63 "
        "letters, digits, '-', '_' and '.', beginning and ending with a letter or digit), got '2024-01-01 "
        "12:00:00'"),
    "an env entry that is no mapping, where reading the weights adds to env": (
        with_model_and_decode_container({"env": ["HF_HOME=/x"]}),
        "InferenceService qwen: spec.roles[1].template.spec.containers[0].env[0]: must be of type object, got "
        "string"),
    "a lifecycle that is no mapping, where the drain adds a preStop": (
        with_model_and_decode_container({"lifecycle": ["preStop"]}),
        "InferenceService qwen: spec.roles[1].template.spec.containers[0].lifecycle: must be of type object, got "
        "array"),
    "a GPU limit of 5,000 digits": (
        with_model_and_decode_container({"resources": {"limits": {"nvidia.com/gpu": "9" * 5000}}}),
        f"InferenceService qwen: spec.roles[1].template.spec.containers[0].resources.limits.nvidia.com/gpu: not a "
        f"quantity: {show('9' * 5000)}"),
    "a tensor-parallel size of 5,000 digits": (
        with_model_and_decode_container({"args": ["--model", "deepseek-ai/DeepSeek-R1", "--tensor-parallel-size",
                                                  "9" * 5000]}),
        f"InferenceService qwen: spec.roles[1].template.spec.containers[0].args[2]: must be a size of at most 18 "
        f"digits, got {show('9' * 5000)}"),
    "a control character": (
        "---\n# Source: chart/templates/y.yaml\napiVersion: fusioninfer.io/v1alpha1\nkind: InferenceService\n"
        "metadata: {name: \"q\x07\"}\n",
        "document 1 (chart/templates/y.yaml): malformed YAML: character U+0007 is not allowed in YAML (a control "
        "character), at line 5 of the input"),
    "a weights source in none of the forms": (
        yaml.safe_dump({**service(), "spec": {**service()["spec"],
                                              "model": {"source": "huggingface.co/Qwen/Qwen3-8B"}}}),
        "InferenceService qwen: spec.model.source: must be a weights source in one of three forms: hf://ORG/NAME (a "
        "Hugging Face model, e.g. hf://Qwen/Qwen3-8B), s3://BUCKET/PATH (e.g. s3://models/qwen3-8b) or "
        "pvc://CLAIM/PATH (e.g. pvc://models/qwen3-8b), got 'huggingface.co/Qwen/Qwen3-8B'"),
    "wrong version": (
        yaml.safe_dump({**service(), "apiVersion": "fusioninfer.io/v2"}),
        "InferenceService qwen: apiVersion: must be fusioninfer.io/v1alpha1, got 'fusioninfer.io/v2'"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_gives_one_clear_error(case: str) -> None:
    text, message = CASES[case]
    result = postrender(stdin=text)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == f"fusion-postrender: {message}\n"


def test_the_valid_baseline_renders() -> None:
    result = postrender(stdin=yaml.safe_dump(service()))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("kind: LeaderWorkerSet") == 3


@pytest.mark.parametrize("values,message", [
    ({"roles": [{"name": "a", "componentType": "worker", "multinode": {"nodeCount": 0},
                 "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}]}, "nodeCount"),
    ({"roles": [{"name": "a", "componentType": "encoder"}]}, "componentType"),
    ({"roles": [{"name": "a", "componentType": "worker", "replicas": -1}]}, "replicas"),
    ({"rolez": []}, "rolez"),
    # One short pattern a form of weights source, where one long one hid them.
    ({"model": {"source": "huggingface.co/Qwen/Qwen3-8B"}, "roles": []}, "'^hf://[A-Za-z0-9][-A-Za-z0-9_.]*/"),
])
def test_chart_values_schema_rejects_bad_values(helm: Helm, tmp_path, values, message: str) -> None:
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    result = helm.template(path, post_render=False, check=False)
    assert result.returncode != 0
    assert message in result.stderr
    assert "values don't meet the specifications of the schema" in result.stderr


BROKEN_STORY4_MESSAGE = ("InferenceService deepseek-r1-disagg: spec.roles[1].template.spec.containers[0].args[0]: "
                         "bootstrap ray gives it flags of its own, but the script cannot pass flags to its engine")


def broken_story4(tmp_path: Path) -> Path:
    """Story 4 with a decode command the post-renderer refuses (and the values schema takes)."""
    values = yaml.safe_load((VALUES / "story4-pd-multinode-deepseek-r1.yaml").read_text())
    values["roles"][1]["template"]["spec"]["containers"][0]["command"] = ["sh", "-c"]
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    return path


def test_helm_applies_nothing_when_the_post_renderer_fails_and_shows_its_reason(helm: Helm, tmp_path: Path) -> None:
    """Helm 3 shows a post-renderer's standard error; Helm 4.1 keeps a plugin's to itself, and the plugin
    hands it on to helm's."""
    result = helm.template(broken_story4(tmp_path), check=False)
    assert result.returncode != 0
    assert result.stdout == ""
    assert f"fusion-postrender: {BROKEN_STORY4_MESSAGE}" in result.stderr, result.stderr
    if helm.major == 4:
        assert result.stderr.index(BROKEN_STORY4_MESSAGE) < result.stderr.index(
            'plugin "fusion-postrender" exited with error')


def test_without_the_plugin_handing_it_on_helm_4_shows_no_reason(tmp_path: Path) -> None:
    """The protection above, taken away: the plugin running the post-renderer bare."""
    plugins = tmp_path / "plugins"
    shutil.copytree(PLUGIN, plugins / PLUGIN.name)
    shutil.copytree(CLI_PLUGIN, plugins / CLI_PLUGIN.name)
    (plugins / PLUGIN.name / "fusion-postrender.sh").write_text('#!/bin/sh\nexec fusion-postrender "$@"\n')
    bare = make_helm(4, tmp_path / "home", plugins=plugins)
    result = bare.template(broken_story4(tmp_path), check=False)
    assert result.returncode != 0 and result.stdout == ""
    assert 'plugin "fusion-postrender" exited with error' in result.stderr
    assert BROKEN_STORY4_MESSAGE not in result.stderr


def test_helm_4_s_message_is_whole_when_its_standard_error_is_a_file(helm4: Helm, tmp_path: Path) -> None:
    """A file helm writes at its own offset gets no second writer: helm's message stays as helm wrote it.
    (Helm 3 shows the post-renderer's standard error itself.)"""
    helm = helm4
    args = ["template", "release", CHART, "--no-hooks", "-f", broken_story4(tmp_path),
            "--post-renderer", "fusion-postrender"]
    errors = tmp_path / "errors.txt"
    with errors.open("w") as file:
        result = subprocess.run([str(helm.path), *map(str, args)], env=helm.env(), stdout=subprocess.PIPE,
                                stderr=file, stdin=subprocess.DEVNULL, start_new_session=True)
    assert result.returncode != 0 and result.stdout == b""
    written = errors.read_text()
    assert written.startswith("Error: error while running post render on files: "), written
    assert written.endswith("Use --debug flag to render out invalid YAML\n"), written  # nothing of ours after


def test_the_readme_s_way_to_read_a_refusal_without_the_post_renderer(helm: Helm, tmp_path: Path) -> None:
    raw = helm.template(broken_story4(tmp_path), post_render=False).stdout
    validated = subprocess.run(["fusion-helm", "validate", "-"], input=raw, text=True,
                               capture_output=True, env={"PATH": tool_path()})
    assert validated.returncode == 1 and validated.stdout == ""
    assert validated.stderr.startswith(
        f"fusion-helm: standard input: {BROKEN_STORY4_MESSAGE} (its last command is '--model', no exec): ")


def test_validate_given_nothing_says_so_rather_than_valid(helm: Helm, tmp_path: Path) -> None:
    """Helm refusing the values prints nothing; the validator after the pipe must not call that valid."""
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump({"roles": [{"name": "a", "componentType": "worker", "replicas": -1}]}))
    shell = f"{helm.path} template release {CHART} -f {path} | fusion-helm validate -"
    result = subprocess.run(["sh", "-c", shell], text=True, capture_output=True, env=helm.env())
    assert result.returncode == 1 and result.stdout == ""
    assert "values don't meet the specifications of the schema" in result.stderr
    assert result.stderr.endswith("fusion-helm: standard input: no YAML documents to validate (if this is a pipe, "
                                  "the command before it printed nothing: read its error above)\n"), result.stderr
