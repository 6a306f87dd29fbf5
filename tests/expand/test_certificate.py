"""The certificate stage: spec.tls.certManager's Certificate, for the names the serving pods are reached by."""

from __future__ import annotations

from tests.builders import render, role, service
from tests.expand import alone
from tests.schemas import Validators, errors
from tests.support import router

ISSUER = {"issuerRef": {"name": "ca", "kind": "ClusterIssuer"}}


def test_the_stage_alone_writes_one_certificate_for_the_service_s_services() -> None:
    service_model = alone.model(service({**role("w", "worker"), "service": {}}, service={},
                                        tls={"certManager": {**ISSUER, "duration": "720h"}}))
    [certificate] = alone.objects("certificate", alone.facts(service_model))
    assert certificate["metadata"]["name"] == "svc-serving-tls"
    assert certificate["spec"]["dnsNames"] == ["localhost", "svc-w-serving", "svc-serving", "svc-w-serving.llm.svc",
                                               "svc-serving.llm.svc"]
    assert certificate["spec"]["duration"] == "720h"


def test_cert_manager_writes_the_secret_for_the_names_the_pods_are_reached_by(validators: Validators) -> None:
    objects = render(service({**role("w", "worker", ports=[{"containerPort": 8000, "name": "http"}]), "service": {}},
                             router(), service={}, tls={"certManager": {**ISSUER, "renewBefore": "360h"}}))
    certificate = objects["Certificate/svc-serving-tls"]
    assert errors(validators(certificate["apiVersion"], certificate["kind"]), certificate) == []
    assert certificate["spec"] == {
        "secretName": "svc-serving-tls", "issuerRef": {"name": "ca", "kind": "ClusterIssuer"},
        "dnsNames": ["localhost", "svc-w-serving", "svc-serving", "svc-w-serving.llm.svc", "svc-serving.llm.svc"],
        "ipAddresses": ["127.0.0.1"], "usages": ["server auth", "digital signature", "key encipherment"],
        "privateKey": {"rotationPolicy": "Always"}, "renewBefore": "360h"}
    spec = objects["LeaderWorkerSet/svc-w-0"]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    assert spec["volumes"] == [{"name": "fusioninfer-tls", "secret": {"secretName": "svc-serving-tls"}}]
    named = render(service(role("w", "worker"), tls={"secretName": "mine", "certManager": {"issuerRef": {
        "name": "ca"}}}))
    assert named["Certificate/svc-serving-tls"]["spec"]["secretName"] == "mine"
