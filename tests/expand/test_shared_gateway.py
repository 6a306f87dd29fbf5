"""A router on a shared Gateway (router.sharedGateway): its HTTPRoute attaches to that Gateway and matches
only the model names the service serves, on the header the body-based router sets; a canary's route
splits those requests with its stable pool. Each route validates against the Gateway API's CRD."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from fusion_helm import InvalidSpec
from fusion_helm.base.labels import MODEL_HEADER
from fusion_helm.model.router import INFERENCE_PATHS
from tests.builders import render, role, service
from tests.schemas import Validators, custom_resource_errors

SHARED = {"name": "inference-gateway", "namespace": "gateways"}
PORTS = [{"containerPort": 8000, "name": "http"}]


def shared_router(**fields: Any) -> dict[str, Any]:
    return {"name": "router", "componentType": "router", "sharedGateway": SHARED, **fields}


def route_of(*roles: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return render(service(*roles, **spec))["HTTPRoute/svc-router"]["spec"]


def matched_names(rule: dict[str, Any]) -> list[str]:
    """The model names RULE matches, in order (each is matched once per inference path)."""
    return list(dict.fromkeys(header["value"] for match in rule["matches"] for header in match["headers"]
                              if header["name"] == MODEL_HEADER))


def test_the_route_joins_the_shared_gateway_and_matches_the_served_names(validators: Validators) -> None:
    objects = render(service(role("w", "worker", ports=PORTS, args=["--model", "org/m", "--served-model-name",
                                                                   "m", "m-chat"]), shared_router()))
    route = objects["HTTPRoute/svc-router"]
    assert route["spec"]["parentRefs"] == [{"group": "gateway.networking.k8s.io", "kind": "Gateway",
                                            "name": "inference-gateway", "namespace": "gateways"}]
    [rule] = route["spec"]["rules"]
    assert matched_names(rule) == ["m", "m-chat"]
    assert all(header["type"] == "Exact" for match in rule["matches"] for header in match["headers"])
    assert rule["backendRefs"] == [{"group": "inference.networking.k8s.io", "kind": "InferencePool",
                                    "name": "svc-router"}]
    assert "Gateway/svc-router" not in objects  # the shared one is not the service's
    assert custom_resource_errors(validators, list(objects.values())) == {}


def test_without_served_names_the_model_and_the_adapters_are_matched() -> None:
    spec = {"model": {"source": "hf://org/base", "revision": "a" * 40,
                      "adapters": [{"name": "sql", "source": "hf://org/sql-lora", "revision": "b" * 40}]},
            "modelCache": {"size": "100Gi"}}
    [rule] = route_of(role("w", "worker", ports=PORTS, args=[]), shared_router(), **spec)["rules"]
    assert matched_names(rule) == ["org/base", "sql"]


def test_each_user_match_is_kept_once_per_model_name() -> None:
    team = [{"name": "x-team", "value": "a"}]
    rules = [{"matches": [{"path": {"type": "PathPrefix", "value": "/v1/chat"}},
                          {"path": {"type": "Exact", "value": "/generate"}, "headers": team}],
              "timeouts": {"request": "300s"}}]
    router = shared_router(httproute={"rules": rules}, modelNames=["a", "b"], inferencePaths=["/generate"])
    [rule] = route_of(role("w", "worker", ports=PORTS), router)["rules"]
    assert [(m["path"]["value"], [h["value"] for h in m["headers"]]) for m in rule["matches"]] == [
        ("/v1/chat/completions", ["a"]), ("/v1/chat/completions", ["b"]), ("/generate", ["a", "a"]),
        ("/generate", ["a", "b"])]
    assert rule["timeouts"] == {"request": "300s"}


def test_a_canary_splits_its_names_requests_with_the_stable_pool_and_matches_post(validators: Validators) -> None:
    objects = render(service(role("w", "worker", ports=PORTS),
                             shared_router(canaryOf={"inferencePool": "stable-router", "weight": 10})))
    [rule] = objects["HTTPRoute/svc-router"]["spec"]["rules"]
    assert [(ref["name"], ref["weight"]) for ref in rule["backendRefs"]] == [("stable-router", 90), ("svc-router", 10)]
    assert [match["method"] for match in rule["matches"]] == ["POST"] * 4  # once per inference path
    assert custom_resource_errors(validators, list(objects.values())) == {}


def test_a_canary_on_a_gateway_of_its_own_splits_every_request() -> None:
    router = {"name": "router", "componentType": "router", "gateway": {"gatewayClassName": "istio", "listeners": [
        {"name": "http", "protocol": "HTTP", "port": 80}]}, "canaryOf": {"inferencePool": "old-router", "weight": 25}}
    [rule] = route_of(role("w", "worker", ports=PORTS), router)["rules"]
    assert [match["path"]["value"] for match in rule["matches"]] == list(INFERENCE_PATHS)  # no model header
    assert [ref.get("weight") for ref in rule["backendRefs"]] == [75, 25]


def test_adapters_the_engine_loads_at_start_are_matched_by_name() -> None:
    args = ["--model", "org/base", "--enable-lora", "--lora-modules", "sql=/adapters/sql",
            '{"name": "chat", "path": "/adapters/chat"}', "--max-loras", "2"]
    [rule] = route_of(role("w", "worker", ports=PORTS, args=args), shared_router())["rules"]
    assert matched_names(rule) == ["org/base", "sql", "chat"]


def test_rewrites_become_one_inference_model_rewrite_and_their_names_are_matched(validators: Validators) -> None:
    rewrites = [{"model": "sql", "targets": [{"model": "sql-v1", "weight": 90}, {"model": "sql-v2", "weight": 10}]},
                {"model": "chat", "targets": [{"model": "chat-v2"}]}]
    objects = render(service(role("w", "worker", ports=PORTS),
                             shared_router(endpointPicker={"generation": "llm-d-router"}, modelRewrites=rewrites)))
    rewrite = objects["InferenceModelRewrite/svc-router"]
    assert rewrite["apiVersion"] == "llm-d.ai/v1alpha2"
    assert rewrite["spec"] == {
        "poolRef": {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "svc-router"},
        "rules": [{"matches": [{"model": {"type": "Exact", "value": "sql"}}],
                   "targets": [{"modelRewrite": "sql-v1", "weight": 90}, {"modelRewrite": "sql-v2", "weight": 10}]},
                  {"matches": [{"model": {"type": "Exact", "value": "chat"}}],
                   "targets": [{"modelRewrite": "chat-v2"}]}]}
    [rule] = objects["HTTPRoute/svc-router"]["spec"]["rules"]
    assert matched_names(rule) == ["m", "sql", "chat"]
    assert custom_resource_errors(validators, list(objects.values())) == {}
    # The picker may read them: its Role grants the rewrites of its group. The Inference Extension's v1.5
    # picker reads them in its own group.
    gie = render(service(role("w", "worker", ports=PORTS),
                         shared_router(endpointPicker={"generation": "gie-v1.5"}, modelRewrites=rewrites)))
    assert gie["InferenceModelRewrite/svc-router"]["apiVersion"] == "inference.networking.x-k8s.io/v1alpha2"
    assert custom_resource_errors(validators, list(gie.values())) == {}
    granted = {(rule["apiGroups"][0], resource) for rule in objects["Role/svc-router-epp"]["rules"]
               for resource in rule["resources"]}
    assert ("llm-d.ai", "inferencemodelrewrites") in granted


WORKER = role("w", "worker", ports=PORTS)
REWRITE = {"model": "sql", "targets": [{"model": "sql-v1", "weight": 1}, {"model": "sql-v2", "weight": 1}]}
GATEWAY = {"gatewayClassName": "istio", "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}
ERRORS: dict[str, tuple[list[dict[str, Any]], str, str]] = {
    "a gateway of its own too": (
        [WORKER, shared_router(gateway=GATEWAY)], "spec.roles[1].gateway",
        "give gateway (a Gateway of the service's own) or sharedGateway (one many services share), not both"),
    "parentRefs of its own": (
        [WORKER, shared_router(httproute={"parentRefs": [{"name": "other"}]})], "spec.roles[1].httproute.parentRefs",
        "is sharedGateway's to write"),
    "model names without a shared gateway": (
        [WORKER, {"name": "router", "componentType": "router", "gateway": GATEWAY, "modelNames": ["m"]}],
        "spec.roles[1].modelNames", "the router has no sharedGateway"),
    "a model name twice": (
        [WORKER, shared_router(modelNames=["m", "n", "m"])], "spec.roles[1].modelNames[2]",
        "duplicate model name 'm' (also spec.roles[1].modelNames[0])"),
    "a match of the model header": (
        [WORKER, shared_router(httproute={"rules": [{"matches": [{"headers": [
            {"name": "x-gateway-model-name", "value": "m"}]}]}]})],
        "spec.roles[1].httproute.rules[0].matches[0].headers", "match X-Gateway-Model-Name, which sharedGateway"),
    "too many matches": (
        [WORKER, shared_router(modelNames=[f"m{i}" for i in range(33)], httproute={"rules": [{"matches": [
            {"path": {"type": "Exact", "value": "/v1/completions"}},
            {"path": {"type": "Exact", "value": "/v1/embeddings"}}]}]})],
        "spec.roles[1].httproute.rules[0].matches",
        "would have 66 matches (33 model names, each for each match and inference path)"),
    "a path the engines serve beside inference": (
        [WORKER, shared_router(httproute={"rules": [{"matches": [
            {"path": {"type": "PathPrefix", "value": "/v1/load_lora_adapter"}}]}]})],
        "spec.roles[1].httproute.rules[0].matches[0].path",
        "matches PathPrefix '/v1/load_lora_adapter', which holds none of the inference paths"),
    "a path that is not an inference path's prefix": (
        [WORKER, shared_router(httproute={"rules": [{"matches": [
            {"path": {"type": "RegularExpression", "value": "/v1/.*"}}]}]})],
        "spec.roles[1].httproute.rules[0].matches[0].path", "add the path to spec.roles[1].inferencePaths"),
    "an inference path twice": (
        [WORKER, shared_router(inferencePaths=["/v1/models", "/v1/completions"])],
        "spec.roles[1].inferencePaths[1]", "duplicate path '/v1/completions' (always matched)"),
    "a script that names no model": (
        [role("w", "worker", ports=PORTS, command=["sh", "-c", "exec my-server"], args=[]), shared_router()],
        "spec.roles[1].modelNames", "is required: the engine of role w names no model"),
    "a canary of its own pool": (
        [WORKER, shared_router(canaryOf={"inferencePool": "svc-router", "weight": 5})],
        "spec.roles[1].canaryOf.inferencePool", "is this service's own pool 'svc-router'"),
    "a canary weight of 100": (
        [WORKER, shared_router(canaryOf={"inferencePool": "old-router", "weight": 100})],
        "spec.roles[1].canaryOf.weight", "must be <= 99, got 100"),
    "a canary's own method": (
        [WORKER, shared_router(canaryOf={"inferencePool": "old-router", "weight": 5},
                               httproute={"rules": [{"matches": [{"method": "GET"}]}]})],
        "spec.roles[1].httproute.rules[0].matches[0].method", "is canaryOf's to write"),
    "rewrites for a picker that applies none": (
        [WORKER, shared_router(modelRewrites=[REWRITE], endpointPicker={"generation": "gie-v1.0"})],
        "spec.roles[1].modelRewrites",
        "the gie-v1.0 picker applies no InferenceModelRewrite; choose endpointPicker.generation llm-d-router or "
        "gie-v1.5"),
    "a rewrite's model twice": (
        [WORKER, shared_router(endpointPicker={"generation": "llm-d-router"}, modelRewrites=[REWRITE, REWRITE])],
        "spec.roles[1].modelRewrites[1].model", "duplicate model name 'sql' (also spec.roles[1].modelRewrites[0])"),
    "a rewrite weighted in part": (
        [WORKER, shared_router(endpointPicker={"generation": "llm-d-router"}, modelRewrites=[
            {"model": "sql", "targets": [{"model": "a", "weight": 1}, {"model": "b"}]}])],
        "spec.roles[1].modelRewrites[0].targets[1].weight", "is required: weights split traffic only when every"),
    "a rewrite's target twice": (
        [WORKER, shared_router(endpointPicker={"generation": "llm-d-router"}, modelRewrites=[
            {"model": "sql", "targets": [{"model": "a"}, {"model": "a"}]}])],
        "spec.roles[1].modelRewrites[0].targets[1].model", "duplicate target model 'a'"),
    "shared gateway on a worker": (
        [{**WORKER, "sharedGateway": SHARED}, shared_router()], "spec.roles[0].sharedGateway", "router"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_shared_gateway_errors_name_the_field(case: str) -> None:
    roles, path, message = ERRORS[case]
    with pytest.raises(InvalidSpec) as raised:
        render(service(*copy.deepcopy(roles)))
    assert (raised.value.where, raised.value.path) == ("InferenceService svc", path)
    assert message in raised.value.message


LORA_AFFINITY_FIRST = ["lora-affinity-scorer", "queue-scorer", "kv-cache-utilization-scorer", "prefix-cache-scorer"]


def scorer_weights(objects: dict[str, dict[str, Any]]) -> list[tuple[str, int]]:
    config = yaml.safe_load(objects["ConfigMap/svc-router-epp"]["data"]["config.yaml"])
    [profile] = config["schedulingProfiles"]
    return [(ref["pluginRef"], ref["weight"]) for ref in profile["plugins"] if "weight" in ref]


@pytest.mark.parametrize("args", [["--model", "m", "--enable-lora", "--lora-modules", "sql=/a"],
                                  ["--model", "m", "--lora-modules", '{"name": "sql", "path": "/a"}']])
def test_engines_that_serve_adapters_are_scored_by_lora_affinity_unless_the_router_says(args: list[str]) -> None:
    objects = render(service(role("w", "worker", ports=PORTS, args=args), shared_router()))
    assert scorer_weights(objects) == list(zip(LORA_AFFINITY_FIRST, [3, 2, 2, 2], strict=True))
    given = render(service(role("w", "worker", ports=PORTS, args=args), shared_router(strategy="queue-size")))
    assert next(name for name, _ in scorer_weights(given)) == "queue-scorer"
    without = render(service(role("w", "worker", ports=PORTS), shared_router()))
    assert "lora-affinity-scorer" not in dict(scorer_weights(without))


def test_a_served_name_flag_without_its_value_leaves_the_model_matched() -> None:
    """``--served-model-name`` last, without a value (the engine refuses it at start): not a name."""
    [rule] = route_of(role("w", "worker", ports=PORTS, args=["--model", "org/m", "--served-model-name"]),
                      shared_router())["rules"]
    assert matched_names(rule) == ["org/m"]


V1ALPHA2 = "inference.networking.x-k8s.io/v1alpha2"
LORA = ["--model", "org/m", "--enable-lora", "--lora-modules", "sql=/adapters/sql", "chat=/adapters/chat"]


def inference_models(objects: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """modelName → spec of each InferenceModel (the v0.5 picker's)."""
    return {obj["spec"]["modelName"]: obj["spec"] for obj in objects.values() if obj["kind"] == "InferenceModel"}


def test_an_adapter_is_as_critical_as_its_model_to_the_picker_that_reads_models(validators: Validators) -> None:
    """The v0.5 picker takes a model it has no InferenceModel for as Sheddable: each adapter of a model
    that has an entry gets one, with the entry's criticality (an adapter with an entry of its own keeps it)."""
    models = [{"name": "m", "modelName": "org/m", "criticality": "Critical"},
              {"name": "chat", "criticality": "Sheddable"}]
    objects = render(service(role("w", "worker", args=LORA), {
        "name": "router", "componentType": "router", "poolAPIVersion": V1ALPHA2, "models": models,
        "gateway": {"gatewayClassName": "istio", "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}}))
    found = inference_models(objects)
    assert {name: spec.get("criticality") for name, spec in found.items()} == {
        "org/m": "Critical", "chat": "Sheddable", "sql": "Critical"}
    assert found["sql"]["poolRef"] == found["org/m"]["poolRef"] and "targetModels" not in found["sql"]
    assert custom_resource_errors(validators, list(objects.values())) == {}
    # Without an entry for the model, its adapters get none either: the picker takes both as any unknown model.
    objects = render(service(role("w", "worker", args=LORA), {
        "name": "router", "componentType": "router", "poolAPIVersion": V1ALPHA2,
        "gateway": {"gatewayClassName": "istio", "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}}))
    assert inference_models(objects) == {}


def test_no_objective_is_made_per_adapter_for_pickers_that_choose_objectives_by_header() -> None:
    objects = render(service(role("w", "worker", args=LORA), shared_router(models=[
        {"name": "m", "criticality": "Critical"}])))
    assert [obj["metadata"]["name"] for obj in objects.values() if obj["kind"] == "InferenceObjective"] == ["svc-m"]
