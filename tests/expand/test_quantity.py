from __future__ import annotations

import pytest

from fusion_helm.expand.quantity import NANO, parse_quantity


@pytest.mark.parametrize("text,nanos", [
    ("500m", NANO // 2), ("1", NANO), ("1.5", 3 * NANO // 2), ("16Gi", 16 * 1024**3 * NANO),
    ("1e3", 1000 * NANO), ("2k", 2000 * NANO), ("100n", 100), (".5", NANO // 2), (8, 8 * NANO), ("+2", 2 * NANO),
    ("-1", -NANO), ("1.e-3", NANO // 1000), ("5.", 5 * NANO), ("0.1n", 1), ("1E+2", 100 * NANO),
])
def test_parse(text, nanos) -> None:
    assert parse_quantity(text).nanos == nanos


@pytest.mark.parametrize("text,factor,total", [
    ("500m", 3, "1500m"), ("500m", 2, "1"), ("16Gi", 3, "48Gi"), ("8", 10, "80"), ("1.5Gi", 1, "1536Mi"),
    ("100m", 10000, "1k"), ("0", 5, "0"), ("1Ki", 1, "1Ki"), ("250u", 2, "500u"),
])
def test_exact_totals(text, factor, total) -> None:
    assert str(parse_quantity(text) * factor) == total


def test_sums_mix_binary_and_decimal_exactly() -> None:
    assert str(parse_quantity("0.1") + parse_quantity("0.2")) == "300m"
    assert str(parse_quantity("100Mi") + parse_quantity("1G")) == "1104857600"


@pytest.mark.parametrize("bad", ["lots", "1.2.3", "5 Gi", "Gi", "1gi", True, 0.5, None, ".", "1e", "1e1.5", "\u0661",
                                 "+-1", "1Kii", "e3"])
def test_rejects_what_the_api_server_rejects(bad) -> None:
    with pytest.raises(ValueError, match="not a quantity"):
        parse_quantity(bad)
