"""The CEL rules of the upstream CRDs (``x-kubernetes-validations``), evaluated as the API server does.

The API server runs each rule with ``self`` the field the rule sits on, after pruning nulls and applying
the schema's defaults, in CEL with Kubernetes' string extension (``split``, …). Here Google's CEL runtime
(cel-expr-python, the C++ implementation of the spec cel-go implements) does the same. Rules that compare
an update with its past (``oldSelf``, transition rules) never apply to a render and are not shipped
(model/schema.py). A rule the runtime cannot decide (an error, not a false) refuses nothing: only what
the API server would refuse is refused here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

Path = tuple[str | int, ...]
RULES = "x-kubernetes-validations"
"""A schema node's CEL rules: each ``{"rule": …, "message": …, "fieldPath": …}``."""
_FIELD_PATH = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\['([^']*)'\]")


def failed_rule(rules: Sequence[Mapping[str, Any]], value: Any) -> tuple[Path, str] | None:
    """The first of RULES that VALUE (the field they sit on, defaults applied) fails: the path its
    ``fieldPath`` names under the field, and its message."""
    for rule in rules:
        if _holds(str(rule["rule"]), value) is False:
            return _field_path(str(rule.get("fieldPath") or "")), str(rule.get("message") or
                                                                    f"failed rule: {rule['rule']}")
    return None


def _holds(rule: str, value: Any) -> bool | None:
    """RULE's verdict on VALUE as ``self``: None where it is no verdict (an error, a non-boolean)."""
    expression = _compiled(rule)
    if expression is None:
        return None
    try:
        result = expression.eval(data={"self": value}).plain_value()
    except (RuntimeError, ValueError, TypeError):  # what the runtime raises on a value it cannot take
        return None
    return result if isinstance(result, bool) else None


@functools.cache
def _compiled(rule: str) -> Any:
    """RULE compiled once per process; None where it does not compile (it then refuses nothing)."""
    try:
        return _environment().compile(rule)
    except (RuntimeError, ValueError):
        return None


@functools.cache
def _environment() -> Any:
    # Imported when a rule is first met: a stream without upstream objects never loads the runtime.
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_strings

    return cel.NewEnv(variables={"self": cel.Type.DYN}, extensions=[ext_strings.ExtStrings()])


def _field_path(text: str) -> Path:
    """A rule's ``fieldPath`` (``.spec.rules[0]``, ``['a.b']``) as path parts; () where it names none."""
    parts: list[str | int] = []
    position = 0
    for match in _FIELD_PATH.finditer(text):
        if match.start() != position:
            return ()
        name, index, quoted = match.groups()
        parts.append(int(index) if index is not None else name if name is not None else quoted)
        position = match.end()
    return tuple(parts) if position == len(text) else ()
