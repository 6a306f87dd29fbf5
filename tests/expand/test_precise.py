"""Precise prefix-cache routing (strategy precise-prefix-cache): every serving vLLM publishes its KV-cache
events on a socket it binds, each picker subscribes to every serving pod and tokenizes with a render server
in its own pod, and the network lets exactly that through; refused by field where the engines cannot
publish so. What the picker makes of the events, with the real picker and llm-d's simulator, is
tests/controlplane/test_cluster_precise.py's."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fusion_helm.kio.construct import load
from fusion_helm.model.shell import last_exec
from tests.builders import NIXL, refusal, render, role, service
from tests.expand import alone
from tests.support import router

PORTS = [{"containerPort": 8000, "name": "http"}]
PRECISE = "precise-prefix-cache"
VLLM = "vllm/vllm-openai:v0.19.0"
"""The first vLLM with a render server."""


def pd(*roles: dict[str, Any], **router_fields: Any) -> dict[str, Any]:
    roles = roles or (role("p", "prefiller", ports=PORTS), role("d", "decoder", ports=PORTS))
    for given in roles:
        engine = given["template"]["spec"]["containers"][0]
        if engine["image"].startswith("vllm/"):
            engine["image"] = VLLM
    return service(*roles, router(strategy=PRECISE, **router_fields))


def events_config(container: dict[str, Any]) -> dict[str, Any]:
    [word] = [arg for arg in container["args"] if arg.startswith("--kv-events-config=")]
    parsed: dict[str, Any] = json.loads(word.partition("=")[2])
    return parsed


def test_each_serving_engine_publishes_on_sockets_it_binds_under_its_model_s_name() -> None:
    decoder = role("d", "decoder", ports=PORTS, args=["--model", "m", "--served-model-name", "chat", *NIXL])
    model = alone.model(pd(role("p", "prefiller", ports=PORTS), decoder))
    changed = alone.pods("precise", alone.facts(model, routing=alone.routing(model)))
    for name, served in (("p", "m"), ("d", "chat")):
        [engine] = changed[name].worker.template["spec"]["containers"]
        assert events_config(engine) == {
            "enable_kv_cache_events": True, "publisher": "zmq", "endpoint": "tcp://*:5557",
            "replay_endpoint": "tcp://*:5558", "topic": f"kv@{name}@{served}"}
        assert engine["ports"][1:] == [{"name": "kv-events", "containerPort": 5557, "protocol": "TCP"},
                                       {"name": "kv-replay", "containerPort": 5558, "protocol": "TCP"}]


def test_an_engine_started_by_a_script_gets_the_option_as_one_of_its_arguments() -> None:
    script = 'echo starting; exec vllm serve m --port 8000 "$@"'
    worker = role("w", "worker", ports=PORTS, command=["sh", "-c", script])
    del worker["template"]["spec"]["containers"][0]["args"]
    model = alone.model(pd(worker, endpointPicker={"generation": "llm-d-router"}))
    changed = alone.pods("precise", alone.facts(model, routing=alone.routing(model)))
    [engine] = changed["w"].worker.template["spec"]["containers"]
    assert engine["command"][:3] == ["sh", "-c", script] and last_exec(script).passes_arguments
    assert events_config({"args": [*engine["command"][3:], *engine.get("args", [])]})["topic"] == "kv@w@m"


def test_the_picker_tokenizes_beside_itself_and_subscribes_to_every_serving_pod() -> None:
    objects = render(pd())
    config = load(objects["ConfigMap/svc-router-epp"]["data"]["config.yaml"])
    plugins = {plugin["type"]: plugin.get("parameters") for plugin in config["plugins"]}
    assert plugins["token-producer"] == {"modelName": "m", "vllm": {"url": "http://127.0.0.1:8200"}}
    assert plugins["precise-prefix-cache-producer"]["kvEventsConfig"] == {
        "topicFilter": "kv@", "discoverPods": True,
        "podDiscoveryConfig": {"socketPort": 5557, "replaySocketPort": 5558}}
    assert plugins["precise-prefix-cache-producer"]["speculativeIndexing"] is True
    assert plugins["prefix-cache-scorer"] == {"prefixMatchInfoProducerName": "precise-prefix-cache-producer"}
    assert config["dataLayer"] == {"sources": [{"pluginRef": "endpoint-notification-source",
                                                "extractors": [{"pluginRef": "precise-prefix-cache-producer"}]}]}
    for profile in config["schedulingProfiles"]:
        weights = {ref["pluginRef"]: ref.get("weight") for ref in profile["plugins"]}
        assert weights["prefix-cache-scorer"] == 3 and weights["queue-scorer"] == 2, profile
    pod = objects["Deployment/svc-router-epp"]["spec"]["template"]["spec"]
    [render_server] = pod["initContainers"]
    assert render_server["restartPolicy"] == "Always"  # a native sidecar: up before the picker asks it
    assert render_server["image"] == VLLM
    assert render_server["command"][:6] == ["vllm", "launch", "render", "m", "--served-model-name", "m"]
    assert render_server["securityContext"]["runAsNonRoot"] is True
    assert render_server["securityContext"]["readOnlyRootFilesystem"] is True


@pytest.mark.parametrize(("given", "hashed"), [([], 16), (["--block-size", "64"], 64), (["--block_size=32"], 32)])
def test_the_picker_hashes_prompts_in_the_engines_own_blocks(given: list[str], hashed: int) -> None:
    """Blocks of its own smaller than the engines' would count part of a block as cached, where vLLM caches
    whole blocks, and lose a pod from a shared part when one of the blocks holding it is evicted."""
    args = ["--model", "m", *given, *NIXL]
    objects = render(pd(role("p", "prefiller", ports=PORTS, args=args), role("d", "decoder", ports=PORTS, args=args)))
    config = load(objects["ConfigMap/svc-router-epp"]["data"]["config.yaml"])
    [producer] = [plugin for plugin in config["plugins"] if plugin["type"] == "precise-prefix-cache-producer"]
    assert producer["parameters"]["tokenProcessorConfig"] == {"blockSizeTokens": hashed}


def test_the_policies_admit_the_pickers_to_the_event_sockets_and_nothing_else_to_them() -> None:
    spec = pd()
    spec["spec"]["networkPolicy"] = {"egress": {"restrict": True, "apiServer": ["192.0.2.1/32"]}}
    objects = render(spec)
    picker = {"podSelector": {"matchLabels": {"fusioninfer.io/service": "svc", "fusioninfer.io/component-type":
                                              "router", "fusioninfer.io/role-name": "router"}}}
    events = [{"port": 5557, "protocol": "TCP"}, {"port": 5558, "protocol": "TCP"}]
    for name in ("svc-p", "svc-d"):
        ingress = objects[f"NetworkPolicy/{name}"]["spec"]["ingress"]
        assert [rule["from"] for rule in ingress if rule.get("ports") == events] == [[picker]]
    egress = objects["NetworkPolicy/svc-router-epp"]["spec"]["egress"]
    assert {"to": [{"podSelector": {"matchLabels": {"fusioninfer.io/service": "svc"}}}], "ports": events} in egress


def test_without_it_nothing_publishes_and_the_picker_runs_alone() -> None:
    objects = render(service(role("p", "prefiller", ports=PORTS), role("d", "decoder", ports=PORTS), router()))
    assert not any("kv-events" in json.dumps(obj) for obj in objects.values())
    assert "initContainers" not in objects["Deployment/svc-router-epp"]["spec"]["template"]["spec"]


@pytest.mark.parametrize(("spec", "path", "message"), [
    (pd(role("w", "worker", ports=PORTS, image="lmsysorg/sglang:v0.5.4", command=[
        "python3", "-m", "sglang.launch_server", "--model-path", "m", "--port", "8000"], args=[]),
        endpointPicker={"generation": "llm-d-router"}),
     "spec.roles[1].strategy", "role w runs SGLang (the picker reads vLLM's); choose prefix-cache"),
    (service(role("w", "worker", ports=PORTS, image="vllm/vllm-openai:v0.18.1"),
             router(strategy=PRECISE, endpointPicker={"generation": "llm-d-router"})),
     "spec.roles[0].template.spec.containers[0].image",
     "vllm/vllm-openai:v0.18.1 has no render server (vllm launch render, since vLLM v0.19.0)"),
    (service(role("w", "worker", ports=PORTS, image=VLLM), router(strategy=PRECISE,
                                                                  endpointPicker={"generation": "gie-v1.0"})),
     "spec.roles[1].strategy", "the gie-v1.0 endpoint picker has no precise-prefix-cache scorer"),
    (pd(role("p", "prefiller", ports=PORTS, args=["--model", "m", "--kv-events-config", "{}", *NIXL]),
        role("d", "decoder", ports=PORTS)),
     "spec.roles[0].template.spec.containers[0].args[2]", "--kv-events-config is the router's"),
    (pd(role("p", "prefiller", ports=[*PORTS, {"containerPort": 5557, "name": "zmq"}]), role("d", "decoder")),
     "spec.roles[0].template.spec.containers[0].ports[1]", "port 5557 (kv-events) is where the engine publishes"),
    (pd(role("p", "prefiller", ports=PORTS, args=["--model", "m", "--block-size", "32", *NIXL]),
        role("d", "decoder", ports=PORTS)),
     "spec.roles[2].strategy", "the engines of role p keep blocks of 32 tokens, those of role d of 16"),
    (pd(role("p", "prefiller", ports=PORTS), role("d", "decoder", ports=PORTS, args=["--model", "m", "--block-size",
                                                                                      "$(BLOCKS)", *NIXL])),
     "spec.roles[1].template.spec.containers[0].args[2]", "must give a block size in tokens (a positive count)"),
    (service(role("p", "prefiller"), role("d", "decoder"), router(strategy={"scorers": [
        {"type": "prefix-cache"}, {"type": PRECISE}]})),
     "spec.roles[2].strategy.scorers[1].type", "score one signal"),
])
def test_what_cannot_publish_as_the_picker_reads_is_refused_by_field(spec: dict[str, Any], path: str,
                                                                     message: str) -> None:
    refused = refusal(spec)
    assert refused.path == path, str(refused)
    assert message in refused.message, str(refused)
