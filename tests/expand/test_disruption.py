"""The disruption stage: a role's PodDisruptionBudget, counted in whole replicas."""

from __future__ import annotations

from tests.builders import render, role, service
from tests.expand import alone


def test_the_stage_alone_budgets_a_multi_node_role_by_default_and_a_single_node_one_when_asked() -> None:
    service_model = alone.model(service(role("big", "worker", replicas=3, nodes=4),
                                        {**role("small", "worker", replicas=2), "disruptionBudget": {
                                            "maxUnavailableReplicas": 2}},
                                        role("plain", "worker"), layout="role"))
    budgets = alone.objects("disruption", alone.facts(service_model))
    assert [(budget["metadata"]["name"], budget["spec"]["maxUnavailable"]) for budget in budgets] == [
        ("svc-big", 1), ("svc-small", 2)]
    assert budgets[0]["spec"]["selector"] == {"matchLabels": {"fusioninfer.io/service": "svc",
                                                              "fusioninfer.io/role-name": "big"}}
    assert budgets[0]["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"


def test_a_multi_node_role_may_opt_out() -> None:
    objects = render(service({**role("big", "worker", nodes=2), "disruptionBudget": {"enabled": False}}))
    assert not [key for key in objects if key.startswith("PodDisruptionBudget/")]
