"""Plain YAML scalars as Helm and kubectl read them, in both directions.

Helm, kubectl and the API server's clients read YAML with Go's ``sigs.k8s.io/yaml`` (a YAML 1.1
reader): a plain ``y``, ``off``, ``1e3``, ``0o17`` or ``.inf`` is a boolean or a number there, not
the string PyYAML reads. Reading, the documents we expand are taken as Go takes them
(:func:`resolve_plain`); writing, every string that Go, a YAML 1.2 reader or PyYAML would take for
another type is quoted (:func:`needs_quotes`).
"""

from __future__ import annotations

import math
import re

from fusion_helm.kio.libyaml import yaml

STR, INT, FLOAT, BOOL, NULL, TIMESTAMP, MERGE = "str", "int", "float", "bool", "null", "timestamp", "merge"

_WORDS: dict[str, tuple[str, object]] = {
    **{word: (BOOL, True) for word in ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")},
    **{word: (BOOL, False) for word in ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")},
    **{word: (NULL, None) for word in ("", "~", "null", "Null", "NULL")},
    **{word: (FLOAT, math.nan) for word in (".nan", ".NaN", ".NAN")},
    **{word: (FLOAT, math.inf) for word in (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF")},
    **{word: (FLOAT, -math.inf) for word in ("-.inf", "-.Inf", "-.INF")},
    "<<": (MERGE, "<<"),
}
_NUMBER_START = frozenset("+-0123456789")
_NUMERIC = frozenset("0123456789abcdefABCDEFxXoO_.+-:eETtZz ")
"""Every character of a number (decimal, hexadecimal, octal, binary, float) or timestamp Go reads."""
_DIGIT_OR_POINT = frozenset("0123456789.")
_NOT_DECIMAL = "abcdfABCDFxXoO"
"""Letters in a number only as a base prefix (0x, 0o, 0b) or in a hexadecimal one."""
# Go's strconv.ParseInt/ParseUint with base 0, after the YAML reader dropped every "_".
# (Patterns are compiled on first use, by re's own cache: most renders need few of them.)
_GO_INT = (r"(?P<sign>[-+]?)(?:0[xX](?P<hex>[0-9a-fA-F]+)|0[oO](?P<oct>[0-7]+)|0[bB](?P<bin>[01]+)"
           r"|0(?P<legacy_oct>[0-7]*)|(?P<dec>[1-9][0-9]*))")
_GO_FLOAT = r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?"
# time.Parse layouts Go's YAML reader tries: RFC 3339 with short fields (t or T), space-separated
# without a zone, date only.
_TIMESTAMP = (r"(?P<y>[0-9]{4})-(?P<m>[0-9]{1,2})-(?P<d>[0-9]{1,2})(?:"
              r"[Tt](?P<H>[0-9]{1,2}):(?P<M>[0-9]{1,2}):(?P<S>[0-9]{1,2})(?:\.[0-9]+)?(?:Z|[-+][0-9]{2}:[0-9]{2})"
              r"| (?P<h>[0-9]{1,2}):(?P<n>[0-9]{1,2}):(?P<s>[0-9]{1,2})(?:\.[0-9]+)?)?")
_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1

# YAML 1.2's core schema, for readers of that version.
_YAML12 = (r"null|Null|NULL|~|true|True|TRUE|false|False|FALSE|[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
           r"|[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")
_YAML12_WORDS = frozenset({"null", "Null", "NULL", "~", "true", "True", "TRUE", "false", "False", "FALSE"})
_PYYAML = yaml.resolver.Resolver()
"""PyYAML's own rule (YAML 1.1 with sexagesimal numbers, and timestamps by their shape alone)."""
PYYAML_STR = "tag:yaml.org,2002:str"
_PYYAML_TAG_WORDS = frozenset("=!&*")
"""PyYAML's value and YAML tags: each the one character alone."""
_PYYAML_NUMBER_START = frozenset("+-.0123456789")
_PYYAML_NUMBER_CHARACTERS = frozenset("0123456789_.:+-eETtZ \t")
"""Every character of PyYAML's decimal, sexagesimal and float numbers and its timestamps (a binary or
hexadecimal number has more after its 0b or 0x; ``.inf`` and ``.nan`` are words Go reads alike)."""


def resolve_plain(text: str) -> tuple[str, object]:
    """The type and value Go's YAML reader gives a plain (unquoted, untagged) scalar.

    Timestamps stay strings: read into a JSON object, Go keeps their text. A number too large for a
    64-bit integer is a float, and one too large for a float a string, as in Go.
    """
    word = _WORDS.get(text)
    if word is not None:
        return word
    first = text[0]
    if first == ".":
        value = _go_float(text) if re.fullmatch(_GO_FLOAT, text) else None
        return (FLOAT, value) if value is not None else (STR, text)
    if first not in _NUMBER_START or not could_be_number(text):
        return STR, text
    if text.isdigit() and (first != "0" or len(text) == 1) and len(text) < 20:
        return INT, int(text)  # decimal, and below 10**19: the common case, without a pattern
    if _is_timestamp(text):
        return TIMESTAMP, text
    plain = text.replace("_", "")
    number = _go_int(plain)
    if number is not None:
        return INT, number
    if re.fullmatch(_GO_FLOAT, plain):
        value = _go_float(plain)
        if value is not None:
            return FLOAT, value
    return STR, text


def could_be_number(text: str) -> bool:
    """False when no reader (Go's, YAML 1.2's) takes TEXT for a number or timestamp: a letter other than
    an exponent's or a timestamp's, outside a 0x/0o/0b prefix and hexadecimal digits after 0x; not a
    digit or point after a sign; two points ("--model", "8Gi", a hash like "5f3a", "0.1.0")."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if body[:1] not in _DIGIT_OR_POINT or not _NUMERIC.issuperset(text) or body.count(".") > 1:
        return False  # (a version such as 0.1.0 has two points; a number or timestamp at most one)
    prefix = body[:2]
    if prefix in ("0x", "0X"):
        return True
    if prefix in ("0o", "0O", "0b", "0B"):
        body = body[2:]
    return not any(letter in body for letter in _NOT_DECIMAL)


def _go_int(plain: str) -> int | None:
    if len(plain) > 80:  # no 64-bit integer is written with more digits
        return None
    match = re.fullmatch(_GO_INT, plain)
    if match is None:
        return None
    for group, base in (("hex", 16), ("oct", 8), ("bin", 2), ("legacy_oct", 8), ("dec", 10)):
        digits = match[group]
        if digits is not None:
            value = int(digits or "0", base)
            break
    if match["sign"] == "-":
        value = -value
    if _INT64_MIN <= value <= _INT64_MAX or (not match["sign"] and value <= _UINT64_MAX):
        return value
    return None


def _go_float(text: str) -> float | None:
    value = float(text)  # the caller matched Go's float syntax, which float() reads alike
    return None if math.isinf(value) else value


def _is_timestamp(text: str) -> bool:
    match = re.fullmatch(_TIMESTAMP, text) if text[4:5] == "-" else None
    if match is None:
        return False
    year, month, day = int(match["y"]), int(match["m"]), int(match["d"])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    if not (1 <= month <= 12 and 1 <= day <= days[month - 1]):
        return False
    hour, minute, second = (match[a] or match[b] for a, b in (("H", "h"), ("M", "n"), ("S", "s")))
    return hour is None or (int(hour) < 24 and int(minute) < 60 and int(second) < 60)


def needs_quotes(text: str) -> bool:
    """Whether a string written plain would be read as another type by Go's YAML 1.1 reader, a YAML
    1.2 reader or PyYAML (a timestamp is a string to Go, a date to PyYAML)."""
    if resolve_plain(text)[0] != STR or text in _YAML12_WORDS:
        return True
    if could_be_number(text) and re.fullmatch(_YAML12, text):  # a number to a YAML 1.2 reader
        return True
    return pyyaml_tag(text) != PYYAML_STR


def pyyaml_tag(text: str) -> str:
    """The tag PyYAML's resolver gives TEXT written plain. Its patterns, compiled on first use, are
    asked only where one could match: it reads another type than Go's reader does only in the shapes
    of its numbers and timestamps and in its value and YAML tags; from any other first character, only
    in the words of its booleans, nulls and merge key, each of which Go reads as that type too."""
    if resolve_plain(text)[0] == STR and not _pyyaml_may_retype(text):
        return PYYAML_STR
    tag: str = _PYYAML.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return tag


def _pyyaml_may_retype(text: str) -> bool:
    if text in _PYYAML_TAG_WORDS:
        return True
    if text[:1] not in _PYYAML_NUMBER_START:
        return False
    if text.lstrip("+-")[:2] in ("0b", "0x"):
        return True
    return text.count(".") <= 1 and _PYYAML_NUMBER_CHARACTERS.issuperset(text)
