"""Exact arithmetic on Kubernetes resource quantities ("500m", "16Gi", "1e3").

Values are kept as Fractions, so 3 x 500m is exactly 1500m, never a float near 1.5.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

from fusion_helm.errors import show

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -3, "u": -2, "m": -1, "": 0, "k": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
_QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:\d+\.?\d*|\.\d+))(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE](?P<exp>[+-]?\d+))?$"
)
MAX_TEXT = 64
"""Characters of a quantity: enough for any value below the limit, written out in full."""
LIMIT = 2**63
"""Kubernetes holds no quantity of this magnitude or more (it caps them)."""
_MAX_EXPONENT = 30


@dataclass(frozen=True)
class Quantity:
    value: Fraction
    binary: bool = False
    """Written with a binary suffix (Ki, Mi, …): sums are printed the same way."""

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.value + other.value, self.binary or other.binary)

    def __mul__(self, factor: int) -> Quantity:
        return Quantity(self.value * factor, self.binary)

    def __str__(self) -> str:
        return format_quantity(self)


ZERO = Quantity(Fraction(0))


def parse_quantity(text: str | int) -> Quantity:
    """Parse a quantity as the API server accepts it (a string, or an integer); ValueError if not one."""
    if isinstance(text, int) and not isinstance(text, bool):
        return _bounded(Quantity(Fraction(text)), text)
    match = _QUANTITY.match(text.strip()) if isinstance(text, str) and len(text) <= MAX_TEXT else None
    if not match:
        raise ValueError(f"not a quantity: {show(text)}")
    number = Fraction(match["number"])
    suffix, exponent = match["suffix"], match["exp"]
    if suffix in _BINARY:
        return _bounded(Quantity(number * 1024 ** _BINARY[suffix], binary=True), text)
    if exponent is not None:
        if abs(int(exponent)) > _MAX_EXPONENT:  # refused before 10**exponent is ever computed
            raise ValueError(f"out of range: {show(text)} (a quantity is below 2^63)")
        return _bounded(Quantity(number * Fraction(10) ** int(exponent)), text)
    return _bounded(Quantity(number * Fraction(1000) ** _DECIMAL[suffix or ""]), text)


def _bounded(quantity: Quantity, text: str | int) -> Quantity:
    if abs(quantity.value) >= LIMIT:
        raise ValueError(f"out of range: {show(text)} (a quantity is below 2^63)")
    return quantity


def format_quantity(quantity: Quantity) -> str:
    """Canonical text: the largest suffix that keeps the number whole (1500m, 3, 48Gi, 2k)."""
    value = quantity.value
    if value == 0:
        return "0"
    if quantity.binary and value.denominator == 1:
        for suffix, power in sorted(_BINARY.items(), key=lambda item: -item[1]):
            if value % 1024**power == 0:
                return f"{value // 1024**power}{suffix}"
        return str(value)
    for suffix, power in sorted(_DECIMAL.items(), key=lambda item: -item[1]):
        scaled = value / Fraction(1000) ** power
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    # Finer than a nano-unit: the API server rounds up to the next nano-unit too.
    return f"{math.ceil(value * 1000**3)}n"
