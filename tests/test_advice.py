"""Advice on valid services: a routed role whose serving pods have no readiness probe is warned about,
by field, in every layout and bootstrap; a probed one, a role the router does not route to, and a
multi-node role's non-serving workers (which lose their probes) are not."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fusion_helm.advice import warnings
from tests.builders import every_bootstrap, role, service
from tests.builders import render as expand
from tests.support import router

PROBE = {"httpGet": {"path": "/health", "port": "http"}}
PORTS = [{"containerPort": 8000, "name": "http"}]


def advice(obj: dict[str, Any]) -> list[str]:
    return warnings([obj, *expand(obj).values()])


def unprobed(index: int) -> str:
    return f"InferenceService svc: spec.roles[{index}].template.spec.containers[0].readinessProbe: not set"


@pytest.mark.parametrize("layout", ["replica", "role", "disaggregated"])
def test_routed_roles_without_a_probe_are_named(layout: str) -> None:
    roles = [role("p", "prefiller", ports=PORTS), role("d", "decoder", ports=PORTS, readinessProbe=PROBE)]
    spec = {"layout": layout} if layout != "replica" else {}
    if layout == "role":  # the role layout routes no prefill/decode service: a monolithic one
        roles = [role("w", "worker", ports=PORTS), role("v", "worker", ports=PORTS, readinessProbe=PROBE)]
    lines = advice(service(*roles, router(), **spec))
    assert [line.split(": not set")[0] + ": not set" for line in lines] == [unprobed(0)]
    assert "before the engine has loaded its model" in lines[0]


def test_nothing_to_say_when_every_routed_role_is_probed_or_nothing_is_routed() -> None:
    probed = [role("p", "prefiller", ports=PORTS, readinessProbe=PROBE),
              role("d", "decoder", ports=PORTS, readinessProbe=PROBE)]
    assert advice(service(*probed, router())) == []
    # without a router nothing is routed: a probe is the user's own choice
    assert advice(service(role("p", "prefiller", ports=PORTS), role("d", "decoder", ports=PORTS))) == []


def test_multi_node_roles_are_judged_by_the_pods_that_serve() -> None:
    """Each bootstrap's template carries a probe: the leader (or every pod, where each serves) keeps it,
    the workers that lose it are not routed to; without it, each role is named once."""
    probed = every_bootstrap()
    assert advice(service(*probed, router())) == []
    bare = copy.deepcopy(probed)
    for spec in bare:
        del spec["template"]["spec"]["containers"][0]["readinessProbe"]
    assert [line.split(": not set")[0] + ": not set" for line in advice(service(*bare, router()))] == [
        unprobed(index) for index in range(len(bare))]
