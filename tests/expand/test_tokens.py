"""The tokens stage: no serving container mounts a ServiceAccount token it does not use; the prefill/decode
sidecar, which reads its pool, mounts its own."""

from __future__ import annotations

from typing import Any

from fusion_helm.expand.pods import Pod, RoleTemplates
from tests.builders import render, role, service
from tests.expand import alone
from tests.support import router

TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def test_the_stage_alone_mounts_no_token_unless_the_template_asks() -> None:
    service_model = alone.model(service(role("a", "worker", nodes=2), role("b", "worker")))
    leader, worker = {"spec": {"containers": [{"name": "engine"}]}}, {"spec": {"containers": [{"name": "ray"}]}}
    asks = {"spec": {"containers": [{"name": "engine"}], "automountServiceAccountToken": True}}
    changed = alone.pods("tokens", alone.facts(service_model), {
        "a": RoleTemplates(size=2, leader=Pod(leader, None), worker=Pod(worker, None)),
        "b": RoleTemplates(size=1, worker=Pod(asks, None))})
    assert changed["a"].leader is not None
    for template in (changed["a"].leader.template, changed["a"].worker.template):
        assert template["spec"]["automountServiceAccountToken"] is False
    assert changed["b"].worker.template == asks


def decode_pod(**container: Any) -> dict[str, Any]:
    objects = render(service(role("p", "prefiller", **container), role("d", "decoder", **container), router()))
    return dict(objects["LeaderWorkerSet/svc-d-0"]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"])


def test_the_sidecar_mounts_its_own_token_and_the_engine_none() -> None:
    pod = decode_pod()
    assert pod["automountServiceAccountToken"] is False
    assert pod["serviceAccountName"] == "svc-router-pd-sidecar"
    [sidecar] = pod["initContainers"]
    engine = pod["containers"][0]
    [volume] = [volume for volume in pod["volumes"] if volume["name"] == "fusioninfer-api-token"]
    assert [source.keys() for source in volume["projected"]["sources"]] == [
        {"serviceAccountToken": 1}.keys(), {"configMap": 1}.keys(), {"downwardAPI": 1}.keys()]
    assert {"name": "fusioninfer-api-token", "mountPath": TOKEN_DIR, "readOnly": True} in sidecar["volumeMounts"]
    assert not [mount for mount in engine.get("volumeMounts") or [] if mount["mountPath"] == TOKEN_DIR]


def test_every_serving_pod_mounts_no_token() -> None:
    for name, obj in render(service(role("a", "worker", nodes=2), router())).items():
        if name.startswith("LeaderWorkerSet/"):
            template = obj["spec"]["leaderWorkerTemplate"]
            for pod in (template["leaderTemplate"], template["workerTemplate"]):
                assert pod["spec"]["automountServiceAccountToken"] is False, name
