"""The router role: endpoint picker, InferencePool, served models, Gateway and HTTPRoute, wired to one
another consistently for either pool API version, through real helm 3 and 4."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from fusion_helm import InvalidSpec
from fusion_helm.expand.generations import GENERATIONS, Routing
from fusion_helm.model.router import INFERENCE_PATHS
from tests.builders import render as expand
from tests.builders import role, service
from tests.expand import alone
from tests.helm import ROOT, VALUES, Helm
from tests.schemas import Validators, custom_resource_errors
from tests.support import EXAMPLE, documented_request, monolithic_v1alpha2, of_kind, router
from tests.support import render as render_story

POOL_GROUPS = {"inference.networking.k8s.io/v1": "inference.networking.k8s.io",
               "inference.networking.x-k8s.io/v1alpha2": "inference.networking.x-k8s.io"}


@pytest.fixture(params=["pd-v1", "monolithic-v1alpha2"])
def rendered(request: pytest.FixtureRequest, helm: Helm, tmp_path: Path) -> list[dict[str, Any]]:
    if request.param == "pd-v1":
        return render_story(helm, EXAMPLE)
    out = helm.template(monolithic_v1alpha2(tmp_path)).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = of_kind(objects, kind)
    assert len(found) == 1, f"{len(found)} {kind}"
    return found[0]


def picker_role(objects: list[dict[str, Any]], kind: str = "Role") -> dict[str, Any]:
    """The picker's Role (or RoleBinding): a prefill/decode service has its sidecars' too."""
    name = one(objects, "Deployment")["metadata"]["name"]
    [found] = [obj for obj in of_kind(objects, kind) if obj["metadata"]["name"] == name]
    return found


def picker_container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    container: dict[str, Any] = one(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    return container


def test_every_router_object_validates_strictly(rendered: list[dict[str, Any]], validators: Validators) -> None:
    kinds = {obj["kind"] for obj in rendered}
    assert kinds >= {"InferencePool", "HTTPRoute", "Deployment", "Service", "ConfigMap", "Role", "RoleBinding",
                     "ServiceAccount"}
    assert kinds & {"InferenceModel", "InferenceObjective"}
    assert custom_resource_errors(validators, rendered) == {}


def test_strict_validation_catches_a_pool_of_the_wrong_shape(rendered: list[dict[str, Any]],
                                                            validators: Validators) -> None:
    pool = copy.deepcopy(one(rendered, "InferencePool"))
    pool["apiVersion"] = next(v for v in POOL_GROUPS if v != pool["apiVersion"])
    assert custom_resource_errors(validators, [pool])


def test_pool_route_picker_and_models_name_the_same_pool_api(rendered: list[dict[str, Any]]) -> None:
    pool = one(rendered, "InferencePool")
    group = POOL_GROUPS[pool["apiVersion"]]
    name = pool["metadata"]["name"]
    picker = one(rendered, "Deployment")

    rules = picker_role(rendered)["rules"]
    assert {"apiGroups": [group], "resources": ["inferencepools"], "verbs": ["get", "list", "watch"]} in rules
    assert [r["apiGroups"] for r in rules if "pods" in r["resources"]] == [[""]]
    model_kinds = [kind for kind in ("InferenceModel", "InferenceObjective") if of_kind(rendered, kind)]
    assert model_kinds == [{"inference.networking.k8s.io": "InferenceObjective",
                            "inference.networking.x-k8s.io": "InferenceModel"}[group]]
    [watched] = [r["resources"] for r in rules if r["apiGroups"] == ["inference.networking.x-k8s.io"]
                 and "inferencepools" not in r["resources"]]
    assert model_kinds[0].lower() + "s" in watched
    for model in of_kind(rendered, model_kinds[0]):
        assert model["spec"]["poolRef"] == {"group": group, "kind": "InferencePool", "name": name}

    for rule in one(rendered, "HTTPRoute")["spec"]["rules"]:
        for ref in rule["backendRefs"]:
            assert (ref["group"], ref["kind"], ref["name"]) == (group, "InferencePool", name)

    args = picker_container(rendered)["args"]
    if group == "inference.networking.k8s.io":
        assert f"--pool-group={group}" in args and f"--pool-name={name}" in args
        reference = pool["spec"]["endpointPickerRef"]
        assert reference["port"]["number"] == 9002
    else:
        assert not any(arg.startswith("--pool-group") for arg in args) and f"--poolName={name}" in args
        reference = pool["spec"]["extensionRef"]
        assert reference["portNumber"] == 9002
    service_object = next(s for s in of_kind(rendered, "Service") if s["metadata"]["name"] == reference["name"])
    assert {p["port"] for p in service_object["spec"]["ports"]} >= {9002}
    assert service_object["spec"]["selector"] == picker["spec"]["template"]["metadata"]["labels"]
    binding = picker_role(rendered, "RoleBinding")
    [account] = [o for o in of_kind(rendered, "ServiceAccount") if o["metadata"]["name"].endswith("-epp")]
    assert binding["subjects"][0]["name"] == picker["spec"]["template"]["spec"]["serviceAccountName"] \
        == account["metadata"]["name"]


def test_pool_selects_the_serving_pods_not_the_picker(rendered: list[dict[str, Any]]) -> None:
    pool = one(rendered, "InferencePool")
    selector = pool["spec"]["selector"].get("matchLabels", pool["spec"]["selector"])
    # LWS puts worker-index on the pods it creates: the leader (the one that serves) is 0.
    assert selector.pop("leaderworkerset.sigs.k8s.io/worker-index") == "0"
    for lws in of_kind(rendered, "LeaderWorkerSet"):
        labels = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["labels"]
        assert selector.items() <= labels.items()
    assert "leaderworkerset.sigs.k8s.io/worker-index" not in \
        one(rendered, "Deployment")["spec"]["template"]["metadata"]["labels"]
    port = pool["spec"]["targetPorts"][0]["number"] if "targetPorts" in pool["spec"] \
        else pool["spec"]["targetPortNumber"]
    assert port == 8000


def test_picker_configuration_from_the_strategy(rendered: list[dict[str, Any]]) -> None:
    configmap = one(rendered, "ConfigMap")
    config = yaml.safe_load(configmap["data"]["config.yaml"])
    disaggregated = any(lws["metadata"]["labels"]["fusioninfer.io/component-type"] == "prefiller"
                        for lws in of_kind(rendered, "LeaderWorkerSet"))
    assert (config["apiVersion"], config["kind"]) == (
        "llm-d.ai/v1alpha1" if disaggregated else "inference.networking.x-k8s.io/v1alpha1", "EndpointPickerConfig")
    plugin_types = [plugin["type"] for plugin in config["plugins"]]
    for profile in config["schedulingProfiles"]:
        assert {ref["pluginRef"] for ref in profile["plugins"]} <= set(plugin_types)
    profiles = [profile["name"] for profile in config["schedulingProfiles"]]
    if disaggregated:
        assert profiles == ["prefill", "decode"]
        assert {"disagg-profile-handler", "prefill-filter", "decode-filter"} <= set(plugin_types)
        roles = {lws["metadata"]["labels"]["fusioninfer.io/component-type"]:
                 lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["labels"]["llm-d.ai/role"]
                 for lws in of_kind(rendered, "LeaderWorkerSet")}
        assert roles == {"prefiller": "prefill", "decoder": "decode"}
        assert picker_container(rendered)["image"].startswith("ghcr.io/llm-d/llm-d-router-endpoint-picker:")
    else:
        assert profiles == ["default"] and "single-profile-handler" in plugin_types
        weights = {ref["pluginRef"]: ref.get("weight") for ref in config["schedulingProfiles"][0]["plugins"]}
        assert weights == {"queue-scorer": 1, "prefix-cache-scorer": 2, "max-score-picker": None}
        assert config["plugins"][1] == {"type": "prefix-cache-scorer", "parameters": {"hashBlockSize": 32}}
    # The picker reads its configuration at start: a new one must roll it.
    assert one(rendered, "Deployment")["spec"]["template"]["metadata"]["annotations"]


def test_user_httproute_rules_survive(helm: Helm, tmp_path: Path) -> None:
    values = yaml.safe_load((VALUES / EXAMPLE).read_text())
    user_rules = [
        {"matches": [{"path": {"type": "PathPrefix", "value": "/v1/completions"}}],
         "filters": [{"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "x-tier",
                                                                                           "value": "gold"}]}}],
         "timeouts": {"request": "600s"}},
        {"matches": [{"headers": [{"name": "x-canary", "value": "1"}]}],
         "backendRefs": [{"group": "inference.networking.k8s.io", "kind": "InferencePool",
                          "name": "qwen-pd-router", "weight": 5}]},
    ]
    values["roles"][-1]["httproute"] = {"hostnames": ["llm.example.com"], "rules": user_rules}
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    route = one([doc for doc in yaml.safe_load_all(helm.template(path).stdout) if doc], "HTTPRoute")

    pool_ref = {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "qwen-pd-router"}
    assert route["spec"]["hostnames"] == ["llm.example.com"]
    assert route["spec"]["parentRefs"] == [{"group": "gateway.networking.k8s.io", "kind": "Gateway",
                                            "name": "qwen-pd-router"}]
    inference_paths = [{"path": {"type": "Exact", "value": path}} for path in INFERENCE_PATHS]
    assert route["spec"]["rules"] == [
        {**user_rules[0], "backendRefs": [pool_ref], "matches": [inference_paths[0]]},
        {**user_rules[1], "matches": [{**user_rules[1]["matches"][0], **path} for path in inference_paths]}]


def test_verbatim_endpoint_picker_config_is_used_byte_for_byte() -> None:
    text = "# tuned by hand\napiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\n" \
           "plugins:\n- type: queue-scorer\nschedulingProfiles:\n- name: default\n  plugins:\n" \
           "  - pluginRef: queue-scorer\n"
    objects = expand(service(role("w", "worker", ports=[{"containerPort": 8000}]),
                             router(endpointPickerConfig=text)))
    assert objects["ConfigMap/svc-router-epp"]["data"] == {"config.yaml": text}
    other = expand(service(role("w", "worker", ports=[{"containerPort": 8000}]),
                           router(endpointPickerConfig=text.replace("# tuned by hand", "# tuned again"))))

    def config_hash(found: dict[str, dict[str, Any]]) -> str:
        annotations = found["Deployment/svc-router-epp"]["spec"]["template"]["metadata"]["annotations"]
        return str(annotations["fusioninfer.io/picker-config-hash"])

    assert config_hash(objects) != config_hash(other)


def test_picker_flags_merge_with_the_routers() -> None:
    objects = expand(service(role("w", "worker", ports=[{"containerPort": 8000}]),
                             router(endpointPicker={"generation": "gie-v1.0", "image": "epp:dev", "flags": {
                                 "v": "4", "pool-group": "inference.networking.k8s.io", "zap-encoder": "json"}})))
    container = objects["Deployment/svc-router-epp"]["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "epp:dev"
    assert container["args"] == ["--pool-name=svc-router", "--pool-namespace=$(NAMESPACE)",
                                 "--pool-group=inference.networking.k8s.io", "--grpc-port=9002",
                                 "--grpc-health-port=9003", "--config-file=/config/config.yaml",
                                 "--total-queued-requests-metric=vllm:num_requests_waiting",
                                 "--kv-cache-usage-percentage-metric=vllm:kv_cache_usage_perc",
                                 "--lora-info-metric=vllm:lora_requests_info", "--v=4", "--zap-encoder=json"]


RESTRICTED_POD = {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532,
                  "seccompProfile": {"type": "RuntimeDefault"}}
RESTRICTED_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                        "readOnlyRootFilesystem": True}
DEFAULT_RESOURCES = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "4Gi"}}


@pytest.mark.parametrize(("picker", "pod_context", "container_context", "resources"), [
    ({}, RESTRICTED_POD, RESTRICTED_CONTAINER, DEFAULT_RESOURCES),
    ({"podSecurityContext": {"runAsNonRoot": True, "fsGroup": 2000},
      "securityContext": {"readOnlyRootFilesystem": True}, "resources": {"limits": {"memory": "4Gi"}}},
     {"runAsNonRoot": True, "fsGroup": 2000}, {"readOnlyRootFilesystem": True}, {"limits": {"memory": "4Gi"}}),
    ({"podSecurityContext": {}, "securityContext": {}}, {}, {}, DEFAULT_RESOURCES),
], ids=["default: restricted", "the router's own, in place of the default", "empty: nothing set"])
def test_the_picker_runs_restricted_unless_the_router_says_otherwise(
        picker: dict[str, Any], pod_context: dict[str, Any], container_context: dict[str, Any],
        resources: dict[str, Any]) -> None:
    objects = expand(service(WORKER, router(endpointPicker=picker)))
    pod = objects["Deployment/svc-router-epp"]["spec"]["template"]["spec"]
    assert pod["securityContext"] == pod_context
    assert pod["containers"][0]["securityContext"] == container_context
    assert pod["containers"][0]["resources"] == resources


def test_served_models_map_criticality_to_priority_on_v1() -> None:
    models = [{"name": name, "criticality": criticality}
              for name, criticality in (("gold", "Critical"), ("std", "Standard"), ("batch", "Sheddable"))]
    objects = expand(service(role("w", "worker", ports=[{"containerPort": 8000}]),
                             router(models=[*models, {"name": "plain"}])))
    priorities = {name.split("/")[1]: obj["spec"].get("priority")
                  for name, obj in objects.items() if name.startswith("InferenceObjective/")}
    assert priorities == {"svc-gold": 1, "svc-std": 0, "svc-batch": -1, "svc-plain": None}


def test_a_router_leaves_the_gang_and_the_serving_roles_alone() -> None:
    """The router adds objects; the serving roles' LeaderWorkerSets and PodGroup are those without it,
    but for the picker's prefill/decode pod label and, on the decoders, the prefill/decode sidecar in
    front of the engine (whose requests the PodGroup counts)."""
    roles = [role("p", "prefiller", ports=[{"containerPort": 8000}]),
             role("d", "decoder", replicas=2, ports=[{"containerPort": 8000}])]
    alone = expand(service(*roles))
    routed = expand(service(*roles, router()))
    alone = {name: obj for name, obj in alone.items() if not name.startswith("NetworkPolicy/")}
    assert {name for name in routed if name.split("/")[0] in ("LeaderWorkerSet", "PodGroup")} == set(alone)
    assert routed["PodGroup/svc"]["spec"].pop("minResources") == {"cpu": "250m", "memory": "256Mi"}
    assert routed["PodGroup/svc"] == alone["PodGroup/svc"]
    for name, lws in alone.items():
        if name.startswith("LeaderWorkerSet/"):
            template = copy.deepcopy(routed[name]["spec"]["leaderWorkerTemplate"]["workerTemplate"])
            assert template["metadata"]["labels"].pop("llm-d.ai/role") in ("prefill", "decode")
            if name.startswith("LeaderWorkerSet/svc-d-"):
                assert template["spec"].pop("serviceAccountName") == "svc-router-pd-sidecar"  # its own, to read
                [sidecar] = template["spec"].pop("initContainers")
                assert sidecar["name"] == "pd-sidecar" and "--model-server-port=8200" in sidecar["args"]
                assert [volume["name"] for volume in template["spec"].pop("volumes")] == ["fusioninfer-api-token"]
                engine = template["spec"]["containers"][0]
                assert engine["args"].pop() == "--port=8200" and engine["ports"] == [{"containerPort": 8200}]
                engine["ports"] = [{"containerPort": 8000}]
            assert template == lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]


WORKER = role("w", "worker", ports=[{"containerPort": 8000, "name": "http"}])
ERRORS = {
    "two routers": (
        [WORKER, router(), router(name="second")],
        "spec.roles[2].componentType", "a service has at most one router (also spec.roles[1])"),
    "replicas on a router": (
        [WORKER, router(replicas=2)], "spec.roles[1].replicas", "not router: a router's pods are its endpoint pickers"),
    "multinode on a router": (
        [WORKER, router(multinode={"nodeCount": 2})], "spec.roles[1].multinode", "not router"),
    "a router alone": (
        [router()], "spec.roles[0]", "a router needs a serving role to route to"),
    "weights on some target models only": (
        [WORKER, router(poolAPIVersion="inference.networking.x-k8s.io/v1alpha2", models=[
            {"name": "m", "targetModels": [{"name": "a", "weight": 1}, {"name": "b"}]}])],
        "spec.roles[1].models[0].targetModels[1].weight", "weights split traffic only when every target"),
    "a zero weight": (
        [WORKER, router(models=[{"name": "m", "targetModels": [{"name": "a", "weight": 0}]}])],
        "spec.roles[1].models[0].targetModels[0].weight", "must be >= 1, got 0"),
    "the same target model twice": (
        [WORKER, router(poolAPIVersion="inference.networking.x-k8s.io/v1alpha2", models=[
            {"name": "m", "targetModels": [{"name": "a"}, {"name": "a"}]}])],
        "spec.roles[1].models[0].targetModels[1].name", "duplicate target model 'a'"),
    "target models on a v1 pool": (
        [WORKER, router(models=[{"name": "m", "targetModels": [{"name": "a"}]}])],
        "spec.roles[1].models[0].targetModels", "has no place in an InferenceObjective"),
    "a backendRef that points elsewhere": (
        [WORKER, router(httproute={"rules": [{"backendRefs": [{"name": "other", "port": 80}]}]})],
        "spec.roles[1].httproute.rules[0].backendRefs[0]", "points to Service 'other', not the router's"),
    "a backendRef of the other pool API": (
        [WORKER, router(httproute={"rules": [{"backendRefs": [{"group": "inference.networking.x-k8s.io",
                                                              "kind": "InferencePool", "name": "svc-router"}]}]})],
        "spec.roles[1].httproute.rules[0].backendRefs[0].group",
        "must be 'inference.networking.k8s.io', the group of the router's inference.networking.k8s.io/v1"),
    "a backendRef port that is not the pool's": (
        [WORKER, router(httproute={"rules": [{"backendRefs": [{"group": "inference.networking.k8s.io",
                                                              "kind": "InferencePool", "name": "svc-router",
                                                              "port": 9000}]}]})],
        "spec.roles[1].httproute.rules[0].backendRefs[0].port", "must be the pool's target port 8000"),
    "a picker pool-group flag of the other API": (
        [WORKER, router(endpointPicker={"flags": {"pool-group": "inference.networking.x-k8s.io"}})],
        "spec.roles[1].endpointPicker.flags.pool-group",
        "is set by the router to 'inference.networking.k8s.io' (its inference.networking.k8s.io/v1 pool)"),
    "a v1 picker flag on a v1alpha2 router": (
        [WORKER, router(poolAPIVersion="inference.networking.x-k8s.io/v1alpha2",
                        endpointPicker={"flags": {"pool-group": "inference.networking.x-k8s.io"}})],
        "spec.roles[1].endpointPicker.flags.pool-group", "is a flag of another endpoint picker generation"),
    "strategy and a verbatim config": (
        [WORKER, router(strategy={"scorers": [{"type": "queue-size"}]}, endpointPickerConfig="kind: x")],
        "spec.roles[1].strategy", "give strategy or endpointPickerConfig, not both"),
    "a verbatim config that is not one": (
        [WORKER, router(endpointPickerConfig="plugins: [")],
        "spec.roles[1].endpointPickerConfig", "is not YAML"),
    "lora-affinity on the v0.5 picker": (
        [WORKER, router(poolAPIVersion="inference.networking.x-k8s.io/v1alpha2",
                        strategy={"scorers": [{"type": "lora-affinity"}]})],
        "spec.roles[1].strategy.scorers[0].type", "has no lora-affinity scorer"),
    "prefill/decode on the v0.5 picker": (
        [role("p", "prefiller", ports=[{"containerPort": 8000}]), role("d", "decoder", ports=[{"containerPort": 8000}]),
         router(poolAPIVersion="inference.networking.x-k8s.io/v1alpha2", endpointPicker={"generation": "gie-v0.5"})],
        "spec.roles[2].endpointPicker.generation",
        "the gie-v0.5 picker has no prefill/decode sidecar to run the prefill it would choose; choose llm-d-router"),
    "prefill/decode on the v1.0 picker": (
        [role("p", "prefiller", ports=[{"containerPort": 8000}]), role("d", "decoder", ports=[{"containerPort": 8000}]),
         router(endpointPicker={"generation": "gie-v1.0"})],
        "spec.roles[2].endpointPicker.generation",
        "the gie-v1.0 picker has no prefill/decode sidecar to run the prefill it would choose; choose llm-d-router"),
    "a decoder without KV transfer": (
        [role("p", "prefiller"), role("d", "decoder", args=["--model", "m"]), router()],
        "spec.roles[1].template.spec.containers[0].args",
        "a decoder under a router needs its engine's KV transfer for the prefill/decode sidecar to wire: vLLM's "
        "--kv-transfer-config (kv_connector one of NixlConnector, MooncakeConnector, OffloadingConnector, "
        "ExampleConnector, MultiConnector with NixlConnector) or SGLang's --disaggregation-mode"),
    "an HTTPRoute path without its /, by the HTTPRoute CRD's own CEL rule": (
        [WORKER, router(httproute={"rules": [{"matches": [{"path": {"value": "v1"}}]}]})],
        "spec.roles[1].httproute.rules[0].matches[0].path",
        "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']"),
    "a redirect beside the pool, by the HTTPRoute CRD's own CEL rule": (
        [WORKER, router(httproute={"rules": [{"filters": [{"type": "RequestRedirect",
                                                          "requestRedirect": {"scheme": "https"}}]}]})],
        "spec.roles[1].httproute.rules[0]", "RequestRedirect filter must not be used together with backendRefs"),
    "a decoder whose script cannot be read for its KV transfer": (
        [role("p", "prefiller"), role("d", "decoder", command=["sh", "-c", "exec vllm serve m | tee /log"], args=[]),
         router()],
        "spec.roles[1].template.spec.containers[0].command[2]",
        "a decoder under a router needs its engine's KV transfer for the prefill/decode sidecar to wire, and the "
        "script that starts it cannot be read for one: its last command is a pipeline ('|'); end it by exec'ing "
        "the engine (exec vllm serve …)"),
    "a KV connector the sidecar has no mode for": (
        [role("p", "prefiller"), role("d", "decoder", args=[
            "--model", "m", "--kv-transfer-config", '{"kv_connector":"PyNcclConnector","kv_role":"kv_consumer"}']),
         router()],
        "spec.roles[1].template.spec.containers[0].args[2]",
        "kv_connector 'PyNcclConnector' has no mode in the ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.10.0 "
        "prefill/decode sidecar; use one of NixlConnector"),
    "a prefill and a decode of different KV connectors": (
        [role("p", "prefiller"), role("d", "decoder", args=[
            "--model", "m", "--kv-transfer-config", '{"kv_connector":"MooncakeConnector","kv_role":"kv_both"}']),
         router()],
        "spec.roles[1].template.spec.containers[0].args",
        "moves KV by the sidecar's mooncake protocol but role p by nixlv2"),
    "a KV transfer setting that is not JSON": (
        [role("p", "prefiller", args=["--model", "m", "--kv-transfer-config", "nixl"]), role("d", "decoder"),
         router()],
        "spec.roles[0].template.spec.containers[0].args[2]",
        "--kv-transfer-config must be a JSON object, got 'nixl'"),
    "a KV transfer setting in vLLM's other spelling that is not JSON": (
        [role("p", "prefiller", args=["--model", "m", "--kv_transfer_config=nixl"]), role("d", "decoder"),
         router()],
        "spec.roles[0].template.spec.containers[0].args[2]",
        "--kv_transfer_config must be a JSON object, got 'nixl'"),
    "a decoder whose script cannot pass the sidecar's port to its engine": (
        [role("p", "prefiller"), role("d", "decoder", command=[
            "/bin/sh", "-c",
            "exec vllm serve m --port 8000 --kv-transfer-config '{\"kv_connector\":\"NixlConnector\"}'"],
            args=[], ports=[{"containerPort": 8000}]), router()],
        "spec.roles[1].template.spec.containers[0].command[2]",
        "the prefill/decode sidecar moves the engine's --port, but the script cannot pass flags to its engine (it "
        'execs its engine without "$@" last): end it by exec\'ing the engine with "$@" last'),
    "a decoder whose engine the sidecar cannot move": (
        [role("p", "prefiller"), role("d", "decoder", command=["/app/my-server"], ports=[{"containerPort": 8000}]),
         router()],
        "spec.roles[1].template.spec.containers[0].command",
        "runs neither vllm nor sglang (in exec form, or as a script's last exec), so the prefill/decode sidecar cannot "
        "move its port (--port)"),
    "a decoder whose volume is named as the sidecar's token": (
        [role("p", "prefiller"), {**role("d", "decoder"), "template": {"spec": {
            **role("d", "decoder")["template"]["spec"], "volumes": [{"name": "fusioninfer-api-token",
                                                                     "emptyDir": {}}]}}}, router()],
        "spec.roles[1].template.spec.volumes", "has a volume named fusioninfer-api-token"),
    "llm-d-router on a v1alpha2 pool": (
        [WORKER, router(poolAPIVersion="inference.networking.x-k8s.io/v1alpha2",
                        endpointPicker={"generation": "llm-d-router"})],
        "spec.roles[1].endpointPicker.generation",
        "the llm-d-router picker reads inference.networking.k8s.io/v1 InferencePools, not "
        "inference.networking.x-k8s.io/v1alpha2"),
    "the v0.5 picker on a v1 pool": (
        [WORKER, router(endpointPicker={"generation": "gie-v0.5"})], "spec.roles[1].endpointPicker.generation",
        "the gie-v0.5 picker reads inference.networking.x-k8s.io/v1alpha2 InferencePools, not "
        "inference.networking.k8s.io/v1"),
    "an unknown generation": (
        [WORKER, router(endpointPicker={"generation": "gie-v1.4"})], "spec.roles[1].endpointPicker.generation",
        "must be one of gie-v0.5, gie-v1.0, gie-v1.5, llm-d-router, got 'gie-v1.4'"),
    "the v1.5 picker on a v1alpha2 pool": (
        [WORKER, router(poolAPIVersion="inference.networking.x-k8s.io/v1alpha2",
                        endpointPicker={"generation": "gie-v1.5"})],
        "spec.roles[1].endpointPicker.generation",
        "the gie-v1.5 picker reads inference.networking.k8s.io/v1 InferencePools, not "
        "inference.networking.x-k8s.io/v1alpha2"),
    "the v1.5 picker for prefill/decode": (
        [role("p", "prefiller", ports=[{"containerPort": 8000}]), role("d", "decoder", ports=[{"containerPort": 8000}]),
         router(endpointPicker={"generation": "gie-v1.5"})],
        "spec.roles[2].endpointPicker.generation",
        "the gie-v1.5 picker has no prefill/decode sidecar to run the prefill it would choose; choose llm-d-router"),
    "a metric flag the v1.5 picker refuses": (
        [WORKER, router(endpointPicker={"generation": "gie-v1.5", "flags": {
            "kv-cache-usage-percentage-metric": "vllm:gpu_cache_usage_perc"}})],
        "spec.roles[1].endpointPicker.flags.kv-cache-usage-percentage-metric",
        "is deprecated in the gie-v1.5 picker: the picker exits at start when given it: name the metrics in "
        "endpointPickerConfig, in its core-metrics-extractor's engineConfigs"),
    "a metrics scheme flag of the v1.5 picker": (
        [WORKER, router(endpointPicker={"generation": "gie-v1.5", "flags": {"model-server-metrics-scheme": "https"}})],
        "spec.roles[1].endpointPicker.flags.model-server-metrics-scheme",
        "is deprecated in the gie-v1.5 picker: spec.tls has it scrape the engines in HTTPS"),
    "a metric flag llm-d-router refuses": (
        [WORKER, router(endpointPicker={"generation": "llm-d-router", "flags": {"lora-info-metric": "x"}})],
        "spec.roles[1].endpointPicker.flags.lora-info-metric", "is deprecated in the llm-d-router picker"),
    "a v0.5 picker flag on the v1.0 picker": (
        [WORKER, router(endpointPicker={"generation": "gie-v1.0", "flags": {"poolName": "x"}})],
        "spec.roles[1].endpointPicker.flags.poolName",
        "is a flag of another endpoint picker generation, not of the gie-v1.0 picker"),
    "target models for the v1.0 picker on a v1alpha2 pool": (
        [WORKER, router(poolAPIVersion="inference.networking.x-k8s.io/v1alpha2",
                        endpointPicker={"generation": "gie-v1.0"},
                        models=[{"name": "m", "targetModels": [{"name": "a"}]}])],
        "spec.roles[1].models[0].targetModels", "has no place in an InferenceObjective, what the gie-v1.0 picker"),
    "serving roles on different ports": (
        [role("p", "prefiller", ports=[{"containerPort": 8000}]), role("d", "decoder", ports=[{"containerPort": 8200}]),
         router()],
        "spec.roles[2].targetPort", "is required: the serving roles listen on different ports (p: 8000, d: 8200)"),
    "a serving role without a port that does not run vllm": (
        [role("w", "worker", command=["python", "-m", "server"]), router()],
        "spec.roles[0].template.spec.containers[0].ports",
        "is required under a router when the container runs neither vllm nor sglang"),
    "a vllm port that is not a port": (
        [role("w", "worker", args=["--model", "m", "--port", "80800"]), router()],
        "spec.roles[0].template.spec.containers[0].args[2]", "must give a port number (1 to 65535) to be routed to"),
    "a route with nowhere to attach": (
        [WORKER, {"name": "router", "componentType": "router"}], "spec.roles[1].httproute.parentRefs",
        "is required without a gateway"),
    "a scorer twice": (
        [WORKER, router(strategy={"scorers": [{"type": "queue-size"}, {"type": "queue-size", "weight": 2}]})],
        "spec.roles[1].strategy.scorers[1].type",
        "duplicate scorer 'queue-size' (also spec.roles[1].strategy.scorers[0])"),
    "an unknown strategy word": (
        [WORKER, router(strategy="round-robin")], "spec.roles[1].strategy",
        "must be one of prefix-cache, precise-prefix-cache, kv-cache-utilization, queue-size, lora-affinity, "
        "pd-disaggregation, got 'round-robin'"),
    "pd-disaggregation without prefill and decode roles": (
        [WORKER, router(strategy="pd-disaggregation")], "spec.roles[1].strategy",
        "pd-disaggregation routes between prefiller and decoder roles, and the service has none"),
    "the lora-affinity word on the v0.5 picker": (
        [WORKER, router(poolAPIVersion="inference.networking.x-k8s.io/v1alpha2", strategy="lora-affinity")],
        "spec.roles[1].strategy", "has no lora-affinity scorer"),
    "a strategy object with a wrong field": (
        [WORKER, router(strategy={"scorers": "queue-size"})], "spec.roles[1].strategy.scorers",
        "must be of type array, got string"),
    "a picker securityContext of the wrong shape": (
        [WORKER, router(endpointPicker={"securityContext": {"runAsUser": "nobody"}})],
        "spec.roles[1].endpointPicker.securityContext.runAsUser", "must be of type integer, got string"),
    "a picker pod securityContext of the wrong shape": (
        [WORKER, router(endpointPicker={"podSecurityContext": {"seccompProfile": {"type": 1}}})],
        "spec.roles[1].endpointPicker.podSecurityContext.seccompProfile.type", "must be of type string"),
    "too many target models": (
        [WORKER, router(models=[{"name": "m", "targetModels": [{"name": f"t{i}"} for i in range(11)]}])],
        "spec.roles[1].models[0].targetModels", "must have at most 10 item(s), got 11"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_router_errors_name_the_field(case: str) -> None:
    roles, path, message = ERRORS[case]
    with pytest.raises(InvalidSpec) as raised:
        expand(service(*copy.deepcopy(roles)))
    assert (raised.value.where, raised.value.path) == ("InferenceService svc", path)
    assert message in raised.value.message


@pytest.mark.parametrize("args, port", [(["--model", "m"], 8000), (["--model", "m", "--port", "9000"], 9000),
                                        (["--port=8100", "--model", "m"], 8100)])
def test_a_vllm_container_without_ports_is_routed_where_vllm_listens(args: list[str], port: int) -> None:
    objects = expand(service(role("w", "worker", args=args), router()))
    assert objects["InferencePool/svc-router"]["spec"]["targetPorts"] == [{"number": port}]


DESIGN = ROOT / "tests" / "fixtures" / "design"


@pytest.mark.parametrize("example", ["router-monolithic.yaml", "router-pd.yaml"])
def test_the_design_s_router_examples_render_and_validate_strictly(example: str, validators: Validators) -> None:
    """Written exactly as the design writes them: strategy as one word, no ports, an existing Gateway."""
    objects = list(expand(yaml.safe_load((DESIGN / example).read_text())).values())
    assert custom_resource_errors(validators, objects) == {}
    [route] = of_kind(objects, "HTTPRoute")
    assert route["spec"]["parentRefs"] == [{"name": "inference-gateway"}]
    assert of_kind(objects, "InferencePool")[0]["spec"]["targetPorts"] == [{"number": 8000}]
    config = yaml.safe_load(one(objects, "ConfigMap")["data"]["config.yaml"])
    profiles = [profile["name"] for profile in config["schedulingProfiles"]]
    assert profiles == (["prefill", "decode"] if example == "router-pd.yaml" else ["default"])


@pytest.mark.parametrize("word", ["prefix-cache", "kv-cache-utilization", "queue-size", "lora-affinity",
                                  "pd-disaggregation"])
def test_every_strategy_word_renders_its_weighting_and_validates_strictly(word: str, validators: Validators) -> None:
    serving = [role("p", "prefiller", ports=[{"containerPort": 8000}]),
               role("d", "decoder", ports=[{"containerPort": 8000}])] if word == "pd-disaggregation" else [WORKER]
    objects = list(expand(service(*serving, router(strategy=word))).values())
    assert custom_resource_errors(validators, objects) == {}
    config = yaml.safe_load(one(objects, "ConfigMap")["data"]["config.yaml"])
    [profile, *_] = config["schedulingProfiles"]
    weights = {ref["pluginRef"]: ref["weight"] for ref in profile["plugins"] if "weight" in ref}
    types = {plugin.get("name", plugin["type"]): plugin["type"] for plugin in config["plugins"]}
    by_scorer = {types[ref]: weight for ref, weight in weights.items()}
    if word == "pd-disaggregation":
        assert by_scorer == {"queue-scorer": 2, "kv-cache-utilization-scorer": 2, "prefix-cache-scorer": 3}
    else:
        leading = {"prefix-cache": "prefix-cache-scorer", "kv-cache-utilization": "kv-cache-utilization-scorer",
                   "queue-size": "queue-scorer", "lora-affinity": "lora-affinity-scorer"}[word]
        assert by_scorer[leading] == 3 and set(by_scorer.values()) == {2, 3}
        assert len(by_scorer) == (4 if word == "lora-affinity" else 3)


def test_the_documented_request_names_the_example_s_objective_and_served_model(helm: Helm) -> None:
    headers, model = documented_request()
    objects = render_story(helm, EXAMPLE)
    assert headers == {"x-gateway-inference-objective": one(objects, "InferenceObjective")["metadata"]["name"]}
    for lws in of_kind(objects, "LeaderWorkerSet"):
        args = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["args"]
        assert args[args.index("--model") + 1] == model


GATEWAY_PODS = {"podLabels": {"gateway.networking.k8s.io/gateway-name": "gw"}}


def test_the_network_policy_admits_only_the_gateway_and_the_scrapers() -> None:
    """The picker's own networkPolicy: where the service's policies are off, the picker's alone."""
    off = {"networkPolicy": {"enabled": False}}
    assert not [key for key in expand(service(WORKER, router(), **off)) if key.startswith("NetworkPolicy/")]
    scrapers = {"namespaceLabels": {"kubernetes.io/metadata.name": "monitoring"},
                "podLabels": {"app.kubernetes.io/name": "prometheus"}}
    objects = expand(service(WORKER, router(endpointPicker={"networkPolicy": {
        "gateway": GATEWAY_PODS, "scrapers": scrapers}}), **off))
    assert [key for key in objects if key.startswith("NetworkPolicy/")] == ["NetworkPolicy/svc-router-epp"]
    policy = objects["NetworkPolicy/svc-router-epp"]
    picker = objects["Deployment/svc-router-epp"]["spec"]["template"]["metadata"]["labels"]
    assert policy["spec"] == {
        "podSelector": {"matchLabels": picker}, "policyTypes": ["Ingress"], "ingress": [
            {"from": [{"podSelector": {"matchLabels": {"gateway.networking.k8s.io/gateway-name": "gw"}}}],
             "ports": [{"port": 9002, "protocol": "TCP"}]},
            {"from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}},
                       "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}}],
             "ports": [{"port": 9090, "protocol": "TCP"}]}]}
    # without scrapers, nothing is admitted to the metrics port
    alone = expand(service(WORKER, router(endpointPicker={"networkPolicy": {"gateway": GATEWAY_PODS}})))
    assert [rule["ports"][0]["port"] for rule in alone["NetworkPolicy/svc-router-epp"]["spec"]["ingress"]] == [9002]


@pytest.mark.parametrize(("policy", "path", "message"), [
    ({"scrapers": GATEWAY_PODS}, "endpointPicker.networkPolicy.gateway", "is required"),
    ({"gateway": {}}, "endpointPicker.networkPolicy.gateway", ""),
    ({"gateway": {"podLabels": {"bad key!": "x"}}}, "endpointPicker.networkPolicy.gateway.podLabels",
     "key 'bad key!' is not a valid label or annotation key"),
    ({"gateway": {"namespaceLabels": {"team": "-x"}}}, "endpointPicker.networkPolicy.gateway.namespaceLabels.team",
     "must be a label value"),
])
def test_a_network_policy_the_api_server_would_refuse_is_refused_by_field(policy: dict[str, Any], path: str,
                                                                         message: str) -> None:
    with pytest.raises(InvalidSpec) as refused:
        expand(service(WORKER, router(endpointPicker={"networkPolicy": policy})))
    assert refused.value.path == f"spec.roles[1].{path}", str(refused.value)
    assert message in refused.value.message


def test_the_pickers_survive_an_update_and_a_drain_by_default() -> None:
    """Two pickers by default, replaced one at a time (a new one Ready before an old one goes), never
    both evicted by a drain, spread across nodes and zones; a generation that stops at once waits first."""
    objects = expand(service(WORKER, router()))
    deployment = objects["Deployment/svc-router-epp"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["strategy"] == {"type": "RollingUpdate",
                                              "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    assert objects["PodDisruptionBudget/svc-router-epp"]["spec"] == {
        "maxUnavailable": 1, "selector": {"matchLabels": labels}, "unhealthyPodEvictionPolicy": "AlwaysAllow"}
    spread = deployment["spec"]["template"]["spec"]["topologySpreadConstraints"]
    assert [(c["topologyKey"], c["labelSelector"]["matchLabels"]) for c in spread] == [
        ("kubernetes.io/hostname", labels), ("topology.kubernetes.io/zone", labels)]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    # llm-d-router drains by itself (--drain-timeout): no preStop of ours delays it further
    assert "lifecycle" not in container
    # Ready only once the ext-proc port listens, not just its health service (which is up before)
    assert container["startupProbe"]["tcpSocket"] == {"port": 9002}
    assert container["readinessProbe"]["grpc"] == {"port": 9003, "service": "inference-extension"}
    assert objects["InferencePool/svc-router"]["spec"]["endpointPickerRef"]["failureMode"] == "FailClose"
    # gie-v1.0 stops at once and gie-v1.5 gracefully, which takes no new request: their pods wait first
    for generation in ("gie-v1.0", "gie-v1.5"):
        stopped = expand(service(WORKER, router(endpointPicker={"generation": generation})))
        assert stopped["Deployment/svc-router-epp"]["spec"]["template"]["spec"]["containers"][0]["lifecycle"] == \
            {"preStop": {"sleep": {"seconds": 10}}}
    # one picker: no budget, which would block every drain of its node
    alone = expand(service(WORKER, router(endpointPicker={"replicas": 1, "failureMode": "FailOpen"})))
    assert alone["Deployment/svc-router-epp"]["spec"]["replicas"] == 1
    assert not [key for key in alone if key.startswith("PodDisruptionBudget/")]
    assert alone["InferencePool/svc-router"]["spec"]["endpointPickerRef"]["failureMode"] == "FailOpen"
    v1alpha2 = expand(service(WORKER, router(poolAPIVersion="inference.networking.x-k8s.io/v1alpha2",
                                             endpointPicker={"failureMode": "FailOpen"})))
    assert v1alpha2["InferencePool/svc-router"]["spec"]["extensionRef"]["failureMode"] == "FailOpen"


def test_the_picker_pods_carry_the_routers_annotations_beside_their_configuration_hash() -> None:
    objects = expand(service(WORKER, router(endpointPicker={"podAnnotations": {"sidecar.istio.io/inject": "false"}})))
    annotations = objects["Deployment/svc-router-epp"]["spec"]["template"]["metadata"]["annotations"]
    assert annotations["sidecar.istio.io/inject"] == "false"
    assert set(annotations) == {"sidecar.istio.io/inject", "fusioninfer.io/picker-config-hash"}


@pytest.mark.parametrize(("annotations", "path", "message"), [
    ({"fusioninfer.io/picker-config-hash": "x"},
     "endpointPicker.podAnnotations.fusioninfer.io/picker-config-hash", "is the picker's own"),
    ({"bad key!": "x"}, "endpointPicker.podAnnotations", "key 'bad key!' is not a valid label or annotation key"),
    ({"a": "x" * 300_000}, "endpointPicker.podAnnotations", "must total at most 262144 bytes"),
])
def test_picker_annotations_the_api_server_would_refuse_are_refused_by_field(annotations: dict[str, str], path: str,
                                                                            message: str) -> None:
    with pytest.raises(InvalidSpec) as refused:
        expand(service(WORKER, router(endpointPicker={"podAnnotations": annotations})))
    assert refused.value.path == f"spec.roles[1].{path}", str(refused.value)
    assert message in refused.value.message


def test_the_stage_alone_puts_the_sidecar_on_decoders_and_routes_on_the_port_it_is_given() -> None:
    """The routing facts (made by hand: the generation, a port of 8123) are what the stage reads."""
    service_model = alone.model(service(role("p", "prefiller"), role("d", "decoder"), router()))
    assert service_model.router is not None
    routing = Routing(router=service_model.router, generation=GENERATIONS["llm-d-router"], port=8123,
                      scorers=service_model.router.scorers, kv_connector="nixlv2")
    facts = alone.facts(service_model, routing=routing)
    changed = alone.pods("router", facts)
    [sidecar] = changed["d"].worker.template["spec"]["initContainers"]
    assert sidecar["args"][:3] == ["--port=8123", "--model-server-port=8200", "--kv-connector=nixlv2"]
    assert "initContainers" not in changed["p"].worker.template["spec"]
    [pool] = [o for o in alone.objects("router", facts, changed) if o["kind"] == "InferencePool"]
    assert pool["spec"]["targetPorts"] == [{"number": 8123}]
