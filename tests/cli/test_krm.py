"""fusion-krm, the KRM function: the same expansion as the post-renderer over a ResourceList's items,
its options from the functionConfig, and errors as KRM results with the post-renderer's words."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helm import VALUES, Helm, postrender
from tests.support import LWS_CHART, by_key, objects

KRM = str(Path(sys.executable).parent / "fusion-krm")
STORIES = sorted(path.name for path in VALUES.glob("*.yaml"))


def krm(text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KRM], input=text, text=True, capture_output=True, timeout=120)


def resource_list(items: list[dict[str, Any]], function_config: dict[str, Any] | None = None) -> str:
    body: dict[str, Any] = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    if function_config is not None:
        body["functionConfig"] = function_config
    return yaml.safe_dump(body, sort_keys=False)


def config_map(**data: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fusion-krm"}, "data": data}


def expanded(text: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    result = krm(text)
    assert result.returncode == 0, result.stderr
    out = yaml.safe_load(result.stdout)
    assert (out["apiVersion"], out["kind"], out.get("results")) == ("config.kubernetes.io/v1", "ResourceList", None)
    return out["items"], out


@pytest.mark.parametrize("story", STORIES)
def test_items_expand_to_the_post_renderers_objects(helm4: Helm, story: str) -> None:
    chart = objects(helm4.template(VALUES / story, post_render=False, hooks=True).stdout)
    post_rendered = objects(helm4.template(VALUES / story, hooks=True).stdout)
    items, _ = expanded(resource_list(chart))
    assert by_key(items) == by_key(post_rendered)


@pytest.mark.parametrize("story", ["story4-pd-multinode-deepseek-r1.yaml", "router-pd-qwen3-8b.yaml"])
def test_a_disaggregated_set_is_the_post_renderers_too(helm4: Helm, story: str) -> None:
    layout = ("--set", "layout=disaggregated")
    chart = objects(helm4.template(VALUES / story, post_render=False, hooks=True, extra=layout).stdout)
    post_rendered = objects(helm4.template(VALUES / story, hooks=True, extra=layout).stdout)
    items, _ = expanded(resource_list(chart))
    assert by_key(items) == by_key(post_rendered)
    assert any(item["kind"] == "DisaggregatedSet" for item in items)


def test_output_is_deterministic_and_expanding_it_again_changes_nothing(helm4: Helm) -> None:
    chart = objects(helm4.template(VALUES / "story4-pd-multinode-deepseek-r1.yaml", post_render=False).stdout)
    first = krm(resource_list(chart)).stdout
    assert krm(resource_list(chart)).stdout == first
    assert krm(first).stdout == first


def test_function_config_takes_over_every_leader_worker_set_in_a_layout(helm4: Helm) -> None:
    chart = objects(helm4.template(chart=LWS_CHART, post_render=False).stdout)
    for data, flags in [({}, []), ({"take-over-lws": "true"}, ["--take-over-lws"]),
                        ({"take-over-lws": True, "take-over-layout": "role"},
                         ["--take-over-lws", "--take-over-layout=role"])]:
        want = postrender(*flags, stdin=yaml.safe_dump_all(chart, sort_keys=False))
        assert want.returncode == 0, want.stderr
        items, _ = expanded(resource_list(chart, config_map(**data)))
        assert by_key(items) == by_key(objects(want.stdout)), flags


def test_kustomize_annotations_pass_through_and_generated_objects_carry_none_of_them() -> None:
    service = yaml.safe_load((VALUES / "story1-monolithic-qwen3-8b.yaml").read_text())
    item = {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
            "metadata": {"name": "qwen", "annotations": {"config.kubernetes.io/index": "0",
                                                         "config.k8s.io/id": "1"}},
            "spec": {"roles": service["roles"]}}
    items, _ = expanded(resource_list([item]))
    assert items[0] == item
    assert [obj["kind"] for obj in items[1:]] == ["LeaderWorkerSet", "NetworkPolicy"]
    assert "annotations" not in items[1]["metadata"]


def failure(text: str) -> tuple[dict[str, Any], str]:
    result = krm(text)
    assert result.returncode == 1
    out = yaml.safe_load(result.stdout)
    assert (out["kind"], out["items"]) == ("ResourceList", [])
    [entry] = out["results"]
    assert entry["severity"] == "error"
    assert result.stderr == f"fusion-krm: {entry['message']}\n"
    return entry, result.stderr


def test_a_bad_service_is_one_result_naming_the_object_and_field_in_the_post_renderers_words() -> None:
    service = yaml.safe_load((VALUES / "story1-monolithic-qwen3-8b.yaml").read_text())
    service["roles"][0]["multinode"] = {"nodeCount": 0}
    item = {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
            "metadata": {"name": "qwen", "namespace": "serving",
                         "annotations": {"internal.config.kubernetes.io/path": "qwen.yaml",
                                         "internal.config.kubernetes.io/index": "2"}},
            "spec": {"roles": service["roles"]}}
    entry, _ = failure(resource_list([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}, item]))
    post_renderer = postrender(stdin=yaml.safe_dump(item))
    assert post_renderer.returncode == 1 and post_renderer.stdout == ""
    assert post_renderer.stderr == f"fusion-postrender: {entry['message']}\n"
    assert entry == {
        "message": "InferenceService qwen: spec.roles[0].multinode.nodeCount: must be >= 1, got 0",
        "severity": "error",
        "resourceRef": {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService", "name": "qwen",
                        "namespace": "serving"},
        "field": {"path": "spec.roles[0].multinode.nodeCount"},
        "file": {"path": "qwen.yaml", "index": 2},
    }


def test_an_item_named_by_a_generated_object_is_refused_with_both_named() -> None:
    service = yaml.safe_load((VALUES / "story1-monolithic-qwen3-8b.yaml").read_text())
    item = {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService", "metadata": {"name": "qwen"},
            "spec": {"roles": service["roles"]}}
    other = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
             "metadata": {"name": "qwen-inference-0"}, "spec": {}}
    entry, _ = failure(resource_list([item, other]))
    assert entry["resourceRef"]["name"] == "qwen"
    assert "makes LeaderWorkerSet qwen-inference-0, which the stream already has (document 2)" in entry["message"]


@pytest.mark.parametrize(("text", "message"), [
    ("", "ResourceList: must be a ResourceList mapping"),
    ("[]\n", "ResourceList: must be a ResourceList mapping"),
    ("apiVersion: v1\nkind: List\nitems: []\n", "ResourceList: kind: must be kind ResourceList"),
    ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: {}\n", "ResourceList: items: must be a list"),
    ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [1]\n",
     "ResourceList: items[0]: must be a mapping (an object)"),
    ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nitems: []\n",
     "ResourceList: items: given twice"),
    ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {a: 1, a: 2}\n",
     "ResourceList: items[0].a:"),
    ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [\n", "ResourceList: malformed YAML"),
    ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: {kind: Foo}\n",
     "functionConfig: must be a v1 ConfigMap"),
    ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n"
     "  metadata: {name: f}\n  data: {take-over: 'true'}\n",
     "functionConfig ConfigMap f: data.take-over: unknown option"),
    ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n"
     "  data: {take-over-lws: 'yes'}\n",
     "functionConfig: data.take-over-lws: must be \"true\" or \"false\", got 'yes'"),
    ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n"
     "  data: {take-over-layout: roles}\n",
     "functionConfig: data.take-over-layout: must be one of replica, role, got 'roles'"),
    ("\xff", "standard input: not UTF-8 text"),
])
def test_a_resource_list_that_cannot_be_read_is_one_result(text: str, message: str) -> None:
    result = subprocess.run([KRM], input=text.encode("latin-1") if text == "\xff" else text.encode(),
                            capture_output=True, timeout=60)
    assert result.returncode == 1
    out = yaml.safe_load(result.stdout)
    [entry] = out["results"]
    assert out["items"] == [] and entry["message"].startswith(message), entry
    assert result.stderr.decode() == f"fusion-krm: {entry['message']}\n"
    assert "Traceback" not in result.stderr.decode()


def test_help_and_usage() -> None:
    assert "functionConfig" in subprocess.run([KRM, "--help"], capture_output=True, text=True, check=True).stdout
    result = subprocess.run([KRM, "--take-over-lws"], capture_output=True, text=True)
    assert result.returncode == 2 and "unrecognized argument: --take-over-lws" in result.stderr
