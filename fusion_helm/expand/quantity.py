"""Exact arithmetic on Kubernetes resource quantities ("500m", "16Gi", "1e3").

A quantity is held as a whole number of nano-units, as the API server holds it (finer values are
rounded up to the next nano-unit, as it rounds them), so 3 x 500m is exactly 1500m, never a float
near 1.5.
"""

from __future__ import annotations

from fusion_helm.errors import show
from fusion_helm.records import record

NANO = 10**9
"""Nano-units in one unit."""
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -3, "u": -2, "m": -1, "": 0, "k": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
_DIGITS = frozenset("0123456789")
MAX_TEXT = 64
"""Characters of a quantity: enough for any value below the limit, written out in full."""
LIMIT = 2**63
"""Kubernetes holds no quantity of this magnitude or more (it caps them)."""
_MAX_EXPONENT = 30


@record
class Quantity:
    nanos: int
    """The value in nano-units."""
    binary: bool = False
    """Written with a binary suffix (Ki, Mi, …): sums are printed the same way."""

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.nanos + other.nanos, self.binary or other.binary)

    def __mul__(self, factor: int) -> Quantity:
        return Quantity(self.nanos * factor, self.binary)

    def __str__(self) -> str:
        return format_quantity(self)

    def whole(self) -> int:
        """The value in units, rounded up."""
        return -(-self.nanos // NANO)


ZERO = Quantity(0)


def parse_quantity(text: str | int) -> Quantity:
    """Parse a quantity as the API server accepts it (a string, or an integer); ValueError if not one."""
    if isinstance(text, int) and not isinstance(text, bool):
        return _bounded(Quantity(text * NANO), text)
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise ValueError(f"not a quantity: {show(text)}")
    body = text.strip()
    sign = -1 if body[:1] == "-" else 1
    body = body[1:] if body[:1] in ("+", "-") else body
    end = 0
    while end < len(body) and (body[end] in _DIGITS or body[end] == "."):
        end += 1
    number, suffix = body[:end], body[end:]
    whole, _, fraction = number.partition(".")
    if not (whole or fraction) or "." in fraction:
        raise ValueError(f"not a quantity: {show(text)}")
    numerator, denominator = sign * int(whole + fraction or "0"), 10 ** len(fraction)
    binary = suffix in _BINARY
    if binary:
        numerator *= 1024 ** _BINARY[suffix] * NANO
    elif suffix in _DECIMAL:
        numerator, denominator = _scaled(numerator, denominator, 9 + 3 * _DECIMAL[suffix])
    elif suffix[:1] in ("e", "E") and _is_integer(suffix[1:]):
        exponent = int(suffix[1:])
        if abs(exponent) > _MAX_EXPONENT:  # refused before 10**exponent is ever computed
            raise ValueError(f"out of range: {show(text)} (a quantity is below 2^63)")
        numerator, denominator = _scaled(numerator, denominator, 9 + exponent)
    else:
        raise ValueError(f"not a quantity: {show(text)}")
    return _bounded(Quantity(-(-numerator // denominator), binary), text)


def _scaled(numerator: int, denominator: int, power: int) -> tuple[int, int]:
    return (numerator * 10**power, denominator) if power >= 0 else (numerator, denominator * 10**-power)


def _is_integer(text: str) -> bool:
    digits = text[1:] if text[:1] in ("+", "-") else text
    return bool(digits) and _DIGITS.issuperset(digits)


def _bounded(quantity: Quantity, text: str | int) -> Quantity:
    if abs(quantity.nanos) >= LIMIT * NANO:
        raise ValueError(f"out of range: {show(text)} (a quantity is below 2^63)")
    return quantity


def format_quantity(quantity: Quantity) -> str:
    """Canonical text: the largest suffix that keeps the number whole (1500m, 3, 48Gi, 2k)."""
    nanos = quantity.nanos
    if nanos == 0:
        return "0"
    if quantity.binary and nanos % NANO == 0:
        value = nanos // NANO
        for suffix, power in sorted(_BINARY.items(), key=lambda item: -item[1]):
            if value % 1024**power == 0:
                return f"{value // 1024**power}{suffix}"
        return str(value)
    for suffix, power in sorted(_DECIMAL.items(), key=lambda item: -item[1]):
        unit = 10 ** (9 + 3 * power)
        if nanos % unit == 0:
            return f"{nanos // unit}{suffix}"
    raise AssertionError("every whole number of nano-units has a suffix")
