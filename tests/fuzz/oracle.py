"""The invariants every fuzz case is judged by: a rendered stream or one clear error — no traceback, no
hang; deterministic and idempotent output; documents we do not own passed through byte for byte; every
generated object valid by its kind's upstream schema (checked by jsonschema, the reference validator);
and the KRM function, given the same documents as a ResourceList's items, answers with the same objects
or refuses too."""

from __future__ import annotations

import re
import signal
import time
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import jsonschema
import yaml

from fusion_helm import InvalidSpec, render
from fusion_helm.cli.krm import respond
from fusion_helm.kio.document import read_documents
from fusion_helm.kio.resource_list import read_resource_list
from fusion_helm.kio.write import dump
from fusion_helm.options import Options
from fusion_helm.schemagen import upstream_schemas
from tests.fuzz.cases import Case
from tests.schemas import prune_nulls, strict_validator

SLOW_SECONDS = 2.0
HANG_SECONDS = 20
PYTHON_INTERNALS = re.compile(r"Traceback|object at 0x|sys\.set_int_max_str_digits|<class |yaml\.nodes|Error\(")
_KIND = re.compile(r"^kind: (.+)$", re.MULTILINE)
_ROLE = re.compile(r"^    fusioninfer.io/role-name: (.+)$", re.MULTILINE)
_SCHEMAS: dict[str, Any] = {}
_VALIDATORS: dict[str, jsonschema.Draft7Validator] = {}


@dataclass
class Verdict:
    outcome: str
    """rendered, refused, or the broken invariant: traceback, hang, slow, message, nondeterministic,
    not-idempotent, changed-foreign, invalid-object, krm-differs."""
    detail: str = ""
    seconds: float = 0.0
    generated: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.outcome not in ("rendered", "refused")


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Hang


def _validator(api_version: str, kind: str) -> jsonschema.Draft7Validator | None:
    key = f"{api_version} {kind}"
    if not _SCHEMAS:
        from fusion_helm.schemagen import upstream_crds
        _SCHEMAS.update(upstream_schemas(upstream_crds()))
    if key not in _SCHEMAS:
        return None
    if key not in _VALIDATORS:
        _VALIDATORS[key] = strict_validator(_SCHEMAS[key])
    return _VALIDATORS[key]


def _render(case: Case, text: str) -> str:
    return render(text, Options(take_over_every_leader_worker_set=case.take_over))


def judge(case: Case) -> Verdict:
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_SECONDS)
    start = time.perf_counter()
    try:
        output = _render(case, case.stream)
    except InvalidSpec as error:
        seconds = time.perf_counter() - start
        message = str(error)
        if "\n" in message or "\r" in message or len(message) > 2000 or PYTHON_INTERNALS.search(message):
            return Verdict("message", message[:500], seconds)
        if seconds > SLOW_SECONDS:
            return Verdict("slow", message, seconds)
        return _judge_krm(case, None) or Verdict("refused", message, seconds)
    except _Hang:
        return Verdict("hang", f"no answer after {HANG_SECONDS}s", HANG_SECONDS)
    except BaseException as error:  # the one thing that must never happen: anything else escaping
        return Verdict("traceback", f"{type(error).__name__}: {str(error)[:300]}", time.perf_counter() - start)
    finally:
        signal.alarm(0)
    seconds = time.perf_counter() - start
    if seconds > SLOW_SECONDS:
        return Verdict("slow", f"{seconds:.2f}s", seconds)
    return _judge_output(case, output, seconds)


def _judge_output(case: Case, output: str, seconds: float) -> Verdict:
    try:
        if _render(case, case.stream) != output:
            return Verdict("nondeterministic", "", seconds)
        if _render(case, output) != output:
            return Verdict("not-idempotent", "", seconds)
    except InvalidSpec as error:
        return Verdict("not-idempotent", f"the output is refused: {error}", seconds)
    read = read_documents(case.stream)
    kept = {document.raw for document in read}
    position = 0
    for document in read:
        found = output.find(document.raw or "", position)
        if found >= 0:
            position = found + len(document.raw or "")
        elif document.could_be("LeaderWorkerSet") and document.kind != "LeaderWorkerSet" \
                and "fusioninfer.io/service" not in (document.metadata.get("labels") or {}):
            return Verdict("changed-foreign", (document.raw or "")[:300], seconds)
    generated = [doc.raw or "" for doc in read_documents(output) if doc.raw not in kept]
    return _judge_krm(case, output) or _judge_generated(generated, seconds)


def _judge_krm(case: Case, output: str | None) -> Verdict | None:
    """The KRM function over the stream's objects as items: the objects of OUTPUT (None: it refuses too).
    A stream kustomize could not read as objects is not asked."""
    items = _objects(case.stream)
    if items is None:
        return None
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fuzz"},
              "data": {"take-over-lws": "true" if case.take_over else "false"}}
    try:
        answer, error = respond(dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items,
                                      "functionConfig": config}))
    except BaseException as escaped:
        return Verdict("traceback", f"fusion-krm: {type(escaped).__name__}: {str(escaped)[:300]}")
    if output is None:
        return None if error is not None else Verdict("krm-differs", "the KRM function expands what is refused")
    if error is not None:
        return Verdict("krm-differs", f"the KRM function refuses: {error}")
    want = _objects(output)
    answered = read_resource_list(answer)  # item by item, each within one document's limits
    got = [item.obj for item in answered.documents]
    return None if got == want else Verdict("krm-differs", "other objects than the post-renderer's")


def _objects(stream: str) -> list[Any] | None:
    """The stream's objects as Go reads them (empty documents left out); None if one is not an object."""
    try:
        found = [document.obj for document in read_documents(stream)]
    except InvalidSpec:
        return None
    objects = [obj for obj in found if obj is not None]
    return objects if all(isinstance(obj, dict) for obj in objects) else None


def _judge_generated(generated: list[str], seconds: float) -> Verdict:
    checked: set[tuple[str, str]] = set()
    for text in generated:
        kind, role = _KIND.search(text), _ROLE.search(text)
        identity = (kind[1] if kind else "", role[1] if role else text)
        if identity in checked:
            continue  # a role's LeaderWorkerSets differ only in name and index
        checked.add(identity)
        obj = yaml.load(text, Loader=yaml.CSafeLoader)
        validator = _validator(obj["apiVersion"], obj["kind"])
        if validator is None:
            continue
        errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
                  for e in validator.iter_errors(prune_nulls(validator.schema, obj))]
        if errors:
            return Verdict("invalid-object", f"{obj['kind']} {obj['metadata']['name']}: {errors[:3]}", seconds)
    return Verdict("rendered", "", seconds, generated)
