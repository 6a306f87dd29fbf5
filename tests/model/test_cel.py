"""The upstream CRDs' CEL rules as the post-renderer runs them (fusion_helm/model/cel.py). That its verdicts
are the API server's: tests/controlplane/test_cluster_router.py, on the real API server."""

from __future__ import annotations

from typing import Any

import pytest

from fusion_helm.model import cel
from fusion_helm.model.upstream import checked_schemas, violation

HTTP_ROUTE = ("gateway.networking.k8s.io/v1", "HTTPRoute")


def rules(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return [*node.get(cel.RULES, []), *(rule for value in node.values() for rule in rules(value))]
    if isinstance(node, list):
        return [rule for item in node for rule in rules(item)]
    return []


SHIPPED = rules(checked_schemas())


def test_every_shipped_rule_compiles_and_none_judges_an_update() -> None:
    """A rule that did not compile would refuse nothing: each is one the runtime reads."""
    assert len(SHIPPED) > 100
    assert [rule["rule"] for rule in SHIPPED if cel._compiled(rule["rule"]) is None] == []
    assert not [rule for rule in SHIPPED if "oldSelf" in rule["rule"]]


def route(*matches: dict[str, Any], **rule: Any) -> dict[str, Any]:
    return {"apiVersion": HTTP_ROUTE[0], "kind": HTTP_ROUTE[1], "metadata": {"name": "r"},
            "spec": {"rules": [{"matches": list(matches), **rule}]}}


def test_a_rule_sees_the_field_with_its_defaults() -> None:
    """A path match without a type is a PathPrefix one once the API server defaults it."""
    assert violation(route({"path": {"value": "v1"}})) == (
        ("spec", "rules", 0, "matches", 0, "path"),
        "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']")
    assert violation(route({"path": {"type": "RegularExpression", "value": "v1"}})) is None


def test_a_rule_s_field_path_is_where_it_is_reported() -> None:
    assert cel.failed_rule([{"rule": "self.a > 0", "message": "m", "fieldPath": ".a"}], {"a": 0}) == (("a",), "m")
    assert cel._field_path(".spec.rules[2]['a.b']") == ("spec", "rules", 2, "a.b")
    assert cel._field_path("not a path") == ()


@pytest.mark.parametrize("value", [{"numerator": 1}, {"numerator": 2**70, "denominator": 1}])
def test_a_rule_the_runtime_cannot_decide_refuses_nothing(value: dict[str, Any]) -> None:
    """A missing field without a default, a number past CEL's: the API server's own checks decide those."""
    assert cel.failed_rule([{"rule": "self.numerator <= self.denominator", "message": "m"}], value) is None
    assert cel.failed_rule([{"rule": "self.numerator <= self.denominator", "message": "m"}],
                           {"numerator": 2, "denominator": 1}) == ((), "m")
