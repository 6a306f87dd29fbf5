"""The prefill/decode sidecar a router puts in front of each decoder's serving engine: where it goes (every
layout, the pods the pool selects), what it is told (ports, the KV connector the engine's own setting
names, SSRF protection with the service's pool), what it may read, and when it is the user's own."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fusion_helm.errors import InvalidSpec
from fusion_helm.expand.generations import GENERATIONS, PD_GENERATION
from fusion_helm.expand.proxies import ROUTING_PROXIES, image_repository
from tests.builders import NIXL, role, service
from tests.builders import render as expand
from tests.support import router

SIDECAR_IMAGE = GENERATIONS[PD_GENERATION].pd_sidecar.image  # type: ignore[union-attr]
PORTS = [{"containerPort": 8000, "name": "http"}]


def pd(*decoders: dict[str, Any], layout: str | None = None, **router_fields: Any) -> dict[str, dict[str, Any]]:
    roles = [role("p", "prefiller", ports=PORTS), *(decoders or [role("d", "decoder", replicas=2, ports=PORTS)])]
    return expand(service(*roles, router(**router_fields), **({"layout": layout} if layout else {})))


def templates(objects: dict[str, dict[str, Any]], role_name: str) -> list[dict[str, Any]]:
    """The pod templates of ROLE_NAME: each LeaderWorkerSet's worker (and leader) template, or the
    DisaggregatedSet's role's."""
    found = []
    for name, obj in objects.items():
        if name.startswith("LeaderWorkerSet/") and obj["metadata"]["labels"]["fusioninfer.io/role-name"] == role_name:
            found.append(obj["spec"]["leaderWorkerTemplate"])
        if name.startswith("DisaggregatedSet/"):
            found += [r["spec"]["leaderWorkerTemplate"] for r in obj["spec"]["roles"] if r["name"] == role_name]
    assert found, role_name
    return found


def sidecars(template: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in template["spec"].get("initContainers") or [] if c["image"] == SIDECAR_IMAGE]


def flags(container: dict[str, Any]) -> dict[str, str]:
    return dict(arg[2:].split("=", 1) for arg in container["args"])


@pytest.mark.parametrize("layout", ["replica", "disaggregated"])  # layout role refuses a router over P/D
def test_each_decode_pod_gets_the_sidecar_in_front_of_its_engine(layout: str) -> None:
    objects = pd(layout=layout)
    for lws in templates(objects, "p"):
        assert not sidecars(lws["workerTemplate"])
    for lws in templates(objects, "d"):
        pod = lws["workerTemplate"]["spec"]
        [sidecar] = sidecars(lws["workerTemplate"])
        assert sidecar["restartPolicy"] == "Always"  # a native sidecar: up before the engine, down after it
        assert flags(sidecar) == {
            "port": "8000", "model-server-port": "8200", "kv-connector": "nixlv2", "secure-proxy": "false",
            "enable-ssrf-protection": "true", "inference-pool": "$(POD_NAMESPACE)/svc-router",
            "pool-group": "inference.networking.k8s.io"}
        # The pool routes to 8000: the sidecar takes the engine's port, name and all; the engine moves.
        assert sidecar["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
        # It listens only once its allowlist is in: the pod is Ready no sooner.
        assert sidecar["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8000}
        engine_container = pod["containers"][0]
        assert engine_container["ports"] == [{"containerPort": 8200}]
        assert engine_container["args"] == ["--model", "m", *NIXL, "--port=8200"]
        assert sidecar["env"] == [{"name": "POD_NAMESPACE",
                                   "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]
    pool = objects["InferencePool/svc-router"]["spec"]
    assert pool["targetPorts"] == [{"number": 8000}]


def test_the_sidecar_runs_restricted_with_bounded_resources() -> None:
    [sidecar] = sidecars(templates(pd(), "d")[0]["workerTemplate"])
    assert sidecar["securityContext"] == {
        "runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532, "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}
    assert sidecar["resources"]["limits"] == {"memory": "1Gi"} and sidecar["resources"]["requests"]["cpu"]


def test_its_image_is_one_the_expansion_knows_as_a_routing_proxy() -> None:
    """A pod that already runs it (the user's, or ours read back) is never given a second."""
    assert image_repository(SIDECAR_IMAGE) in {kind.repository for kind in ROUTING_PROXIES}


def test_its_image_is_released_with_the_picker() -> None:
    picker = GENERATIONS[PD_GENERATION].image
    assert SIDECAR_IMAGE.rpartition(":")[2] == picker.rpartition(":")[2]
    assert SIDECAR_IMAGE.rpartition(":")[0].rpartition("/")[0] == picker.rpartition(":")[0].rpartition("/")[0]


def test_the_engine_s_own_port_flag_moves_and_its_probes_follow() -> None:
    decoder = role("d", "decoder", args=["--model", "m", "--port", "9000", *NIXL],
                   ports=[{"containerPort": 9000, "name": "api"}, {"containerPort": 8200, "name": "other"}],
                   readinessProbe={"httpGet": {"path": "/health", "port": "api"}},
                   startupProbe={"httpGet": {"path": "/health", "port": 9000}},
                   livenessProbe={"tcpSocket": {"port": "other"}})
    prefill = role("p", "prefiller", args=["--model", "m", "--port", "9000", *NIXL],
                   ports=[{"containerPort": 9000, "name": "api"}])
    objects = expand(service(prefill, decoder, router()))
    pod = templates(objects, "d")[0]["workerTemplate"]["spec"]
    [sidecar] = sidecars({"spec": pod})
    engine_container = pod["containers"][0]
    # 8200 is taken by another port of the pod: the engine takes the next free one.
    assert flags(sidecar)["port"] == "9000" and flags(sidecar)["model-server-port"] == "8201"
    assert sidecar["ports"][0]["name"] == "api"
    assert engine_container["args"][:4] == ["--model", "m", "--port", "8201"]
    assert engine_container["ports"] == [{"containerPort": 8201}, {"containerPort": 8200, "name": "other"}]
    assert engine_container["readinessProbe"]["httpGet"]["port"] == 8201
    assert engine_container["startupProbe"]["httpGet"]["port"] == 8201
    assert engine_container["livenessProbe"] == {"tcpSocket": {"port": "other"}}  # not the serving port


def test_probes_and_ports_at_the_engine_s_own_port_move_with_it_off_the_pool_s() -> None:
    """The engine listened on 8001 behind a pool routing 8000: all that named 8001 follows it to 8200."""
    decoder = role("d", "decoder", args=["--model", "m", "--port", "8001", *NIXL],
                   ports=[{"containerPort": 8001, "name": "api"}],
                   readinessProbe={"httpGet": {"path": "/health", "port": 8001}},
                   startupProbe={"httpGet": {"path": "/health", "port": "api"}})
    objects = expand(service(role("p", "prefiller", ports=PORTS), decoder, router(targetPort=8000)))
    pod = templates(objects, "d")[0]["workerTemplate"]["spec"]
    [sidecar] = sidecars({"spec": pod})
    engine_container = pod["containers"][0]
    assert flags(sidecar)["port"] == "8000" and flags(sidecar)["model-server-port"] == "8200"
    assert engine_container["ports"] == [{"containerPort": 8200}]
    assert engine_container["readinessProbe"]["httpGet"]["port"] == 8200
    assert engine_container["startupProbe"]["httpGet"]["port"] == 8200


def test_an_engine_started_by_a_script_that_computes_its_words_is_fronted() -> None:
    script = ("exec vllm serve m --host $(hostname -i) --kv-transfer-config "
              "'{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}' \"$@\"")
    decoder = role("d", "decoder", command=["sh", "-c", script], args=[], ports=PORTS)
    pod = templates(pd(decoder), "d")[0]["workerTemplate"]["spec"]
    [sidecar] = sidecars({"spec": pod})
    assert flags(sidecar)["kv-connector"] == "nixlv2"
    engine_container = pod["containers"][0]
    assert [*engine_container["command"], *engine_container["args"]] == ["sh", "-c", script, "sh", "--port=8200"]


@pytest.mark.parametrize(("setting", "mode"), [
    ('{"kv_connector":"NixlConnector","kv_role":"kv_both"}', "nixlv2"),
    ('{"kv_connector":"MooncakeConnector","kv_role":"kv_both"}', "mooncake"),
    ('{"kv_connector":"OffloadingConnector","kv_role":"kv_both"}', "offloading"),
    ('{"kv_connector":"ExampleConnector","kv_role":"kv_both"}', "shared-storage"),
    ('{"kv_connector":"MultiConnector","kv_role":"kv_both","kv_connector_extra_config":{"connectors":['
     '{"kv_connector":"NixlConnector","kv_role":"kv_both"},{"kv_connector":"OffloadingConnector"}]}}', "nixlv2"),
])
def test_the_connector_follows_the_engine_s_kv_transfer(setting: str, mode: str) -> None:
    args = ["--model", "m", "--kv-transfer-config", setting]
    objects = expand(service(role("p", "prefiller", args=args, ports=PORTS), role("d", "decoder", args=args,
                                                                              ports=PORTS), router()))
    [sidecar] = sidecars(templates(objects, "d")[0]["workerTemplate"])
    assert flags(sidecar)["kv-connector"] == mode


def test_sglang_decoders_get_the_sidecar_s_sglang_mode() -> None:
    def sglang(name: str, component: str, mode: str) -> dict[str, Any]:
        return role(name, component, command=["python3", "-m", "sglang.launch_server"],
                    args=["--model-path", "m", "--disaggregation-mode", mode], ports=PORTS)

    objects = expand(service(sglang("p", "prefiller", "prefill"), sglang("d", "decoder", "decode"), router()))
    [sidecar] = sidecars(templates(objects, "d")[0]["workerTemplate"])
    assert flags(sidecar)["kv-connector"] == "sglang"
    assert templates(objects, "d")[0]["workerTemplate"]["spec"]["containers"][0]["args"][-1] == "--port=8200"


def test_a_multi_node_decoder_s_sidecar_is_on_the_pods_the_pool_selects() -> None:
    leader_only = role("d", "decoder", ports=PORTS, args=["m", *NIXL])
    leader_only["multinode"] = {"nodeCount": 2, "bootstrap": "vllm"}
    everywhere = copy.deepcopy(leader_only)
    everywhere["multinode"] = {"nodeCount": 2, "bootstrap": "vllm-data-parallel",
                               "dataParallel": {"ranksPerNode": 1, "hybridLoadBalancing": True}}
    for decoder, on_workers in ((leader_only, False), (everywhere, True)):
        lws = templates(pd(decoder), "d")[0]
        [sidecar] = sidecars(lws["leaderTemplate"])
        assert flags(sidecar)["model-server-port"] == "8200"
        # The server's argv reaches the bootstrap's script as its arguments: the port moved there too.
        assert "--port=8200" in lws["leaderTemplate"]["spec"]["containers"][0]["args"]
        assert bool(sidecars(lws["workerTemplate"])) is on_workers


def test_the_sidecar_may_read_its_pool_and_pods_with_the_decoders_service_account() -> None:
    decoder = role("d", "decoder", ports=PORTS)
    decoder["template"]["spec"]["serviceAccountName"] = "engine"
    objects = pd(decoder)
    rules = objects["Role/svc-router-pd-sidecar"]["rules"]
    assert rules == [{"apiGroups": ["inference.networking.k8s.io"], "resources": ["inferencepools"],
                      "verbs": ["get", "list", "watch"]},
                     {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]
    binding = objects["RoleBinding/svc-router-pd-sidecar"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "engine", "namespace": "llm"}]
    assert binding["roleRef"]["name"] == "svc-router-pd-sidecar"
    assert "ServiceAccount/svc-router-pd-sidecar" not in objects


def test_decode_pods_that_name_no_account_get_one_of_their_own_never_default() -> None:
    """Every pod of the namespace that names no account runs as ``default``: bound to the pool-reading Role,
    all of them could list the pods and pools (checkov CKV_K8S_42). The decode pods get their own."""
    objects = pd()
    assert objects["ServiceAccount/svc-router-pd-sidecar"]["metadata"]["labels"]["fusioninfer.io/role-name"] == \
        "router"
    assert objects["RoleBinding/svc-router-pd-sidecar"]["subjects"] == [
        {"kind": "ServiceAccount", "name": "svc-router-pd-sidecar", "namespace": "llm"}]
    for lws in templates(objects, "d"):
        assert lws["workerTemplate"]["spec"]["serviceAccountName"] == "svc-router-pd-sidecar"
    for lws in templates(objects, "p"):  # the prefill pods read nothing
        assert "serviceAccountName" not in lws["workerTemplate"]["spec"]
    adopted = pd(guide_decoder("--port=8000", "--vllm-port=8200", "--enable-ssrf-protection",
                               "--inference-pool-name=svc-router", "--secure-proxy=false"))
    adopted_pod = templates(adopted, "d")[0]["workerTemplate"]["spec"]
    assert adopted_pod["serviceAccountName"] == "svc-router-pd-sidecar"
    # the adopted sidecar reads the pool with a token of its own; the engine has none
    token = {"name": "fusioninfer-api-token", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
             "readOnly": True}
    every = [*adopted_pod.get("initContainers", []), *adopted_pod["containers"]]
    assert [c["image"] for c in every if token in c.get("volumeMounts", [])] == [
        "ghcr.io/llm-d/llm-d-routing-sidecar:v0.3.0"]
    assert adopted_pod["automountServiceAccountToken"] is False


@pytest.mark.parametrize("where", ["initContainers", "containers"])
def test_a_user_s_own_sidecar_of_that_image_is_kept_not_doubled(where: str) -> None:
    mine = {"name": "routing-proxy", "image": "mirror.example/llm-d/llm-d-router-disagg-sidecar:v0.10.0",
            "args": ["--port=8000", "--model-server-port=8100", "--kv-connector=nixlv2", "--secure-proxy=false"]}
    decoder = role("d", "decoder", args=["--model", "m", "--port", "8100", *NIXL],
                   ports=[{"containerPort": 8100}])
    spec = decoder["template"]["spec"]
    spec[where] = [*spec.get(where, []), {**mine, "restartPolicy": "Always"} if where == "initContainers" else mine]
    objects = pd(decoder, targetPort=8000)
    template = templates(objects, "d")[0]["workerTemplate"]
    assert template["spec"].pop("automountServiceAccountToken") is False  # its engine has no use for one
    assert {k: v for k, v in template["spec"].items() if k != "schedulerName"} == spec  # as written
    assert not any(name.startswith("RoleBinding/svc-router-pd-sidecar") for name in objects)


def test_a_monolithic_service_gets_no_sidecar() -> None:
    objects = expand(service(role("w", "worker", ports=PORTS), router()))
    assert not any(sidecars(t["workerTemplate"]) for t in templates(objects, "w"))
    assert "Role/svc-router-pd-sidecar" not in objects


def test_the_design_s_router_engines_need_no_ports_to_be_fronted() -> None:
    """An engine that declares no port serves on vLLM's --port or 8000: the sidecar takes that."""
    objects = expand(service(role("p", "prefiller"), role("d", "decoder"), router()))
    pod = templates(objects, "d")[0]["workerTemplate"]["spec"]
    [sidecar] = sidecars({"spec": pod})
    assert flags(sidecar)["port"] == "8000"
    assert pod["containers"][0]["ports"] == [{"containerPort": 8200, "protocol": "TCP"}]



# Routing proxies the user's manifests already carry (llm-d's guides before v0.10, many users' values).

def guide_decoder(*proxy_args: str, engine_port: str = "8200",
                  image: str = "ghcr.io/llm-d/llm-d-routing-sidecar:v0.3.0", **spec: Any) -> dict[str, Any]:
    """A decoder as llm-d's pd-disaggregation guide wrote it: its routing proxy a native sidecar on 8000 in
    front of vLLM on 8200, the engine's port declared and probed."""
    decoder = role("d", "decoder", args=["--model", "m", "--port", engine_port, *NIXL],
                   ports=[{"containerPort": int(engine_port), "name": "vllm"}],
                   readinessProbe={"httpGet": {"path": "/health", "port": int(engine_port)}})
    decoder["template"]["spec"]["initContainers"] = [{
        "name": "routing-proxy", "image": image, "restartPolicy": "Always",
        "args": list(proxy_args or ["--port=8000", "--vllm-port=8200", "--connector=nixlv2", "-v=1",
                                    "--secure-proxy=false"]),
        "ports": [{"containerPort": 8000, "name": "proxy"}]}]
    decoder["template"]["spec"].update(spec)
    return decoder


@pytest.mark.parametrize("image", ["ghcr.io/llm-d/llm-d-routing-sidecar:v0.3.0",
                                   "mirror.example/llm-d-routing-sidecar@sha256:" + "0" * 64])
def test_an_older_routing_sidecar_is_adopted_not_doubled(image: str) -> None:
    """Two proxies would bind the pool's port, and the moved engine would leave the user's proxy and probe
    pointing at nothing: the user's proxy stays the one in front of the engine, the pool routes to it."""
    decoder = guide_decoder(image=image)
    objects = expand(service(role("p", "prefiller", args=["--model", "m", "--port", "8000", *NIXL]), decoder,
                             router()))
    template = templates(objects, "d")[0]["workerTemplate"]
    assert template["spec"].pop("automountServiceAccountToken") is False
    assert {k: v for k, v in template["spec"].items() if k != "schedulerName"} == decoder["template"]["spec"]
    assert objects["InferencePool/svc-router"]["spec"]["targetPorts"] == [{"number": 8000}]
    assert "RoleBinding/svc-router-pd-sidecar" not in objects  # its SSRF protection is off


@pytest.mark.parametrize(("decoder", "field", "message"), [
    (guide_decoder(engine_port="8300"), "initContainers[0].args",
     "the routing proxy 'routing-proxy' forwards to port '8200' (--vllm-port), but the engine listens on '8300'"),
    (guide_decoder("--port=8000"), "initContainers[0].args",  # the old proxy's own default: 8001
     "forwards to port '8001' (--vllm-port), but the engine listens on '8200'"),
    (guide_decoder("--port=8000", "--model-server-port=8200", "--enable-ssrf-protection=true",
                   "--inference-pool=llm/other", image="ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.10.0"),
     "initContainers[0].args",
     "protects against SSRF with the InferencePool 'llm/other', but the service's pool is svc-router"),
])
def test_an_adopted_proxy_that_disagrees_with_the_pod_is_refused_by_field(decoder: dict[str, Any], field: str,
                                                                         message: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        expand(service(role("p", "prefiller", args=["--model", "m", "--port", "8000", *NIXL]), decoder, router()))
    assert error.value.path == f"spec.roles[1].template.spec.{field}"
    assert message in str(error.value)


OLD_SIDECAR = "ghcr.io/llm-d/llm-d-routing-sidecar"
NEW_SIDECAR = "ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.10.0"
PLAIN = {}
TLS = {"tls": {"secretName": "serving-tls"}}


@pytest.mark.parametrize(("decoder", "spec", "field", "message"), [
    # KServe's llm-d example as written: a release that reads only x-prefiller-url
    (guide_decoder("--port=8000", "--vllm-port=8200", "--connector=nixlv2", image=f"{OLD_SIDECAR}:0.0.6"), PLAIN,
     "image", "reads the prefill pod from x-prefiller-url alone, but the llm-d-router picker names it in "
              "x-prefiller-host-port (read from llm-d-routing-sidecar v0.2.0): every request would decode whole"),
    (guide_decoder("--port=8000", "--vllm-port=8200", "--connector=lmcache", "--secure-proxy=false"), PLAIN,
     "args", "drives the prefill and decode by 'lmcache' (--connector), but the engines' KV transfer speaks "
             "nixlv2: give --connector=nixlv2"),
    # before v0.3.0 the older proxy's own default is llm-d's early vLLM fork's protocol
    (guide_decoder("--port=8000", "--vllm-port=8200", "--secure-proxy=false", image=f"{OLD_SIDECAR}:v0.2.0"), PLAIN,
     "args", "drives the prefill and decode by 'nixl' (--connector)"),
    (guide_decoder("--port=8000", "--model-server-port=8200", "--kv-connector=mooncake", "--secure-proxy=false",
                   image=NEW_SIDECAR), PLAIN, "args", "by 'mooncake' (--kv-connector), but the engines' KV"),
    (guide_decoder("--port=8000", "--model-server-port=8200", image=NEW_SIDECAR), PLAIN,
     "args", "serves HTTPS (--secure-proxy is on unless set false), but without spec.tls the gateway reaches the "
             "pool's pods in plain HTTP: give --secure-proxy=false, or set spec.tls"),
    (guide_decoder("--port=8000", "--model-server-port=8200", "--secure-proxy=false", "--enable-tls=decoder",
                   image=NEW_SIDECAR), PLAIN, "args", "dials its engines in TLS, but without spec.tls they serve"),
    (guide_decoder(), TLS, "args", "serves plain HTTP, but spec.tls has the gateway reach the pool's pods in HTTPS: "
                                   "give --secure-proxy=true"),
    (guide_decoder("--port=8000", "--vllm-port=8200", "--connector=nixlv2", "--prefiller-use-tls"), TLS, "args",
     "dials the decoder engine in plain HTTP, but under spec.tls the engines serve HTTPS: give "
     "--prefiller-use-tls --decoder-use-tls"),
    (guide_decoder("--port=8000", "--model-server-port=8200", "--secure-proxy", "false", image=NEW_SIDECAR), TLS,
     "args", "dials the prefiller engine and the decoder engine in plain HTTP, but under spec.tls the engines serve "
             "HTTPS: give --enable-tls=prefiller,decoder"),
    (guide_decoder("--port=8000", "--vllm-port=8200", "--connector=nixlv2", image=f"{OLD_SIDECAR}:0.0.8"), TLS,
     "image", "x-prefiller-url alone"),
])
def test_an_adopted_proxy_that_does_not_speak_what_the_service_needs_is_refused(
        decoder: dict[str, Any], spec: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        expand(service(role("p", "prefiller", args=["--model", "m", "--port", "8000", *NIXL]), decoder, router(),
                       **spec))
    assert error.value.path == f"spec.roles[1].template.spec.initContainers[0].{field}"
    assert message in str(error.value)


@pytest.mark.parametrize(("decoder", "spec"), [
    (guide_decoder("--port=8000", "--vllm-port=8200", "--connector=nixlv2", "--prefiller-use-tls",
                   "--decoder-use-tls=true"), TLS),
    (guide_decoder("--port=8000", "--model-server-port=8200", "--enable-tls=prefiller", "--enable-tls", "decoder",
                   image=NEW_SIDECAR), TLS),
    # a release its image does not name: taken as its flags write it
    (guide_decoder("--port=8000", "--vllm-port=8200", "--secure-proxy=false",
                   image=f"{OLD_SIDECAR}@sha256:" + "0" * 64), PLAIN),
])
def test_an_adopted_proxy_that_speaks_it_is_kept(decoder: dict[str, Any], spec: dict[str, Any]) -> None:
    objects = expand(service(role("p", "prefiller", args=["--model", "m", "--port", "8000", *NIXL]), decoder,
                             router(), **spec))
    assert templates(objects, "d")[0]["workerTemplate"]["spec"]["initContainers"] == \
        decoder["template"]["spec"]["initContainers"]


def test_a_proxy_that_listens_off_the_pool_s_port_is_refused() -> None:
    decoder = guide_decoder("--port=9000", "--vllm-port=8200")
    with pytest.raises(InvalidSpec) as error:
        expand(service(role("p", "prefiller", args=["--model", "m", "--port", "8000", *NIXL]), decoder,
                       router(targetPort=8000)))
    assert error.value.path == "spec.roles[1].template.spec.initContainers[0].args"
    assert "listens on '9000' (--port), but the InferencePool routes to 8000" in str(error.value)


def test_an_adopted_proxy_s_ssrf_protection_may_read_its_pool() -> None:
    decoder = guide_decoder("--port=8000", "--vllm-port=8200", "--enable-ssrf-protection",
                            "--inference-pool=$(POD_NAMESPACE)/svc-router", "--secure-proxy=false",
                            serviceAccountName="decode",
                            image="ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.10.0")
    objects = expand(service(role("p", "prefiller", args=["--model", "m", "--port", "8000", *NIXL]), decoder,
                             router()))
    assert objects["RoleBinding/svc-router-pd-sidecar"]["subjects"][0]["name"] == "decode"


def test_a_container_of_another_image_on_the_pool_s_port_is_refused() -> None:
    decoder = role("d", "decoder", ports=PORTS)
    decoder["template"]["spec"]["containers"].append(
        {"name": "envoy", "image": "envoyproxy/envoy:v1.36", "ports": [{"containerPort": 8000}]})
    with pytest.raises(InvalidSpec) as error:
        pd(decoder)
    assert error.value.path == "spec.roles[1].template.spec.containers[1].ports[0]"
    assert "takes port 8000, where the InferencePool routes and the prefill/decode sidecar must listen" in \
        str(error.value)


def test_the_engine_moves_to_a_port_no_container_s_flags_name() -> None:
    """A port a container takes by a flag, not a declaration, is taken all the same."""
    decoder = role("d", "decoder", ports=PORTS)
    decoder["template"]["spec"]["containers"].append(
        {"name": "exporter", "image": "exporter:1", "args": ["--listen_port", "8200", "--admin-port=8201"]})
    pod = templates(pd(decoder), "d")[0]["workerTemplate"]["spec"]
    [sidecar] = sidecars({"spec": pod})
    assert flags(sidecar)["model-server-port"] == "8202"
    assert pod["containers"][0]["args"][-1] == "--port=8202"
