"""Every side decides as the post-renderer does, over the stories, the edge cases and a few hundred generated
specs: the check Job's rules (fusion_helm.base.needs, on the spec as the chart renders it) — whether the
service is gang-scheduled, which APIs its router, layout and monitors need, where it is placed — against what
the expansion writes; and the chart's own render-time decisions (whether to render the Volcano check and
which RBAC the hooks get) against those rules."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fusion_helm import InvalidSpec, parse_inference_service
from fusion_helm.base import needs
from fusion_helm.expand import expand
from fusion_helm.expand.gang import plan_gang
from fusion_helm.model import PoolAPI
from tests.builders import NIXL, SCRAPED_FROM_MONITORING
from tests.helm import CHART, VALUES, Helm

CONTAINER = {"name": "c", "image": "i", "ports": [{"containerPort": 8000, "name": "http"}],
             "resources": {"requests": {"cpu": "100m"}}}


def role(name: str, component_type: str, replicas: int | None = 1, nodes: int | None = None) -> dict[str, Any]:
    container = {**CONTAINER, "args": NIXL} if component_type in ("prefiller", "decoder") else CONTAINER
    out: dict[str, Any] = {"name": name, "componentType": component_type,
                           "template": {"spec": {"containers": [container]}}}
    if replicas is not None:
        out["replicas"] = replicas
    if nodes is not None:
        out["multinode"] = {"nodeCount": nodes, "bootstrap": "ray"}
    return out


def frontend(replicas: int | None = None) -> dict[str, Any]:
    """A frontend role: in front of the serving roles, never one of them (for the gang, the placement, the
    role-change guard's count)."""
    out: dict[str, Any] = {"name": "gateway", "componentType": "frontend", "frontend": {"kind": "sglang-router"},
                           "template": {"spec": {"containers": [{"name": "router", "image": "i"}]}}}
    if replicas is not None:
        out["replicas"] = replicas
    return out


def router(pool: str | None = None, models: bool = False, gateway: bool = False,
           generation: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": "router", "componentType": "router", "httproute": {"parentRefs": [{"name": "gw"}]}}
    if generation:
        out["endpointPicker"] = {"generation": generation}
    if gateway:
        out["gateway"] = {"gatewayClassName": "istio", "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}
    if pool:
        out["poolAPIVersion"] = pool
    if models:
        out["models"] = [{"name": "m"}]
    return out


EDGE_CASES: dict[str, dict[str, Any]] = {
    "a role's topology over the service's, another opting out, the whole service's": {
        "roles": [{**role("p", "prefiller", nodes=2), "networkTopology": {"mode": "none"}},
                  {**role("d", "decoder", 2, nodes=4), "networkTopology": {"highestTierName": "rack"}},
                  role("d2", "decoder", 1, nodes=2)],
        "gangSchedule": {"networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                         "serviceNetworkTopology": {"highestTierAllowed": 2}},
        "schedulingStrategy": {"queue": "team-a", "priorityClassName": "high"}},
    "the only role autoscaled to a gang at level role": {
        "layout": "role", "gangSchedule": {"level": "role", "minRoleReplicas": {"w": 2}},
        "roles": [{**role("w", "worker", None), "autoscaling": {"minReplicas": 2, "maxReplicas": 4}}]},
    "disaggregated, decode autoscaled": {
        "layout": "disaggregated", "roles": [role("p", "prefiller"), {**role("d", "decoder", None, nodes=2),
                                                                        "autoscaling": {"minReplicas": 2,
                                                                                        "maxReplicas": 3}}]},
    "soft topology names no tier": {"roles": [role("w", "worker", 2, nodes=2)],
                                    "gangSchedule": {"networkTopology": {"mode": "soft"}}},
    "a priority class without a gang": {"roles": [role("w", "worker", 2)],
                                        "schedulingStrategy": {"priorityClassName": "high"}},
    "worker with nodeCount 1": {"roles": [role("w", "worker", 2, nodes=1)]},
    "one prefiller replica alone": {"roles": [role("p", "prefiller")]},
    "prefiller and decoder of one replica": {"roles": [role("p", "prefiller"), role("d", "decoder")]},
    "prefill/decode with no replicas": {"roles": [role("p", "prefiller", 0), role("d", "decoder", 0)]},
    "gang off": {"roles": [role("w", "worker", 1, nodes=4)], "gangSchedule": {"enable": False}},
    "gang on for monolithic replicas": {"roles": [role("w", "worker", 3)],
                                        "gangSchedule": {"enable": True, "minRoleReplicas": {"w": 2}}},
    "level group": {"roles": [role("w", "worker", 2)], "gangSchedule": {"level": "group"}},
    "minRoleReplicas": {"roles": [role("p", "prefiller", 3), role("d", "decoder", 3)],
                        "gangSchedule": {"minRoleReplicas": {"d": 2}}},
    "replicas omitted": {"roles": [role("w", "worker", None, nodes=2)]},
    "router, v1 pool": {"roles": [role("w", "worker"), router()]},
    "router, v1 pool with models": {"roles": [role("w", "worker"), router(models=True)]},
    "router with a gateway": {"roles": [role("w", "worker"), router(gateway=True)]},
    "router, v1alpha2 pool": {"roles": [role("w", "worker"), router("inference.networking.x-k8s.io/v1alpha2")]},
    "router, v1alpha2 pool with models": {
        "roles": [role("w", "worker"), router("inference.networking.x-k8s.io/v1alpha2", models=True)]},
    "prefill/decode router with models": {
        "roles": [role("p", "prefiller"), role("d", "decoder"), router(models=True)]},
    "llm-d-router without models": {"roles": [role("w", "worker"), router(generation="llm-d-router")]},
    "llm-d-router with models and a gateway": {
        "roles": [role("w", "worker"), router(generation="llm-d-router", models=True, gateway=True)]},
    "gie-v1.5 without models": {"roles": [role("w", "worker"), router(generation="gie-v1.5")]},
    "gie-v1.5 with models and a gateway": {
        "roles": [role("w", "worker"), router(generation="gie-v1.5", models=True, gateway=True)]},
    "gie-v1.5 before a role at zero under KEDA": {
        "layout": "role", "monitoring": {"podMonitor": {"enabled": True}}, "roles": [
            {**role("w", "worker", None), "autoscaling": {
                "minReplicas": 0, "maxReplicas": 2, "prometheus": {
                    "serverAddress": "http://prometheus.monitoring:9090"}}},
            router(generation="gie-v1.5")]},
    "gie-v1.0 on a v1alpha2 pool": {
        "roles": [role("w", "worker"), router("inference.networking.x-k8s.io/v1alpha2", generation="gie-v1.0")]},
    "disaggregated": {"roles": [role("p", "prefiller"), role("d", "decoder", 2)], "layout": "disaggregated"},
    "disaggregated with a router": {"roles": [role("p", "prefiller"), role("d", "decoder"), router(models=True)],
                                    "layout": "disaggregated"},
    "disaggregated with llm-d-router named": {
        "roles": [role("p", "prefiller"), role("d", "decoder"), router(generation="llm-d-router", gateway=True)],
        "layout": "disaggregated"},
    "role layout with a monolithic router": {"roles": [role("w", "worker", 2), router()], "layout": "role"},
    "PodMonitors for prefill/decode and the picker": {
        "roles": [role("p", "prefiller"), role("d", "decoder", 2, nodes=2), router()], "layout": "disaggregated",
        "monitoring": {"podMonitor": {"enabled": True, "interval": "30s"}}, **SCRAPED_FROM_MONITORING},
    "PodMonitors turned off": {"roles": [role("w", "worker")], "monitoring": {"podMonitor": {"enabled": False}}},
    "a frontend of many pods before one single-pod role": {"roles": [frontend(8), role("w", "worker")]},
    "TLS from a Secret": {"roles": [role("p", "prefiller"), role("d", "decoder"), router()],
                          "tls": {"secretName": "s"}},
    "TLS from cert-manager": {"roles": [role("w", "worker"), router()], "service": {},
                              "tls": {"certManager": {"issuerRef": {"name": "ca", "kind": "ClusterIssuer"}}}},
    "prefill and decode at zero under KEDA, its Prometheus behind credentials": {
        "layout": "disaggregated", "monitoring": {"podMonitor": {"enabled": True}}, "roles": [
            {**role("p", "prefiller", None, nodes=2), "autoscaling": {
                "minReplicas": 0, "maxReplicas": 2, "keepUpWith": {"role": "d", "ratio": 1}, "prometheus": {
                    "serverAddress": "https://prometheus.monitoring.svc:9090",
                    "credentials": {"secretName": "p", "mode": "basic"}}}},
            {**role("d", "decoder", None, nodes=2), "autoscaling": {
                "minReplicas": 0, "maxReplicas": 4, "prometheus": {
                    "serverAddress": "https://prometheus.monitoring.svc:9090"}}},
            router(generation="llm-d-router")]},
    "a frontend beside a multi-node role at level group": {"roles": [role("w", "worker", 2, nodes=2), frontend()],
                                                           "gangSchedule": {"level": "group"}},
    "weights on a claim, per role": {"model": {"source": "pvc://weights/qwen"}, "roles": [
        role("w", "worker"), {**role("d", "worker"), "model": {"source": "pvc://drafts/small/v1"}}, router()]},
    "weights fetched onto an existing claim, and a role of its own on another": {
        "model": {"source": "s3://bucket/models/qwen", "credentials": {"secretName": "s3"}},
        "modelCache": {"claimName": "shared-cache"},
        "roles": [role("p", "prefiller"), {**role("d", "decoder"), "model": {"source": "pvc://weights/qwen"}}]},
    "weights fetched onto a claim the service makes": {
        "model": {"source": "hf://Qwen/Qwen3-8B", "revision": "b968826d9c46dd6066d109eabc6255188de91218"},
        "modelCache": {"size": "100Gi"}, "roles": [role("w", "worker", 2, nodes=2)]},
}


AUTOSCALERS: list[dict[str, Any]] = [
    {}, {"prometheus": {"serverAddress": "http://prometheus:9090"}},
    {"prometheus": {"serverAddress": "http://prometheus:9090", "credentials": {"secretName": "p", "mode": "bearer"}}},
    {"triggers": [{"type": "cron", "metadata": {"timezone": "UTC", "start": "0 8 * * *", "end": "0 9 * * *",
                                                "desiredReplicas": "1"}}]}]
"""A HorizontalPodAutoscaler; KEDA on Prometheus, with credentials or without; KEDA on triggers alone."""


def generated(count: int, seed: int = 12) -> dict[str, dict[str, Any]]:
    rng = random.Random(seed)
    out = {}
    for case in range(count):
        roles = [role(f"r{i}", rng.choice(["worker", "prefiller", "decoder"]), rng.choice([None, 0, 1, 2, 3]),
                      rng.choice([None, 1, 2, 4])) for i in range(rng.randint(1, 3))]
        if rng.random() < 0.3:
            roles.append(router(rng.choice([None, *[str(api) for api in PoolAPI]]), rng.random() < 0.5,
                                rng.random() < 0.5, rng.choice([None, *[str(g) for g in needs.PICKERS]])))
        if rng.random() < 0.2:
            roles.insert(rng.randint(0, len(roles)), frontend(rng.choice([None, 1, 3])))
        values: dict[str, Any] = {"roles": roles}
        if rng.random() < 0.5:
            values["layout"] = rng.choice(["replica", "role", "disaggregated"])
            if values["layout"] != "replica":
                for served in roles:
                    if served["componentType"] not in ("router", "frontend") and rng.random() < 0.6:
                        served.pop("replicas", None)
                        served["autoscaling"] = {"minReplicas": rng.randint(0, 3), "maxReplicas": 4}
                        served["autoscaling"].update(rng.choice(AUTOSCALERS))
        if rng.random() < 0.5:
            gang: dict[str, Any] = {}
            if rng.random() < 0.5:
                gang["enable"] = rng.random() < 0.7
            if rng.random() < 0.5:
                gang["level"] = rng.choice(["role", "group"])
            if rng.random() < 0.3:
                gang["minRoleReplicas"] = {roles[0]["name"]: rng.randint(1, 2)}
            values["gangSchedule"] = gang
        topologies = [{"mode": "none"}, {"mode": "soft"}, {"highestTierAllowed": rng.randint(1, 3)},
                      {"mode": "hard", "highestTierName": rng.choice(["rack", "spine"])}]
        for served in roles:
            if served["componentType"] not in ("router", "frontend") and rng.random() < 0.2:
                served["networkTopology"] = rng.choice(topologies)
        if rng.random() < 0.3:
            gang = values.setdefault("gangSchedule", {})
            for field in ("networkTopology", "serviceNetworkTopology"):
                if rng.random() < 0.5:
                    gang[field] = rng.choice(topologies[1:])
        if rng.random() < 0.2:
            values["schedulingStrategy"] = {key: value for key, value in (("queue", "team-a"), ("priorityClassName",
                                            "high")) if rng.random() < 0.7}
        if rng.random() < 0.3:
            values["monitoring"] = rng.choice([{}, {"podMonitor": {}}, {"podMonitor": {"enabled": True}},
                                               {"podMonitor": {"enabled": False, "interval": "1m"}}])
        if any("prometheus" in (served.get("autoscaling") or {}) for served in roles):
            values["monitoring"] = {"podMonitor": {"enabled": True}}  # what the signals' queries read
        out[f"generated {case}"] = values
    return out


CASES = {**{path.stem: yaml.safe_load(path.read_text()) for path in sorted(VALUES.glob("*.yaml"))}, **EDGE_CASES,
         **generated(120)}


SPEC_FIELDS = ("roles", "layout", "schedulingStrategy", "gangSchedule", "monitoring", "service", "tls", "model",
               "modelCache", "networkPolicy")


def spec_of(values: dict[str, Any]) -> dict[str, Any]:
    """The spec the chart renders from VALUES (templates/_helpers.tpl fusioninfer.spec: empty fields left out)."""
    return {key: values[key] for key in SPEC_FIELDS if values.get(key)}


def expanded(values: dict[str, Any]) -> list[dict[str, Any]] | None:
    """What the post-renderer writes for a service of VALUES; None where it refuses the service (the install
    stops there, whatever anything else decided)."""
    try:
        service = parse_inference_service({"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
                                           "metadata": {"name": "svc", "namespace": "llm"},
                                           "spec": spec_of(values)})
        plan_gang(service)
        return expand(service)
    except InvalidSpec:
        return None


def written(objects: list[dict[str, Any]], spec: dict[str, Any]) -> dict[str, Any]:
    """What the expansion wrote, as the check reads it: gang-scheduled (a PodGroup), the APIs of the objects the
    router's picker reads (the pool, the HTTPRoute, the Gateway, the model objects), the layout's and the
    monitors', and the placement (the PodGroup's queue and hard topology tiers, the PriorityClass)."""
    [podgroup] = [o["spec"] for o in objects if o["kind"] == "PodGroup"] or [None]
    topologies = [(podgroup or {}).get("networkTopology"),
                  *(p.get("networkTopology") for p in (podgroup or {}).get("subGroupPolicy", []))]
    tiers = sorted({str(t.get("highestTierName", t.get("highestTierAllowed"))) for t in topologies
                    if t and t["mode"] == "hard"})
    resources = {f"{o['apiVersion']}/{o['kind'].lower()}s": o for o in objects}
    made = {o["metadata"]["name"] for o in objects if o["kind"] == "PersistentVolumeClaim"}
    return {
        "gang": podgroup is not None,
        "router": [api for api in resources if api.endswith(("/inferencepools", "/httproutes", "/gateways",
                                                              "/inferencemodels", "/inferenceobjectives"))],
        "layout": sorted(api for api in resources if api.startswith("disaggregatedset.x-k8s.io/")),
        "monitoring": sorted(api for api in resources if api.startswith("monitoring.coreos.com/")),
        "tls": sorted(api for api in resources if api.startswith("cert-manager.io/")),
        "autoscaling": sorted(api for api in resources if api.startswith("keda.sh/")),
        "placement": needs.Placement((podgroup or {}).get("queue"),
                                     (spec.get("schedulingStrategy") or {}).get("priorityClassName"), tuple(tiers)),
        "claims": tuple(sorted(set(claims_read(objects)) - made)),
    }


def claims_read(found: Any) -> Iterator[str]:
    """The claims the pods of FOUND (objects, or any part of them) mount."""
    if isinstance(found, dict):
        if isinstance(found.get("persistentVolumeClaim"), dict):
            yield found["persistentVolumeClaim"]["claimName"]
        for value in found.values():
            yield from claims_read(value)
    elif isinstance(found, list):
        for value in found:
            yield from claims_read(value)


def decided(spec: dict[str, Any]) -> dict[str, Any]:
    """The same, as the check Job decides it from the spec alone."""
    return {"gang": needs.gang_minimum(spec) is not None, "router": needs.router_apis(spec),
            "layout": sorted(needs.layout_apis(spec)), "monitoring": sorted(needs.monitoring_apis(spec)),
            "tls": sorted(needs.tls_apis(spec)), "autoscaling": sorted(needs.autoscaling_apis(spec)),
            "placement": needs.placement(spec), "claims": needs.weight_claims(spec)}


def test_the_check_decides_from_the_spec_as_the_expansion_writes() -> None:
    compared = 0
    for name, values in CASES.items():
        objects = expanded(values)
        if objects is None:
            continue
        spec = spec_of(values)
        ours = decided(spec)
        theirs = written(objects, spec)
        # The picker reads its model objects' API whether or not the router writes any (the v0.5 and v1.0
        # pickers exit at start without their CRD): the check asks for it where the expansion wrote none.
        model_apis = {api for api in ours["router"] if api.endswith(("/inferencemodels", "/inferenceobjectives"))}
        assert sorted(set(ours["router"]) - model_apis) == sorted(set(theirs["router"]) - model_apis), name
        assert set(theirs["router"]) <= set(ours["router"]), name
        # Role scalers are written only for an autoscaled role, and read by the status whatever the roles.
        assert set(theirs["layout"]) <= set(ours["layout"]) and bool(theirs["layout"]) == bool(ours["layout"]), name
        assert {key: value for key, value in ours.items() if key not in ("router", "layout")} == \
            {key: value for key, value in theirs.items() if key not in ("router", "layout")}, (name, json.dumps(values))
        compared += 1
    assert compared > 80


HARNESS = """apiVersion: v1
kind: ConfigMap
metadata: {name: decisions}
data:
{{- range $name, $values := .Values.cases }}
  {{ $name | quote }}: {{ dict "gang" (include "fusioninfer.gangScheduled" (dict "Values" $values) | eq "true")
                             "placement" (include "fusioninfer.placement" (dict "Values" $values) | fromJson)
                             "claims" (include "fusioninfer.weightClaims" (dict "Values" $values) | fromJsonArray)
                             "prometheus" (include "fusioninfer.queriesPrometheus" (dict "Values" $values) | ne "")
                             "canaries" (include "fusioninfer.canaryPools" (dict "Values" $values) | fromJsonArray)
                        | toJson | quote }}
{{- end }}
"""
"""The chart's own decisions for each case, in one render: a template of the test's beside the chart's."""


def test_the_chart_decides_what_it_needs_at_render_time_as_the_check_does(helm: Helm, tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    shutil.copytree(CHART, chart)
    (chart / "values.schema.json").unlink()  # the cases are values of their own, not the chart's
    (chart / "templates" / "decisions.yaml").write_text(HARNESS)
    values = tmp_path / "cases.yaml"
    cases = {name: spec_of(values) for name, values in CASES.items() if expanded(values) is not None}
    values.write_text(yaml.safe_dump({"cases": cases}))
    rendered = helm.run("template", "svc", str(chart), "-f", str(values), "--show-only", "templates/decisions.yaml")
    chart_decisions = {name: json.loads(text) for name, text in yaml.safe_load(rendered.stdout)["data"].items()}
    assert chart_decisions.keys() == cases.keys() and len(cases) > 80
    for name, spec in cases.items():
        placement = needs.placement(spec)
        assert chart_decisions[name] == {
            "gang": needs.gang_minimum(spec) is not None,
            "placement": {"tiers": list(placement.tiers),
                          **({"queue": placement.queue} if placement.queue else {}),
                          **({"priorityClass": placement.priority_class} if placement.priority_class else {})},
            "claims": list(needs.weight_claims(spec)),
            "prometheus": needs.queries_prometheus(spec),
            "canaries": [list(pool) for pool in needs.canary_pools(spec)],
        }, (name, json.dumps(spec))


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_each_edge_case_is_decided(name: str) -> None:
    assert expanded(EDGE_CASES[name]) is not None, "an edge case must be one the post-renderer renders"
