"""The chart's own checks decide as the post-renderer does: whether the service is gang-scheduled (the
check Job's --gang, the Volcano CRD check), which APIs its router writes (the check Job's --api), which
its layout needs (--layout-api) and its monitors (--monitoring-api), over the stories, the edge cases
and a few hundred generated specs."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from fusion_helm import InvalidSpec, parse_inference_service
from fusion_helm.expand import expand
from fusion_helm.expand.disaggregated_set import REQUIRED_APIS
from fusion_helm.expand.gang import plan_gang
from fusion_helm.expand.router.generations import generation_of, required_apis
from fusion_helm.model import InferenceService, Layout, PickerGeneration, PoolAPI
from tests.builders import NIXL
from tests.helm import VALUES, Helm

CONTAINER = {"name": "c", "image": "i", "ports": [{"containerPort": 8000, "name": "http"}]}


def role(name: str, component_type: str, replicas: int | None = 1, nodes: int | None = None) -> dict[str, Any]:
    container = {**CONTAINER, "args": NIXL} if component_type in ("prefiller", "decoder") else CONTAINER
    out: dict[str, Any] = {"name": name, "componentType": component_type,
                           "template": {"spec": {"containers": [container]}}}
    if replicas is not None:
        out["replicas"] = replicas
    if nodes is not None:
        out["multinode"] = {"nodeCount": nodes, "bootstrap": "ray"}
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
        "monitoring": {"podMonitor": {"enabled": True, "interval": "30s"}}},
    "PodMonitors turned off": {"roles": [role("w", "worker")], "monitoring": {"podMonitor": {"enabled": False}}},
}


def generated(count: int, seed: int = 12) -> dict[str, dict[str, Any]]:
    rng = random.Random(seed)
    out = {}
    for case in range(count):
        roles = [role(f"r{i}", rng.choice(["worker", "prefiller", "decoder"]), rng.choice([None, 0, 1, 2, 3]),
                      rng.choice([None, 1, 2, 4])) for i in range(rng.randint(1, 3))]
        if rng.random() < 0.3:
            roles.append(router(rng.choice([None, *[str(api) for api in PoolAPI]]), rng.random() < 0.5,
                                rng.random() < 0.5, rng.choice([None, *[str(g) for g in PickerGeneration]])))
        values: dict[str, Any] = {"roles": roles}
        if rng.random() < 0.5:
            values["layout"] = rng.choice(["replica", "role", "disaggregated"])
            if values["layout"] != "replica":
                for served in roles:
                    if served["componentType"] != "router" and rng.random() < 0.6:
                        served.pop("replicas", None)
                        served["autoscaling"] = {"minReplicas": rng.randint(1, 3), "maxReplicas": 4}
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
            if served["componentType"] != "router" and rng.random() < 0.2:
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
        out[f"generated {case}"] = values
    return out


CASES = {**{path.stem: yaml.safe_load(path.read_text()) for path in sorted(VALUES.glob("*.yaml"))}, **EDGE_CASES,
         **generated(120)}


Decision = tuple[bool, list[str], list[str], list[str], list[str]]
"""Gang-scheduled, the APIs the router needs, those the layout needs, where it is placed (the check's
--queue, --priority-class and --tier arguments), and the APIs of the monitors it writes."""


def placement(service: InferenceService) -> list[str]:
    """What the post-renderer writes of the service's placement, as the check Job's arguments: the
    PodGroup's queue, the PriorityClass (on the PodGroup, or the pods of a service without one), the
    tiers of the PodGroup's hard network topologies."""
    objects = expand(service)
    [podgroup] = [o["spec"] for o in objects if o["kind"] == "PodGroup"] or [{}]
    topologies = [podgroup.get("networkTopology"), *(p.get("networkTopology") for p in podgroup.get(
        "subGroupPolicy", []))]
    tiers = sorted({str(t.get("highestTierName", t.get("highestTierAllowed"))) for t in topologies
                    if t and t["mode"] == "hard"})
    args = ["--queue", podgroup["queue"]] if "queue" in podgroup else []
    if service.priority_class_name:
        args += ["--priority-class", service.priority_class_name]
    return args + [arg for tier in tiers for arg in ("--tier", tier)]


def python_decision(values: dict[str, Any]) -> Decision | None:
    spec = {key: value for key, value in values.items()
            if key in ("roles", "gangSchedule", "schedulingStrategy", "layout", "monitoring")}
    if "gangSchedule" in spec and not spec["gangSchedule"]:
        del spec["gangSchedule"]  # the chart leaves an empty gangSchedule out
    try:
        service = parse_inference_service({"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
                                           "metadata": {"name": "svc"}, "spec": spec})
        gang = plan_gang(service).group_name is not None
    except InvalidSpec:
        return None  # the post-renderer refuses it: the install stops there, whatever the chart decided
    layout = list(REQUIRED_APIS) if service.layout is Layout.DISAGGREGATED else []
    try:
        placed = placement(service)
        monitors = sorted({f"{o['apiVersion']}/{o['kind'].lower()}s" for o in expand(service)
                           if o["apiVersion"].startswith("monitoring.coreos.com/")})
        if service.router is None:
            return gang, [], layout, placed, monitors
        router = service.router
        generation = generation_of(service, router)
    except InvalidSpec:
        return None
    return gang, required_apis(generation, router.pool_api, gateway=router.gateway is not None,
                               models=bool(router.models)), layout, placed, monitors


def chart_decision(helm: Helm, values: dict[str, Any], tmp_path: Path) -> Decision | None:
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    result = helm.run("template", "svc", str(VALUES.parent / "charts" / "fusioninfer"), "-f", str(path),
                      "--show-only", "templates/hooks.yaml", check=False)
    if result.returncode != 0:
        assert "values don't meet the specifications of the schema" in result.stderr, result.stderr
        return None
    [job] = [doc for doc in yaml.safe_load_all(result.stdout) if doc and doc["metadata"]["name"].endswith("-check")]
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    placed = [value for i, arg in enumerate(args) if arg in ("--queue", "--priority-class", "--tier")
              for value in (arg, args[i + 1])]
    return ("--gang" in args, [args[i + 1] for i, arg in enumerate(args) if arg == "--api"],
            [args[i + 1] for i, arg in enumerate(args) if arg == "--layout-api"], placed,
            [args[i + 1] for i, arg in enumerate(args) if arg == "--monitoring-api"])


def test_the_chart_decides_as_the_post_renderer(helm: Helm, tmp_path: Path) -> None:
    compared = 0
    for name, values in CASES.items():
        python = python_decision(values)
        if python is None:
            continue
        chart = chart_decision(helm, values, tmp_path)
        assert chart == python, (name, json.dumps(values))
        compared += 1
    assert compared > 80


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_each_edge_case_is_decided(name: str) -> None:
    assert python_decision(EDGE_CASES[name]) is not None, "an edge case must be one the post-renderer renders"
