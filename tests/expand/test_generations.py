"""Endpoint picker generations: each one renders the image, flags, EndpointPickerConfig, RBAC and model
objects of its release, for every pool API it reads, monolithic and prefill/decode; the pool API chooses
one when the router does not."""

from __future__ import annotations

import re
import subprocess
from typing import Any

import pytest
import yaml

from fusion_helm.base import needs
from fusion_helm.errors import InvalidSpec
from fusion_helm.expand.generations import DEFAULTS, GENERATIONS, PD_GENERATION
from fusion_helm.model import PoolAPI
from fusion_helm.model.engine_flags import ENGINE_METRICS, Engine, EngineMetric
from tests.builders import render as expand
from tests.builders import role, service
from tests.controlplane.builds import picker as picker_binary
from tests.schemas import Validators, custom_resource_errors

PORTS = [{"containerPort": 8000, "name": "http"}]
MONOLITHIC = [role("w", "worker", replicas=2, ports=PORTS)]
DISAGGREGATED = [role("p", "prefiller", ports=PORTS), role("d", "decoder", replicas=2, ports=PORTS)]
COMBINATIONS = [(generation, api, pd) for generation in needs.PICKERS for api in GENERATIONS[generation].pool_apis
                for pd in (False, True) if not (pd and GENERATIONS[generation].pd_sidecar is None)]


def routed(roles: list[dict[str, Any]], **router: Any) -> dict[str, dict[str, Any]]:
    return expand(service(*roles, {"name": "router", "componentType": "router",
                                   "httproute": {"parentRefs": [{"name": "gw"}]}, **router}))


def picker(objects: dict[str, dict[str, Any]]) -> dict[str, Any]:
    container: dict[str, Any] = objects["Deployment/svc-router-epp"]["spec"]["template"]["spec"]["containers"][0]
    return container


def config(objects: dict[str, dict[str, Any]]) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(objects["ConfigMap/svc-router-epp"]["data"]["config.yaml"])
    return loaded


def plugin_types(objects: dict[str, dict[str, Any]]) -> list[str]:
    return [plugin["type"] for plugin in config(objects)["plugins"]]


@pytest.mark.parametrize(("generation", "api", "pd"), COMBINATIONS, ids=[
    f"{g}-{a.value.split('/')[1]}-{'pd' if pd else 'monolithic'}" for g, a, pd in COMBINATIONS])
def test_each_generation_renders_its_release(generation: str, api: PoolAPI, pd: bool,
                                             validators: Validators) -> None:
    release = GENERATIONS[generation]
    objects = routed(DISAGGREGATED if pd else MONOLITHIC, poolAPIVersion=api.value,
                     endpointPicker={"generation": str(generation)},
                     models=[{"name": "chat", "criticality": "Critical"}])
    assert custom_resource_errors(validators, list(objects.values())) == {}
    container = picker(objects)
    assert container["image"] == release.image

    flags = dict(arg[2:].split("=", 1) for arg in container["args"])
    assert flags[release.flags.pool_name] == "svc-router"
    assert flags[release.flags.config_file] == "/config/config.yaml"
    if release.flags.pool_group is not None:
        assert flags[release.flags.pool_group] == api.group
    assert flags.items() >= {**release.default_flags, **release.metric_flags}.items()

    loaded = config(objects)
    assert (loaded["apiVersion"], loaded["kind"]) == (release.config_api_version, "EndpointPickerConfig")
    declared = plugin_types(objects)
    for profile in loaded["schedulingProfiles"]:
        assert {ref["pluginRef"] for ref in profile["plugins"]} <= set(declared)
        # The v0.5 loader wants every scorer's weight written out.
        assert all("weight" in ref for ref in profile["plugins"] if ref["pluginRef"].endswith("-scorer"))
    assert [p["name"] for p in loaded["schedulingProfiles"]] == (["prefill", "decode"] if pd else ["default"])
    assert set(release.scorer_plugins.values()) >= {t for t in declared if t.endswith("-scorer")}

    [model] = [obj for name, obj in objects.items() if name.startswith(release.reads.model.kind + "/")]
    assert model["spec"]["poolRef"] == {"group": api.group, "kind": "InferencePool", "name": "svc-router"}
    rules = objects["Role/svc-router-epp"]["rules"]
    for group, resources in {**release.watches, api.group: ("inferencepools",), "": ("pods",)}.items():
        assert any(group in rule["apiGroups"] and set(resources) <= set(rule["resources"]) for rule in rules)


def test_without_a_generation_the_pool_api_chooses() -> None:
    for api in PoolAPI:
        objects = routed(MONOLITHIC, poolAPIVersion=api.value)
        assert picker(objects)["image"] == GENERATIONS[DEFAULTS[api]].image
    assert DEFAULTS == {PoolAPI.V1: needs.LLM_D_ROUTER, PoolAPI.V1ALPHA2: needs.GIE_V05}
    # prefill/decode: the generation whose picker and sidecar are released together, on the pools it reads.
    assert picker(routed(DISAGGREGATED))["image"] == GENERATIONS[PD_GENERATION].image
    with pytest.raises(InvalidSpec, match=r"spec\.roles\[2\]\.poolAPIVersion: a prefill/decode service needs the "
                                          r"llm-d-router picker, which reads inference\.networking\.k8s\.io/v1"):
        routed(DISAGGREGATED, poolAPIVersion=PoolAPI.V1ALPHA2.value)


def test_a_generation_without_a_sidecar_is_refused_for_prefill_decode() -> None:
    refused = [generation for generation in needs.PICKERS if GENERATIONS[generation].pd_sidecar is None]
    assert set(refused) == {needs.GIE_V05, needs.GIE_V1, needs.GIE_V15}
    for generation in refused:
        with pytest.raises(InvalidSpec, match=r"endpointPicker\.generation: the .* picker has no prefill/decode "
                                              r"sidecar .*; choose llm-d-router"):
            routed(DISAGGREGATED, endpointPicker={"generation": str(generation)})


def test_a_v1alpha2_pool_with_the_v1_0_picker_gets_the_flags_upstream_s_chart_renders() -> None:
    """GIE v1.0.1's inferencepool chart: `--pool-group inference.networking.x-k8s.io` for a v1alpha2 pool."""
    objects = routed(MONOLITHIC, poolAPIVersion=PoolAPI.V1ALPHA2.value, endpointPicker={"generation": "gie-v1.0"})
    args = picker(objects)["args"]
    assert args[:6] == ["--pool-name=svc-router", "--pool-namespace=$(NAMESPACE)",
                        "--pool-group=inference.networking.x-k8s.io", "--grpc-port=9002",
                        "--grpc-health-port=9003", "--config-file=/config/config.yaml"]
    assert objects["InferencePool/svc-router"]["apiVersion"] == PoolAPI.V1ALPHA2.value


def test_every_picker_reads_the_kv_cache_metric_engines_emit_today() -> None:
    """GIE's pickers before v1.5 default to vllm:gpu_cache_usage_perc, which vLLM stopped emitting in 0.10:
    the router names the metric vLLM and llm-d's simulator emit (the serving tests scrape both). llm-d-router
    and GIE v1.5 read today's names by default, and refuse the flags."""
    for generation in needs.PICKERS:
        release = GENERATIONS[generation]
        args = picker(routed(MONOLITHIC, poolAPIVersion=release.pool_apis[0].value,
                             endpointPicker={"generation": str(generation)}))["args"]
        flags = dict(arg[2:].split("=", 1) for arg in args)
        assert "vllm:kv_cache_usage_perc" in release.engine_metrics
        assert set(release.metric_flags.values()) <= set(release.engine_metrics)
        assert flags.items() >= release.metric_flags.items()
        assert "vllm:gpu_cache_usage_perc" not in flags.values()
    for generation in (needs.LLM_D_ROUTER, needs.GIE_V15):
        assert not any("metric" in arg for arg in picker(routed(MONOLITHIC, endpointPicker={
            "generation": str(generation)}))["args"])
        # Their engineConfigs' vllm entry: what vLLM and the simulator emit of the queue, the running
        # requests, the KV cache and LoRA, and the cache configuration the prefix scorer sizes blocks by.
        vllm = ENGINE_METRICS[Engine.VLLM]
        assert GENERATIONS[generation].engine_metrics == (
            vllm[EngineMetric.QUEUE], vllm[EngineMetric.KV_CACHE], vllm[EngineMetric.LORA],
            vllm[EngineMetric.RUNNING], "vllm:cache_config_info")
    mine = picker(routed(MONOLITHIC, endpointPicker={"generation": "gie-v1.0", "flags": {
        "kv-cache-usage-percentage-metric": "vllm:gpu_cache_usage_perc"}}))["args"]  # an older engine's, by choice
    assert "--kv-cache-usage-percentage-metric=vllm:gpu_cache_usage_perc" in mine
    assert "--kv-cache-usage-percentage-metric=vllm:kv_cache_usage_perc" not in mine


@pytest.mark.parametrize("threshold", [0, 16])
def test_llm_d_router_disaggregates_with_a_decider(threshold: int) -> None:
    objects = routed(DISAGGREGATED, endpointPicker={"generation": "llm-d-router"},
                     strategy={"scorers": [{"type": "prefix-cache", "weight": 2}, {"type": "queue-size"}],
                               "prefillThreshold": threshold})
    plugins = {plugin["type"]: plugin.get("parameters") for plugin in config(objects)["plugins"]}
    decider = "prefix-based-pd-decider" if threshold else "always-disagg-pd-decider"
    assert plugins["disagg-profile-handler"] == {"deciders": {"prefill": decider}}
    assert plugins[decider] == ({"nonCachedTokens": threshold} if threshold else None)
    assert not {"pd-profile-handler", "prefill-header-handler"} & plugins.keys()  # deprecated there
    assert {"prefill-filter", "decode-filter", "max-score-picker"} <= plugins.keys()


def test_a_generation_s_default_flags_yield_to_the_user_s() -> None:
    args = picker(routed(MONOLITHIC, endpointPicker={"generation": "llm-d-router", "flags": {"tracing": "true"}}))[
        "args"]
    assert "--tracing=true" in args and "--tracing=false" not in args
    assert "--tracing=false" in picker(routed(MONOLITHIC, endpointPicker={"generation": "llm-d-router"}))["args"]


def test_an_image_override_changes_only_the_image() -> None:
    given = routed(MONOLITHIC, endpointPicker={"generation": "gie-v1.0", "image": "mirror.local/epp:v1.0.1"})
    default = routed(MONOLITHIC, endpointPicker={"generation": "gie-v1.0"})
    assert picker(given)["image"] == "mirror.local/epp:v1.0.1"
    assert {**picker(given), "image": None} == {**picker(default), "image": None}
    assert given["ConfigMap/svc-router-epp"] == default["ConfigMap/svc-router-epp"]


def test_the_v1_5_picker_renders_what_its_release_reads() -> None:
    """GIE v1.5.0's epp: v1.0's flag names and configuration API; no metric flag (it reads today's names by
    default, and its metric flags are deprecated for its configuration); tracing off, as its own chart;
    InferenceObjectives and InferenceModelRewrites watched; v1 pools only, and no model CRD needed to start;
    it stops at once, so its pod waits first."""
    objects = routed(MONOLITHIC, endpointPicker={"generation": "gie-v1.5"},
                     models=[{"name": "chat", "criticality": "Sheddable"}])
    container = picker(objects)
    assert container["image"] == "registry.k8s.io/gateway-api-inference-extension/epp:v1.5.0"
    assert container["args"] == ["--pool-name=svc-router", "--pool-namespace=$(NAMESPACE)",
                                 "--pool-group=inference.networking.k8s.io", "--grpc-port=9002",
                                 "--grpc-health-port=9003", "--config-file=/config/config.yaml", "--tracing=false"]
    assert container["lifecycle"] == {"preStop": {"sleep": {"seconds": 10}}}
    loaded = config(objects)
    assert loaded["apiVersion"] == "inference.networking.x-k8s.io/v1alpha1"
    assert "featureGates" not in loaded  # nothing autoscaled: nothing to queue (tests/expand/test_autoscaling.py)
    assert plugin_types(objects) == ["queue-scorer", "kv-cache-utilization-scorer", "prefix-cache-scorer",
                                     "max-score-picker", "single-profile-handler"]
    assert {"apiGroups": ["inference.networking.x-k8s.io"],
            "resources": ["inferenceobjectives", "inferencemodelrewrites"],
            "verbs": ["get", "list", "watch"]} in objects["Role/svc-router-epp"]["rules"]
    objective = objects["InferenceObjective/svc-chat"]
    assert objective["apiVersion"] == "inference.networking.x-k8s.io/v1alpha2"
    assert objective["spec"] == {"priority": -1, "poolRef": {"group": "inference.networking.k8s.io",
                                                             "kind": "InferencePool", "name": "svc-router"}}
    assert GENERATIONS[needs.GIE_V15].pool_apis == (PoolAPI.V1,)
    # It asks discovery for its model CRDs and starts without them: the check asks for them only with models.
    spec = {"roles": [{"name": "w", "componentType": "worker"},
                      {"name": "router", "componentType": "router", "endpointPicker": {"generation": "gie-v1.5"}}]}
    assert needs.router_apis(spec) == ["inference.networking.k8s.io/v1/inferencepools",
                                       "gateway.networking.k8s.io/v1/httproutes"]
    spec["roles"][1]["models"] = [{"name": "chat"}]
    assert needs.router_apis(spec) == ["inference.networking.k8s.io/v1/inferencepools",
                                       "inference.networking.x-k8s.io/v1alpha2/inferenceobjectives",
                                       "gateway.networking.k8s.io/v1/httproutes"]


def test_a_generation_queues_where_it_reports_what_it_queues() -> None:
    for release in GENERATIONS.values():
        assert (release.picker_metrics is None) == (not release.flow_control)


def help_flags(binary: str) -> set[str]:
    """The flags a picker's --help lists (Go's flag package and pflag both: "-name", "--name")."""
    shown = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30)
    return set(re.findall(r"^\s+(?:-\w, )?--?([A-Za-z][\w.-]*)", shown.stdout + shown.stderr, re.MULTILINE))


def rendered_flags(objects: dict[str, dict[str, Any]]) -> set[str]:
    return {arg.lstrip("-").split("=", 1)[0] for arg in picker(objects)["args"]}


def test_every_flag_the_router_gives_a_picker_is_one_its_binary_takes(control_plane_build: None) -> None:
    """Each generation's rendered flags (with TLS, and in layout disaggregated where it serves it) against its
    release's binary (ci/cluster/build.sh); and each flag it refuses, the binary refuses or deprecates."""
    for generation in needs.PICKERS:
        release = GENERATIONS[generation]
        api = release.pool_apis[0].value
        given = rendered_flags(routed(MONOLITHIC, poolAPIVersion=api, endpointPicker={"generation": str(generation)}))
        given |= rendered_flags(expand(service(*MONOLITHIC, {
            "name": "router", "componentType": "router", "poolAPIVersion": api,
            "endpointPicker": {"generation": str(generation)}, "httproute": {"parentRefs": [{"name": "gw"}]}},
            tls={"secretName": "tls"})))
        if release.rollout_screener:
            given |= rendered_flags(expand(service(*DISAGGREGATED, {
                "name": "router", "componentType": "router", "endpointPicker": {"generation": str(generation)},
                "httproute": {"parentRefs": [{"name": "gw"}]}}, layout="disaggregated")))
        binary = str(picker_binary(release.image))
        assert given - help_flags(binary) == set(), generation
        for flag in release.refused_flags:  # deprecated flags are hidden from --help: given one, it says so
            # (and exits on the configuration given twice, before it looks for a cluster)
            said = subprocess.run([binary, f"--{flag}=true", "--pool-name=p", "--config-text=x", "--config-file=y"],
                                  capture_output=True, text=True, timeout=30)
            assert "deprecated" in said.stdout + said.stderr, (generation, flag, said.stderr[-2000:])
