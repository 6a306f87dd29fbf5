"""The post-renderer is total: any input gets valid output or one clear error — never a traceback, a
hang or an object the API server would reject. One test per class of input seen to break it."""

from __future__ import annotations

import copy
import random
import time
from typing import Any

import pytest
import yaml

from fusion_helm import InvalidSpec, render
from fusion_helm.limits import MAX_DEPTH, MAX_REPLICAS
from fusion_helm.options import Options
from tests.builders import role, service
from tests.helm import VALUES

PLACEHOLDER = "PLACEHOLDER"


def stream(obj: dict[str, Any], **text: str) -> str:
    """OBJ as YAML, with each PLACEHOLDER_<name> value replaced by the raw text given for it."""
    out = yaml.safe_dump(obj, sort_keys=False)
    for name, raw in text.items():
        out = out.replace(f"{PLACEHOLDER}_{name}", raw)
    return out


def pd_service(**container: Any) -> dict[str, Any]:
    return service(role("prefill", "prefiller", replicas=2, nodes=2, **container), role("decode", replicas=2))


def refused(text: str, take_over: bool = False) -> str:
    with pytest.raises(InvalidSpec) as error:
        render(text, Options(take_over_every_leader_worker_set=take_over))
    message = str(error.value)
    assert "\n" not in message and "Traceback" not in message and "sys.set_int_max_str_digits" not in message
    return message


def with_value(path: str, raw: str) -> str:
    """The P/D service with the field at PATH (dots; [i] for list items) written as RAW YAML text."""
    obj = pd_service()
    node: Any = obj
    *parents, last = path.replace("[", ".[").split(".")
    for part in parents:
        node = node[int(part[1:-1])] if part.startswith("[") else node.setdefault(part, {})
    node[last] = f"{PLACEHOLDER}_X"
    return stream(obj, X=raw)


# 1. What PyYAML parses but cannot construct: ours is refused by field, the rest passes through untouched.
UNCONSTRUCTABLE = {"!!int word": "'word' is not an integer, as its tag !!int says",
                   "!!bool maybe": "'maybe' is not a boolean, as its tag !!bool says",
                   "!!timestamp yesterday": "'yesterday' is not a timestamp, as its tag !!timestamp says",
                   "!!float x": "'x' is not a number, as its tag !!float says",
                   "!!null x": "'x' is not null, as its tag !!null says",
                   "!!binary '%%%'": "!!binary that is not base64 of UTF-8 text",
                   "!!python/name:os.system ''": "unsupported tag '!!python/name:os.system'",
                   "!!set {a: null}": "unsupported tag '!!set'", "!!seq x": "the tag '!!seq' does not fit a scalar",
                   "!custom x": "unsupported tag '!custom'"}


@pytest.mark.parametrize("raw", sorted(UNCONSTRUCTABLE))
def test_a_value_yaml_cannot_construct_is_refused_by_field(raw: str) -> None:
    message = refused(with_value("spec.roles[0].template.spec.containers[0].image", raw))
    assert message == f"InferenceService svc: spec.roles[0].template.spec.containers[0].image: {UNCONSTRUCTABLE[raw]}"


@pytest.mark.parametrize("raw", [*sorted(UNCONSTRUCTABLE), "9" * 5000, "-" + "1" * 4400])
def test_a_value_yaml_cannot_construct_passes_through_a_document_we_do_not_own(raw: str) -> None:
    text = f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata:\n  a: {raw}\n"
    assert render(text + "---\n" + with_value("spec.roles[1].replicas", "1")).startswith(text)


def test_an_integer_of_thousands_of_digits_is_the_string_go_reads() -> None:
    message = refused(with_value("spec.roles[1].replicas", "9" * 5000))
    assert message == "InferenceService svc: spec.roles[1].replicas: must be of type integer, got string"


# 2. Odd keys and types: one clear error naming the field, or accepted where Kubernetes accepts it.
@pytest.mark.parametrize("key,kind", [("1", "an integer"), ("~", "null"), ("on", "a boolean"), ("1.5", "a number"),
                                      ("2020-01-01", None)])
def test_mapping_keys_must_be_strings_as_go_reads_them(key: str, kind: str | None) -> None:
    obj = pd_service()
    obj["metadata"]["labels"] = {f"{PLACEHOLDER}_K": "a", "team": "a"}
    text = stream(obj, K=key)
    if kind is None:  # a timestamp key is a string to Go: accepted
        assert "LeaderWorkerSet" in render(text)
        return
    assert refused(text) == (f"InferenceService svc: metadata.labels: key {key!r} is read as {kind} by YAML 1.1 "
                             "readers such as Helm's and kubectl's: quote it")


@pytest.mark.parametrize("where", ["metadata.labels", "spec.roles[0].template.spec.containers[0].resources.limits",
                                   "spec.roles[0].template.metadata.annotations", "spec.roles[0].template.spec"])
def test_mixed_keys_anywhere_are_refused_naming_the_mapping(where: str) -> None:
    obj = pd_service()
    node: Any = obj
    for part in where.replace("[", ".[").split("."):
        node = node[int(part[1:-1])] if part.startswith("[") else node.setdefault(part, {})
    node[f"{PLACEHOLDER}_K"] = "1"
    assert refused(stream(obj, K="7")).startswith(f"InferenceService svc: {where}: key '7' is read as an integer")


def test_a_date_where_a_string_is_expected_is_the_string_go_reads() -> None:
    out = render(with_value("spec.roles[1].template.spec.containers[0].image", "2020-01-01"))
    assert "image: '2020-01-01'" in out


@pytest.mark.parametrize("path,raw,message", [
    ("spec.roles[1].template.spec.containers[0].image", "[a]", "must be of type string, got array"),
    ("metadata.namespace", "[a]", "must be a DNS label (at most 63 lowercase letters, digits and '-'), got a list"),
    ("spec.roles[1].template.spec.restartPolicy", "[a]", "must be of type string, got array"),
    ("spec.roles[1].template.spec.containers[0].env", "{a: b}", "must be of type array, got object"),
    ("spec.roles[1].replicas", "1.5", "must be of type integer, got number"),
])
def test_a_value_of_the_wrong_type_is_refused_by_field(path: str, raw: str, message: str) -> None:
    assert refused(with_value(path, raw)) == f"InferenceService svc: {path}: {message}"


def test_a_list_namespace_on_a_document_we_do_not_own_passes_through() -> None:
    text = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: [a]}\n"
    assert render(text + "---\n" + with_value("spec.roles[1].replicas", "1")).startswith(text)


def test_a_null_field_is_pruned_as_the_api_server_prunes_it() -> None:
    out = render(with_value("spec.roles[1].recoveryPolicy", "null"))
    assert "restartPolicy: RecreateGroupOnPodRestart" in out


# 3. Bounded work.
def test_deep_nesting_is_refused_at_once() -> None:
    start = time.perf_counter()
    message = refused(with_value("spec.roles[1].template.spec.containers[0].env", "[" * 5000 + "]" * 5000))
    assert message == f"document 1: nested deeper than {MAX_DEPTH} levels"
    assert time.perf_counter() - start < 5  # a bound, not a benchmark: libyaml alone takes minutes here


def test_deep_nesting_in_a_document_we_do_not_own_is_never_read() -> None:
    text = "---\napiVersion: v1\nkind: ConfigMap\ndata: " + "[" * 100_000 + "]" * 100_000 + "\n"
    assert render(text) == text


def test_a_billion_laughs_in_a_pod_template_is_refused() -> None:
    laughs = "[" + ", ".join(["lol"] * 9) + "]"
    anchors = "".join(f"      x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 10))
    text = with_value("spec.roles[1].template.metadata", "\n      x0: &a0 " + laughs + "\n" + anchors.rstrip("\n"))
    assert "the document holds more than 200,000 values once its aliases are expanded" in refused(text)


@pytest.mark.parametrize("quantity,message", [
    ("1e999999999", "out of range: '1e999999999' (a quantity is below 2^63)"),
    ("9" * 30, f"out of range: '{'9' * 30}' (a quantity is below 2^63)"),
    ("-1", "must not be negative, got -1"),
    ("1" * 200, "not a quantity: '" + "1" * 78 + "…"),
])
def test_quantities_out_of_range_are_refused_at_once(quantity: str, message: str) -> None:
    text = with_value("spec.roles[1].template.spec.containers[0].resources", f"{{limits: {{cpu: '{quantity}'}}}}")
    assert refused(text).startswith(
        f"InferenceService svc: spec.roles[1].template.spec.containers[0].resources.limits.cpu: {message}")


def test_replicas_have_a_maximum() -> None:
    assert refused(with_value("spec.roles[1].replicas", str(MAX_REPLICAS + 1))) == \
        f"InferenceService svc: spec.roles[1].replicas: must be <= {MAX_REPLICAS}, got {MAX_REPLICAS + 1}"


def test_the_replicas_maximum_is_the_schemas() -> None:
    from fusion_helm.model.schema import api_source
    assert api_source()["spec"]["properties"]["roles"]["items"]["properties"]["replicas"]["maximum"] == MAX_REPLICAS


# 4. Never an invalid object: a violation of an upstream schema names the service's field.
def test_a_pod_template_field_the_api_server_would_refuse_is_named_in_the_role() -> None:
    message = refused(with_value("spec.roles[0].template.spec.containers[0].imagePullPolcy", "Always"))
    assert message.startswith("InferenceService svc: spec.roles[0].template.spec.containers[0].imagePullPolcy: "
                              "unknown field (allowed: args, command, env, envFrom, image, imagePullPolicy, ")
    message = refused(with_value("spec.roles[0].template.spec.nodeSelector", "{gpu: 8}"))
    assert message == ("InferenceService svc: spec.roles[0].template.spec.nodeSelector.gpu: must be of type string, "
                       "got integer")


def test_a_pod_template_list_map_may_not_repeat_a_key() -> None:
    message = refused(with_value("spec.roles[1].template.spec.containers[0].ports",
                                 "[{containerPort: 80}, {containerPort: 80, name: b}]"))
    assert message == ("InferenceService svc: spec.roles[1].template.spec.containers[0].ports[1]: "
                       "duplicate item with containerPort 80, protocol 'TCP' (also [0])")


def test_int32_fields_are_bounded() -> None:
    message = refused(with_value("spec.roles[1].template.spec.terminationGracePeriodSeconds", str(2**63)))
    assert message == ("InferenceService svc: spec.roles[1].template.spec.terminationGracePeriodSeconds: "
                       f"must be <= {2**63 - 1}, got {2**63}")
    message = refused(with_value("spec.roles[1].template.spec.containers[0].ports",
                                 f"[{{containerPort: 8000, hostPort: {2**31}}}]"))
    assert message.endswith(f"containers[0].ports[0].hostPort: must be <= {2**31 - 1}, got {2**31}")


# 7. Errors are one line, and name the document.
@pytest.mark.parametrize("name,shown", [("s\nv", "s\\nv"), ("a\u2028b", "a\\u2028b"), ("x" * 300, "x" * 79 + "…")])
def test_names_in_errors_are_escaped_and_cut(name: str, shown: str) -> None:
    obj = pd_service()
    obj["metadata"]["name"] = name
    assert refused(yaml.safe_dump(obj)).startswith(f"InferenceService {shown}: metadata.name: must be a DNS label")


def test_a_document_without_a_name_is_named_by_its_position() -> None:
    obj = pd_service()
    del obj["metadata"]["name"]
    text = "---\n# Source: c/templates/x.yaml\n" + yaml.safe_dump(obj)
    assert refused("---\napiVersion: v1\nkind: ConfigMap\n" + text) == \
        "InferenceService in document 2 (c/templates/x.yaml): metadata.name: is required"


# 8. Idempotent. 9. Collisions. 10. Take-over deadlock.
def test_post_rendering_a_post_rendered_stream_changes_nothing() -> None:
    once = render(yaml.safe_dump(pd_service()) + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    assert render(once) == once
    assert render(render(once)) == once


def test_another_object_of_a_generated_name_is_refused() -> None:
    clash = "---\napiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: svc-decode-1, " \
            "namespace: llm}\n"
    assert refused(yaml.safe_dump(pd_service()) + clash) == (
        "InferenceService svc: metadata.name: makes LeaderWorkerSet svc-decode-1 in namespace llm, which the stream "
        "already has (document 2); rename one")


def test_roles_whose_statefulsets_share_a_name_are_refused_naming_both() -> None:
    obj = service(role("a", "worker", replicas=2, nodes=2), role("a-1", "worker"))
    assert refused(yaml.safe_dump(obj)) == (
        "InferenceService svc: spec.roles[1].name: role 'a-1' replica 0's leader StatefulSet 'svc-a-1-0' is also "
        "role 'a' replica 1's worker StatefulSet (spec.roles[0].name); rename one of the roles")


def test_roles_are_refused_exactly_when_two_of_their_statefulsets_share_a_name() -> None:
    """Against every StatefulSet name enumerated, on random services of names that can meet."""
    rng = random.Random(5)
    for _ in range(300):
        names = rng.sample(["a", "a-1", "a-1-0", "a-10", "a-0", "b", "b-2"], rng.randint(2, 4))
        roles = [role(name, "worker", replicas=rng.randint(0, 12), nodes=rng.choice([1, 2])) for name in names]
        owners: dict[str, str] = {}
        clash = False
        for each in roles:
            for index in range(each["replicas"]):
                lws = f"svc-{each['name']}-{index}"
                for name in [lws, f"{lws}-0"] if "multinode" in each else [lws]:
                    clash |= owners.setdefault(name, each["name"]) != each["name"]
        text = yaml.safe_dump(service(*roles))
        assert ("rename one of the roles" in refused(text)) if clash else render(text), names


def test_exclusive_topology_is_refused_for_a_multi_node_take_over() -> None:
    lws = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
           "metadata": {"name": "x", "annotations": {"leaderworkerset.sigs.k8s.io/exclusive-topology": "rack"}},
           "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2, "workerTemplate": {
               "spec": {"containers": [{"name": "c", "image": "i"}]}}}}}
    assert refused(yaml.safe_dump(lws), take_over=True).startswith(
        "LeaderWorkerSet x: metadata.annotations.leaderworkerset.sigs.k8s.io/exclusive-topology: cannot be taken "
        "over with size > 1")
    single = copy.deepcopy(lws)
    single["spec"]["leaderWorkerTemplate"]["size"] = 1
    assert "x-group-0" in render(yaml.safe_dump(single), Options(take_over_every_leader_worker_set=True))


def test_a_list_restart_policy_in_a_taken_over_leader_worker_set_is_refused() -> None:
    lws = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": {"name": "x"},
           "spec": {"leaderWorkerTemplate": {"restartPolicy": ["None"], "workerTemplate": {
               "spec": {"containers": [{"name": "c", "image": "i"}]}}}}}
    assert refused(yaml.safe_dump(lws), take_over=True) == \
        "LeaderWorkerSet x: spec.leaderWorkerTemplate.restartPolicy: must be of type string, got array"


def test_yaml_inside_a_field_is_held_to_the_same_bounds() -> None:
    """An endpointPickerConfig (YAML in a string) nested 30,000 levels deep crashed libyaml's composer."""
    values = yaml.safe_load((VALUES / "router-pd-qwen3-8b.yaml").read_text())
    router = next(r for r in values["roles"] if r["componentType"] == "router")
    router.pop("strategy")
    router["endpointPickerConfig"] = "kind: EndpointPickerConfig\nx: " + "[" * 30_000 + "]" * 30_000
    obj = {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService", "metadata": {"name": "q"},
           "spec": {"roles": values["roles"]}}
    assert refused(yaml.safe_dump(obj)) == (f"InferenceService q: spec.roles[2].endpointPickerConfig: is not YAML: "
                                            f"nested deeper than {MAX_DEPTH} levels")
