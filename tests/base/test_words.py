"""The stored spec's words (fusion_helm.base) are the typed model's: each componentType and layout a rule
names is one the schema allows, so a rule cannot silently never match."""

from __future__ import annotations

from fusion_helm.base.needs import GROUPED_LAYOUTS, NOT_SERVING, PREFILL_DECODE, ROUTER
from fusion_helm.model.inference_service import ComponentType, Layout


def test_the_rules_name_component_types_and_layouts_the_schema_has() -> None:
    assert {ROUTER, *NOT_SERVING, *PREFILL_DECODE} <= {kind.value for kind in ComponentType}
    assert {layout.value for layout in Layout} >= GROUPED_LAYOUTS
    assert not NOT_SERVING & PREFILL_DECODE
