"""Frontend roles (componentType frontend): SGLang's router as a Deployment with a Service, given the
serving pods' labels and port to discover them by through the Kubernetes API, and the Role that lets its
pods read pods. (The real router finding and serving through the pods the control plane runs:
tests/controlplane/test_cluster_frontends.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from fusion_helm.errors import InvalidSpec
from tests.builders import render, role, service
from tests.expand import alone
from tests.support import router

ROUTER_IMAGE = "lmsysorg/sglang:v0.5.23"


def frontend(name: str = "gateway", replicas: int | None = None, **container: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name, "componentType": "frontend", "frontend": {"kind": "sglang-router"},
                            "template": {"spec": {"containers": [{"name": "router", "image": ROUTER_IMAGE,
                                                                  **container}]}}}
    if replicas is not None:
        spec["replicas"] = replicas
    return spec


def sglang(name: str, component_type: str, *args: str) -> dict[str, Any]:
    return role(name, component_type, command=["python3", "-m", "sglang.launch_server"],
                args=["--model-path", "m", "--port", "30000", *args])


def router_args(objects: dict[str, dict[str, Any]], name: str = "svc-gateway") -> list[str]:
    container = objects[f"Deployment/{name}"]["spec"]["template"]["spec"]["containers"][0]
    return [*container["command"], *container["args"]]


def test_sglang_s_router_discovers_the_serving_leaders_by_label() -> None:
    objects = render(service(role("w", "worker", replicas=3, ports=[{"containerPort": 8000}]),
                             frontend(args=["--policy", "cache_aware", "--port", "8080"])))
    assert router_args(objects) == [
        "python3", "-m", "sglang_router.launch_router", "--policy", "cache_aware", "--port", "8080",
        "--service-discovery", "--service-discovery-port", "8000", "--service-discovery-namespace", "$(POD_NAMESPACE)",
        "--selector", "fusioninfer.io/service=svc", "leaderworkerset.sigs.k8s.io/worker-index=0"]
    deployment = objects["Deployment/svc-gateway"]
    pod = deployment["spec"]["template"]
    assert deployment["spec"]["replicas"] == 2
    assert pod["spec"]["serviceAccountName"] == "svc-gateway"
    assert pod["spec"]["containers"][0]["env"] == [
        {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]
    # Its own pods are never among those it finds: they carry no LWS worker index.
    assert "leaderworkerset.sigs.k8s.io/worker-index" not in pod["metadata"]["labels"]
    assert objects["Role/svc-gateway"]["rules"] == [{"apiGroups": [""], "resources": ["pods"],
                                                     "verbs": ["get", "list", "watch"]}]
    assert objects["RoleBinding/svc-gateway"]["subjects"] == [
        {"kind": "ServiceAccount", "name": "svc-gateway", "namespace": "llm"}]
    assert objects["Service/svc-gateway"]["spec"] == {
        "selector": pod["metadata"]["labels"] | {},
        "ports": [{"name": "http", "port": 8080, "targetPort": 8080, "protocol": "TCP"}]}
    assert "PodGroup/svc" not in objects  # a monolithic single-node service, as without the frontend


def test_a_frontend_s_service_takes_the_name_its_clients_call() -> None:
    objects = render(service(role("w", "worker", ports=[{"containerPort": 8000}]),
                             {**frontend(args=["--port", "8080"]), "service": {"name": "sglang-router"}}))
    assert "Service/sglang-router" in objects and "Deployment/svc-gateway" in objects
    assert "Service/svc-gateway" not in objects


def test_a_prefill_decode_service_is_discovered_as_prefill_and_decode_pods() -> None:
    objects = render(service(sglang("p", "prefiller", "--disaggregation-mode", "prefill",
                                    "--disaggregation-bootstrap-port", "9000"),
                             sglang("d", "decoder", "--disaggregation-mode", "decode"), frontend(replicas=1)))
    args = router_args(objects)
    assert args[args.index("--pd-disaggregation"):] == [
        "--pd-disaggregation",
        "--prefill-selector", "fusioninfer.io/service=svc", "leaderworkerset.sigs.k8s.io/worker-index=0",
        "fusioninfer.io/component-type=prefiller",
        "--decode-selector", "fusioninfer.io/service=svc", "leaderworkerset.sigs.k8s.io/worker-index=0",
        "fusioninfer.io/component-type=decoder"]
    assert args[args.index("--service-discovery-port") + 1] == "30000"
    # SGLang's router reads a discovered prefill pod's bootstrap port from its annotation.
    prefill = objects["LeaderWorkerSet/svc-p-0"]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]
    assert prefill["annotations"]["sglang.ai/bootstrap-port"] == "9000"
    decode = objects["LeaderWorkerSet/svc-d-0"]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]
    assert "sglang.ai/bootstrap-port" not in (decode.get("annotations") or {})


def test_the_template_s_own_service_account_is_the_one_allowed_to_read_pods() -> None:
    mine = frontend()
    mine["template"]["spec"]["serviceAccountName"] = "gateway-sa"
    objects = render(service(role("w", "worker"), mine))
    assert "ServiceAccount/svc-gateway" not in objects
    assert objects["RoleBinding/svc-gateway"]["subjects"][0]["name"] == "gateway-sa"


@pytest.mark.parametrize(("roles", "path", "message"), [
    ([role("w", "worker"), frontend(args=["--selector", "app=x"])], "spec.roles[1].template.spec.containers[0].args[0]",
     "--selector is the expansion's: the sglang-router frontend finds the service's serving pods by their labels"),
    ([role("w", "worker"), frontend(args=["--worker-urls", "http://a:8000"])],
     "spec.roles[1].template.spec.containers[0].args[0]", "--worker-urls is the expansion's"),
    ([role("p", "prefiller"), role("d", "decoder"), frontend()], "spec.roles[0].template.spec.containers[0].args",
     "a prefiller behind a sglang-router frontend runs SGLang's prefill/decode disaggregation"),
    ([role("a", "worker", ports=[{"containerPort": 8000}]), role("b", "worker", ports=[{"containerPort": 9000}]),
      frontend()], "spec.roles[2].frontend", "is required: the serving roles listen on different ports"),
    ([frontend()], "spec.roles[0]", "a frontend needs a serving role to route to"),
    ([role("w", "worker"), {**frontend(), "multinode": {"nodeCount": 2}}], "spec.roles[1].multinode",
     "only allowed on componentType worker, prefiller or decoder, not frontend: a frontend is one Deployment"),
    ([role("w", "worker"), {**frontend(), "frontend": None}], "spec.roles[1].frontend",
     "is required for componentType frontend"),
    ([{**role("w", "worker"), "frontend": {"kind": "sglang-router"}}], "spec.roles[0].frontend",
     "only allowed on componentType frontend, not worker"),
    ([role("w", "worker"), frontend("f" * 60)], "spec.roles[1].name",
     "must start with a letter and have at most 63 characters"),
    ([role("w", "worker"), {**frontend(), "strategy": "prefix-cache"}], "spec.roles[1].strategy",
     "only allowed on componentType router, not frontend"),
])
def test_frontend_mistakes_are_refused_by_field(roles: list[dict[str, Any]], path: str, message: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        render(service(*roles))
    assert error.value.path == path
    assert message in str(error.value)


def test_a_frontend_and_a_router_stand_side_by_side() -> None:
    objects = render(service(role("w", "worker", ports=[{"containerPort": 8000}]), router(), frontend()))
    assert {"Deployment/svc-router-epp", "Deployment/svc-gateway", "InferencePool/svc-router"} <= objects.keys()
    pool = objects["InferencePool/svc-router"]["spec"]["selector"]["matchLabels"]
    frontend_pod = objects["Deployment/svc-gateway"]["spec"]["template"]["metadata"]["labels"]
    assert not pool.items() <= frontend_pod.items()


def test_tls_is_refused_for_a_frontend_that_calls_in_plain_http() -> None:
    with pytest.raises(InvalidSpec) as error:
        render(service(role("w", "worker"), frontend(), tls={"secretName": "t"}))
    assert error.value.path == "spec.roles[1].componentType"
    assert "calls the engines in plain HTTP" in str(error.value)


def test_the_stage_alone_annotates_the_prefill_pods_with_their_bootstrap_port() -> None:
    service_model = alone.model(service(sglang("p", "prefiller", "--disaggregation-mode", "prefill"),
                                        sglang("d", "decoder", "--disaggregation-mode", "decode"), frontend()))
    changed = alone.pods("frontends", alone.facts(service_model))
    assert changed["p"].worker.template["metadata"]["annotations"] == {"sglang.ai/bootstrap-port": "8998"}
    assert "metadata" not in changed["d"].worker.template
    kinds = [o["kind"] for o in alone.objects("frontends", alone.facts(service_model))]
    assert kinds == ["ServiceAccount", "Role", "RoleBinding", "Deployment", "Service"]
