"""spec.tls, as KServe runs its prefill/decode pods: the serving pods serve HTTPS with the Secret's
certificate, the prefill/decode sidecar serves and dials in TLS, the pickers scrape HTTPS, the Services
and PodMonitors say https. (A request through the gateway stand-in, the sidecar and both engines, all in
TLS: tests/controlplane/test_cluster_serving.py.)"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from fusion_helm.errors import InvalidSpec
from fusion_helm.expand.pods import Pod, RoleTemplates
from tests.builders import NIXL, SCRAPED_FROM_MONITORING, render, role, service
from tests.expand import alone
from tests.schemas import Validators, errors
from tests.support import router

TLS = {"secretName": "serving-tls"}
PORTS = [{"containerPort": 8000, "name": "http"}]
PROBE = {"httpGet": {"path": "/health", "port": 8000}}


def pod(objects: dict[str, dict[str, Any]], lws: str, template: str = "workerTemplate") -> dict[str, Any]:
    spec: dict[str, Any] = objects[f"LeaderWorkerSet/{lws}"]["spec"]["leaderWorkerTemplate"][template]["spec"]
    return spec


def pd(tls: dict[str, Any] = TLS, **router_fields: Any) -> dict[str, dict[str, Any]]:
    return render(service(role("p", "prefiller", ports=PORTS, readinessProbe=PROBE),
                          role("d", "decoder", ports=PORTS, readinessProbe=PROBE), router(**router_fields), tls=tls,
                          monitoring={"podMonitor": {"enabled": True}}, **SCRAPED_FROM_MONITORING))


def test_every_serving_engine_serves_https_with_the_secret_s_certificate() -> None:
    objects = pd()
    for lws in ("svc-p-0", "svc-d-0"):
        spec = pod(objects, lws)
        engine = spec["containers"][0]
        assert engine["args"][:len(NIXL) + 2] == ["--model", "m", *NIXL]
        assert [arg for arg in engine["args"] if "ssl" in arg] == [
            "--ssl-certfile=/var/run/fusioninfer/tls/tls.crt", "--ssl-keyfile=/var/run/fusioninfer/tls/tls.key",
            "--enable-ssl-refresh"]
        assert engine["volumeMounts"] == [{"name": "fusioninfer-tls", "mountPath": "/var/run/fusioninfer/tls",
                                           "readOnly": True}]
        assert spec["volumes"][0] == {"name": "fusioninfer-tls", "secret": {"secretName": "serving-tls"}}
        assert engine["readinessProbe"]["httpGet"]["scheme"] == "HTTPS"


def test_the_sidecar_serves_and_dials_in_tls() -> None:
    spec = pod(pd(), "svc-d-0")
    [sidecar] = spec["initContainers"]
    assert sidecar["args"][3:7] == ["--secure-proxy=true", "--cert-path=/var/run/fusioninfer/tls",
                                    "--enable-tls=prefiller,decoder",
                                    "--tls-insecure-skip-verify=prefiller,decoder"]
    assert sidecar["volumeMounts"][0] == {"name": "fusioninfer-tls", "mountPath": "/var/run/fusioninfer/tls",
                                          "readOnly": True}
    assert sidecar["readinessProbe"]["httpGet"]["scheme"] == "HTTPS"
    # The engine behind it moved, its probe with it, and still asks in HTTPS.
    assert spec["containers"][0]["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8200, "scheme": "HTTPS"}
    assert "--port=8200" in spec["containers"][0]["args"]


def test_where_cert_manager_issues_it_the_sidecar_verifies_its_own_engine() -> None:
    """cert-manager's Secret carries its CA and names localhost, where the sidecar dials its decode engine; the
    prefill engine it dials by its pod's address, which no certificate issued ahead names."""
    [sidecar] = pod(pd({"certManager": {"issuerRef": {"name": "ca"}}}), "svc-d-0")["initContainers"]
    assert "--tls-insecure-skip-verify=prefiller" in sidecar["args"]
    assert {"name": "SSL_CERT_DIR", "value": "/var/run/fusioninfer/tls"} in sidecar["env"]


def test_verifying_peers_trusts_the_secret_and_skips_nothing() -> None:
    objects = pd({**TLS, "verifyPeers": True})
    [sidecar] = pod(objects, "svc-d-0")["initContainers"]
    assert not any(arg.startswith("--tls-insecure-skip-verify") for arg in sidecar["args"])
    assert {"name": "SSL_CERT_DIR", "value": "/var/run/fusioninfer/tls"} in sidecar["env"]
    config = yaml.safe_load(objects["ConfigMap/svc-router-epp"]["data"]["config.yaml"])
    [source] = [plugin for plugin in config["plugins"] if plugin["type"] == "metrics-data-source"]
    assert source["parameters"] == {"scheme": "https", "insecureSkipVerify": False,
                                    "caCertPath": "/var/run/fusioninfer/tls/ca.crt"}
    picker = objects["Deployment/svc-router-epp"]["spec"]["template"]["spec"]
    assert {"name": "fusioninfer-tls", "secret": {"secretName": "serving-tls"}} in picker["volumes"]
    monitor = objects["PodMonitor/svc-d"]["spec"]["podMetricsEndpoints"][0]
    assert monitor["tlsConfig"] == {"ca": {"secret": {"name": "serving-tls", "key": "ca.crt"}}}


def test_the_pickers_scrape_the_engines_in_https() -> None:
    config = yaml.safe_load(pd()["ConfigMap/svc-router-epp"]["data"]["config.yaml"])
    assert {"type": "metrics-data-source", "parameters": {"scheme": "https", "insecureSkipVerify": True}} in \
        config["plugins"]
    monolithic = render(service(role("w", "worker", ports=PORTS), router(endpointPicker={"generation": "gie-v1.0"}),
                                tls=TLS))
    args = monolithic["Deployment/svc-router-epp"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert {"--model-server-metrics-scheme=https", "--model-server-metrics-https-insecure-skip-verify=true"} <= \
        set(args)
    v05 = render(service(role("w", "worker", ports=PORTS), router(endpointPicker={"generation": "gie-v0.5"},
                                                                  poolAPIVersion="inference.networking.x-k8s.io/v1alpha2"),
                         tls=TLS))
    args = v05["Deployment/svc-router-epp"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--modelServerMetricsScheme=https" in args


def test_the_v1_5_picker_scrapes_https_through_its_metrics_source_and_cannot_verify() -> None:
    """GIE v1.5 deprecated its metric scheme flags for its metrics-data-source plugin, whose parameters
    take no CA: the router writes the plugin (and no flag), and refuses verifyPeers."""
    v15 = render(service(role("w", "worker", ports=PORTS), router(endpointPicker={"generation": "gie-v1.5"}),
                         tls=TLS))
    config = yaml.safe_load(v15["ConfigMap/svc-router-epp"]["data"]["config.yaml"])
    assert {"type": "metrics-data-source", "parameters": {"scheme": "https", "insecureSkipVerify": True}} in \
        config["plugins"]
    picker = v15["Deployment/svc-router-epp"]["spec"]["template"]["spec"]
    assert not any("metrics-scheme" in arg or "skip-verify" in arg for arg in picker["containers"][0]["args"])
    assert "fusioninfer-tls" not in {volume["name"] for volume in picker["volumes"]}
    plain = render(service(role("w", "worker", ports=PORTS), router(endpointPicker={"generation": "gie-v1.5"})))
    assert "metrics-data-source" not in plain["ConfigMap/svc-router-epp"]["data"]["config.yaml"]  # its default
    with pytest.raises(InvalidSpec) as error:
        render(service(role("w", "worker", ports=PORTS), router(endpointPicker={"generation": "gie-v1.5"}),
                       tls={**TLS, "verifyPeers": True}))
    assert error.value.path == "spec.tls.verifyPeers"
    assert error.value.message == ("the gie-v1.5 picker cannot verify the engines' certificates as it scrapes their "
                                   "metrics (it takes no CA); choose endpointPicker.generation llm-d-router, or "
                                   "leave verifyPeers out")
    verbatim = ("apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\nplugins: []\n"
                "schedulingProfiles: []\n")
    with pytest.raises(InvalidSpec, match="needs a metrics-data-source plugin with scheme https"):
        render(service(role("w", "worker", ports=PORTS), router(endpointPicker={"generation": "gie-v1.5"},
                                                                endpointPickerConfig=verbatim), tls=TLS))


def test_services_and_monitors_say_https() -> None:
    objects = render(service({**role("w", "worker", ports=PORTS), "service": {}}, tls=TLS,
                             monitoring={"podMonitor": {"enabled": True}}, **SCRAPED_FROM_MONITORING))
    assert objects["Service/svc-w-serving"]["spec"]["ports"] == [
        {"name": "http", "port": 8000, "targetPort": 8000, "protocol": "TCP", "appProtocol": "https"}]
    endpoint = objects["PodMonitor/svc-w"]["spec"]["podMetricsEndpoints"][0]
    assert endpoint["scheme"] == "https" and endpoint["tlsConfig"] == {"insecureSkipVerify": True}


def test_a_multi_node_replica_s_serving_pods_serve_https_and_its_headless_workers_do_not() -> None:
    decoder = role("d", "worker", nodes=2, image="vllm/vllm-openai:v0.32.0", ports=PORTS)
    objects = render(service(decoder, tls=TLS))
    leader, worker = pod(objects, "svc-d-0", "leaderTemplate"), pod(objects, "svc-d-0")
    assert "--enable-ssl-refresh" in leader["containers"][0]["args"]
    assert "--enable-ssl-refresh" not in worker["containers"][0]["args"] and "volumes" not in worker


def test_sglang_engines_serve_https_in_their_spelling() -> None:
    sglang = role("w", "worker", command=["python3", "-m", "sglang.launch_server"], args=["--model-path", "m"])
    engine = pod(render(service(sglang, tls=TLS)), "svc-w-0")["containers"][0]
    assert engine["args"][-3:] == ["--ssl-certfile=/var/run/fusioninfer/tls/tls.crt",
                                   "--ssl-keyfile=/var/run/fusioninfer/tls/tls.key", "--enable-ssl-refresh"]


@pytest.mark.parametrize(("roles", "tls", "path", "message"), [
    ([role("w", "worker", args=["m", "--ssl-certfile", "/c"])], TLS,
     "spec.roles[0].template.spec.containers[0].args[1]",
     "--ssl-certfile is spec.tls's: the engine serves with its certificate; remove it"),
    ([role("w", "worker", command=["/app/server"], ports=PORTS)], TLS,
     "spec.roles[0].template.spec.containers[0].command",
     "runs neither vllm nor sglang, so spec.tls cannot have it serve HTTPS"),
    ([role("w", "worker", ports=PORTS), router(endpointPicker={"generation": "gie-v1.0"})],
     {**TLS, "verifyPeers": True}, "spec.tls.verifyPeers",
     "the gie-v1.0 picker cannot verify the engines' certificates"),
    ([role("w", "worker")], {"verifyPeers": True}, "spec.tls.secretName", "is required"),
    ([role("w", "worker", command=["sh", "-c", "exec vllm serve m"])], TLS,
     "spec.roles[0].template.spec.containers[0].command[2]",
     "spec.tls gives it its certificate, but the script cannot pass flags to its engine"),
])
def test_tls_mistakes_are_refused_by_field(roles: list[dict[str, Any]], tls: dict[str, Any], path: str,
                                           message: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        render(service(*roles, tls=tls))
    assert error.value.path == path
    assert message in str(error.value)


def test_cert_manager_writes_the_secret_for_the_names_the_pods_are_reached_by(validators: Validators) -> None:
    objects = render(service({**role("w", "worker", ports=PORTS), "service": {}}, router(), service={},
                             tls={"certManager": {"issuerRef": {"name": "ca", "kind": "ClusterIssuer"},
                                                  "renewBefore": "360h"}}))
    certificate = objects["Certificate/svc-serving-tls"]
    assert errors(validators(certificate["apiVersion"], certificate["kind"]), certificate) == []
    assert certificate["spec"] == {
        "secretName": "svc-serving-tls", "issuerRef": {"name": "ca", "kind": "ClusterIssuer"},
        "dnsNames": ["localhost", "svc-w-serving", "svc-serving", "svc-w-serving.llm.svc", "svc-serving.llm.svc"],
        "ipAddresses": ["127.0.0.1"], "usages": ["server auth", "digital signature", "key encipherment"],
        "privateKey": {"rotationPolicy": "Always"}, "renewBefore": "360h"}
    spec = pod(objects, "svc-w-0")
    assert spec["volumes"] == [{"name": "fusioninfer-tls", "secret": {"secretName": "svc-serving-tls"}}]
    named = render(service(role("w", "worker"), tls={"secretName": "mine", "certManager": {"issuerRef": {
        "name": "ca"}}}))
    assert named["Certificate/svc-serving-tls"]["spec"]["secretName"] == "mine"


def test_the_stage_alone_has_the_serving_pods_serve_https_and_leaves_the_others() -> None:
    """On a replica whose workers run ranks for the leader's server, only the leader's template changes."""
    service_model = alone.model(service(role("w", "worker"), tls=TLS))
    [served] = service_model.roles
    server = served.server(service_model.where)
    leader = {"spec": {"containers": [{"name": "engine", "args": ["--model", "m"]}]}}
    worker = {"spec": {"containers": [{"name": "ray"}]}}
    changed = alone.pods("tls", alone.facts(service_model), {
        "w": RoleTemplates(size=2, leader=Pod(leader, server), worker=Pod(worker, None))})["w"]
    assert changed.worker.template == worker
    assert changed.leader is not None
    engine = changed.leader.template["spec"]["containers"][0]
    assert engine["args"] == ["--model", "m", "--ssl-certfile=/var/run/fusioninfer/tls/tls.crt",
                              "--ssl-keyfile=/var/run/fusioninfer/tls/tls.key", "--enable-ssl-refresh"]
    assert changed.leader.template["spec"]["volumes"] == [{"name": "fusioninfer-tls",
                                                           "secret": {"secretName": "serving-tls"}}]
