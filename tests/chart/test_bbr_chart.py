"""charts/fusioninfer-bbr, the body-based router of a shared Gateway, as helm 3 and 4 render it: one
Deployment running the router with the one plugin the services' routes rely on, restricted, replaced one
at a time; the Gateway's one /v1/models, its program shipped whole and its route valid against the Gateway
API's CRD; its values checked by the chart's schema; with provider istio, Istio's objects valid against
Istio's own CRDs (istio.io/api). tests/controlplane/test_cluster_shared_gateway.py installs it and routes through it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ci.chart_copies import HEADER as SHIPPED_HEADER
from ci.chart_copies import PROGRAMS, shipped
from fusion_helm.base.labels import MODEL_HEADER
from tests import modules
from tests.helm import BBR_CHART, ROOT, Helm
from tests.schemas import Validators, custom_resource_errors, errors, strict_validator
from tests.support import lay_out

MODELS_OBJECTS = ["ClusterRole/gateways-gateway-models", "ClusterRoleBinding/gateways-gateway-models",
                  "ConfigMap/gateway-models", "Deployment/gateway-models", "HTTPRoute/gateway-models",
                  "NetworkPolicy/gateway-models", "PodDisruptionBudget/gateway-models", "Service/gateway-models",
                  "ServiceAccount/gateway-models"]


def rendered(helm: Helm, *args: str) -> dict[str, dict[str, Any]]:
    text = helm.run("template", "gateway", BBR_CHART, "--namespace", "gateways", *args).stdout
    return {f"{o['kind']}/{o['metadata']['name']}": o for o in yaml.safe_load_all(text) if o}


def test_the_router_copies_the_model_into_the_header_the_routes_match(helm: Helm) -> None:
    objects = rendered(helm)
    assert sorted(objects) == sorted(["Deployment/gateway-bbr", "NetworkPolicy/gateway-bbr",
                                      "PodDisruptionBudget/gateway-bbr", "Service/gateway-bbr",
                                      "ServiceAccount/gateway-bbr", *MODELS_OBJECTS])
    deployment = objects["Deployment/gateway-bbr"]["spec"]
    [container] = deployment["template"]["spec"]["containers"]
    assert container["image"] == "registry.k8s.io/gateway-api-inference-extension/bbr:v1.5.0"
    plugin = container["args"][container["args"].index("--plugin") + 1]
    kind, _, parameters = plugin.split(":", 2)
    assert kind == "body-field-to-header"
    assert json.loads(parameters) == {"fieldName": "model", "headerName": MODEL_HEADER}
    assert "--streaming" in container["args"]
    assert deployment["replicas"] == 2 and deployment["strategy"]["rollingUpdate"] == {"maxSurge": 1,
                                                                                       "maxUnavailable": 0}
    # The Pod Security Standard "restricted" (the cluster test installs it where that is enforced).
    pod = deployment["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"]
    assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
    assert container["securityContext"] == {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                            "capabilities": {"drop": ["ALL"]}}
    assert objects["Service/gateway-bbr"]["spec"]["ports"] == [{"name": "grpc", "port": 9004, "targetPort": "grpc",
                                                               "appProtocol": "http2"}]


def test_the_gateway_s_pods_alone_reach_the_router_and_the_models_server(helm: Helm) -> None:
    """By default every pod of the Gateway's namespace (the release's); where named, those pods; off, none."""
    objects = rendered(helm)
    for name, port, selected in (("gateway-bbr", 9004, "fusioninfer-bbr"),
                                 ("gateway-models", 8080, "fusioninfer-gateway-models")):
        spec = objects[f"NetworkPolicy/{name}"]["spec"]
        assert spec["podSelector"]["matchLabels"]["app.kubernetes.io/name"] == selected
        assert spec["policyTypes"] == ["Ingress"]
        assert spec["ingress"] == [{"from": [{"podSelector": {}}], "ports": [{"port": port, "protocol": "TCP"}]}]
    envoy = {"namespaceLabels": {"kubernetes.io/metadata.name": "envoy-gateway-system"}}
    named = rendered(helm, "--set-json", f"networkPolicy.gateway={json.dumps(envoy)}")
    assert named["NetworkPolicy/gateway-bbr"]["spec"]["ingress"][0]["from"] == [
        {"namespaceSelector": {"matchLabels": envoy["namespaceLabels"]}}]
    off = rendered(helm, "--set", "networkPolicy.enabled=false")
    assert not [key for key in off if key.startswith("NetworkPolicy/")]


def test_one_replica_has_no_disruption_budget_and_flags_are_quoted_words(helm: Helm) -> None:
    objects = rendered(helm, "--set", "replicas=1", "--set-json", 'flags={"v": "4: x"}')
    assert "PodDisruptionBudget/gateway-bbr" not in objects
    [container] = objects["Deployment/gateway-bbr"]["spec"]["template"]["spec"]["containers"]
    assert container["args"][-1] == "--v=4: x"


def restricted(pod: dict[str, Any]) -> bool:
    """POD meets the Pod Security Standard "restricted" in what its spec says."""
    return bool(pod["securityContext"]["runAsNonRoot"]) and pod["securityContext"]["seccompProfile"] == {
        "type": "RuntimeDefault"} and all(
        container["securityContext"]["allowPrivilegeEscalation"] is False
        and container["securityContext"]["capabilities"] == {"drop": ["ALL"]} for container in pod["containers"])


def test_the_gateway_s_models_are_listed_by_the_program_the_chart_ships(helm: Helm, validators: Validators,
                                                                        tmp_path: Path) -> None:
    """GET /v1/models on the Gateway goes to the lister, whose program the chart ships whole: laid out as
    its volume lays it out, it runs (its every import there)."""
    objects = rendered(helm, "--set", "gateway=shared", "--set", "models.sectionName=http")
    route = objects["HTTPRoute/gateway-models"]
    assert custom_resource_errors(validators, [route]) == {}
    assert route["spec"] == {
        "parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "shared",
                        "sectionName": "http"}],
        "rules": [{"matches": [{"path": {"type": "Exact", "value": "/v1/models"}, "method": "GET"}],
                   "backendRefs": [{"name": "gateway-models", "port": 8080}]}]}
    assert objects["ClusterRole/gateways-gateway-models"]["rules"] == [
        {"apiGroups": ["gateway.networking.k8s.io"], "resources": ["httproutes"], "verbs": ["list"]}]
    pod = objects["Deployment/gateway-models"]["spec"]["template"]["spec"]
    assert restricted(pod) and pod["containers"][0]["args"] == ["--gateway", "gateways/shared", "--listen", ":8080",
                                                                "--workers", "16", "--client-seconds", "5"]
    hooks = yaml.safe_load((ROOT / "charts" / "fusioninfer" / "values.yaml").read_text())["hooks"]
    assert pod["containers"][0]["image"] == hooks["image"]  # one Python image pinned for both charts' programs

    [volume] = pod["volumes"]
    program = tmp_path / "program"
    lay_out(objects, pod, program)
    paths = shipped(ROOT / "fusion_helm", PROGRAMS["fusioninfer-bbr"])
    assert sorted(item["path"] for item in volume["configMap"]["items"]) == paths
    for path in paths:
        assert (program / path).read_text() == SHIPPED_HEADER.format(source=path) + (ROOT / path).read_text(), path
    done = subprocess.run([sys.executable, "-S", "-E", "-m", "fusion_helm.programs.gateway_models", "--help"],
                          cwd=program, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and "--gateway NAMESPACE/NAME" in done.stdout, done.stderr

    assert not set(MODELS_OBJECTS) & set(rendered(helm, "--set", "models.enabled=false"))
    # Who serves each model is named only where asked; the server's bounds as given.
    asked = rendered(helm, "--set", "models.owners=true", "--set", "models.workers=64", "--set",
                     "models.clientSeconds=2")["Deployment/gateway-models"]["spec"]["template"]["spec"]
    assert asked["containers"][0]["args"][4:] == ["--workers", "64", "--client-seconds", "2", "--owners"]


@pytest.mark.parametrize("setting, message", [("replicas=0", "replicas"), ("provider=envoy", "provider"),
                                              ("flags.--v=4", "flags"), ("models.replicas=0", "replicas"),
                                              ("models.port=80", "port"), ("models.workers=0", "workers"),
                                              ("models.clientSeconds=0", "clientSeconds"),
                                              ("models.owners=yes", "owners")])
def test_bad_values_are_refused_by_the_schema(helm: Helm, setting: str, message: str) -> None:
    done = helm.run("template", "gateway", BBR_CHART, "--set", setting, check=False)
    assert done.returncode != 0 and message in done.stderr and done.stdout == "", done.stderr


def istio_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    text = modules.read("ISTIO_API")
    return {(f"{crd['spec']['group']}/{version['name']}", crd["spec"]["names"]["kind"]):
            version["schema"]["openAPIV3Schema"]
            for crd in yaml.safe_load_all(text) if crd for version in crd["spec"]["versions"]}


def test_provider_istio_wires_the_router_into_the_gateway_as_istio_s_crds_allow(helm: Helm) -> None:
    objects = rendered(helm, "--set", "provider=istio", "--set", "gateway=shared")
    schemas = istio_schemas()
    for key in ("EnvoyFilter/gateway-bbr", "DestinationRule/gateway-bbr"):
        obj = objects[key]  # Istio's schemas describe the spec (and status) alone
        assert errors(strict_validator(schemas[(obj["apiVersion"], obj["kind"])]), {"spec": obj["spec"]}) == [], key
    envoy_filter = objects["EnvoyFilter/gateway-bbr"]["spec"]
    assert envoy_filter["targetRefs"] == [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "shared"}]
    config = envoy_filter["configPatches"][0]["patch"]["value"]["typed_config"]
    cluster = config["grpc_service"]["envoy_grpc"]["cluster_name"]
    assert cluster == "outbound|9004||gateway-bbr.gateways.svc.cluster.local"
    assert config["processing_mode"]["request_body_mode"] == "FULL_DUPLEX_STREAMED"
