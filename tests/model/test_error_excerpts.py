"""Errors stay one readable line: a user's value of 100 KB, in any field of any fuzz seed (a string
there, a key, or a string field the schema declares or the expansion reads from a pod template, set
where the seed has none), is refused with a message that quotes at most a short, marked excerpt of it
(fusion_helm.errors.MAX_SHOWN characters, cut with "…"), never the value whole. A place the seeds repeat
verbatim (a role copied into another layout or behind another picker) is tried once."""

from __future__ import annotations

import copy
import itertools
import json
import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import yaml

from fusion_helm import InvalidSpec, render
from fusion_helm.errors import MAX_SHOWN
from fusion_helm.model.schema import spec_schema
from fusion_helm.options import Options
from tests.fuzz.cases import seeds

BIG = 100_000
LONGEST_MESSAGE = 2_000
"""A whole message: its own words, a field path (cut at fusion_helm.errors.MAX_PATH) and excerpts."""
LETTER = "q"


def string_fields(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """The path of every string in VALUE, and of every mapping key (as the key's own path, marked)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, ("key", key))  # type: ignore[misc]
            yield from string_fields(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from string_fields(item, (*path, index))
    elif isinstance(value, str):
        yield path


TEMPLATE_FIELDS = [
    ("spec", "schedulerName"), ("spec", "priorityClassName"), ("spec", "serviceAccountName"),
    ("spec", "subdomain"), ("spec", "containers", 0, "name"), ("spec", "containers", 0, "image"),
    ("spec", "containers", 0, "command", 0), ("spec", "containers", 0, "args", 0),
    ("spec", "containers", 0, "ports", 0, "name"), ("spec", "containers", 0, "env", 0, "name"),
    ("spec", "initContainers", 0, "image"), ("metadata", "labels", "k"), ("metadata", "annotations", "k"),
]
"""The pod template's fields the expansion reads, decides on or refuses."""


def declared_fields(schema: Any, path: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    """Every string field SCHEMA declares, a list's first item and a map's key "k" standing for any."""
    if not isinstance(schema, dict):
        return
    if schema.get("type") == "string":
        yield path
    for key, value in (schema.get("properties") or {}).items():
        yield from declared_fields(value, (*path, key))
    if "items" in schema:
        yield from declared_fields(schema["items"], (*path, 0))
    if isinstance(schema.get("additionalProperties"), dict):
        yield from declared_fields(schema["additionalProperties"], (*path, "k"))
    if path[-1:] in (("template",), ("workerTemplate",)):
        for field in TEMPLATE_FIELDS:
            yield (*path, *field)


def planted_fields(document: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    """The declared fields of an InferenceService, each role's for each role the document has."""
    if document["kind"] != "InferenceService":
        return
    for path in declared_fields(spec_schema(), ("spec",)):
        if path[:3] == ("spec", "roles", 0):
            for index in range(len(document["spec"]["roles"])):
                yield ("spec", "roles", index, *path[3:])
        else:
            yield path


def planted(document: dict[str, Any], path: tuple[Any, ...]) -> dict[str, Any]:
    """DOCUMENT with a string of BIG characters at PATH, the mappings and lists on the way made as needed."""
    result = copy.deepcopy(document)
    parent: Any = result
    for part, following in itertools.pairwise(path):
        empty: Any = [] if isinstance(following, int) else {}
        if isinstance(part, int):
            if not parent:
                parent.append(empty)
            elif not isinstance(parent[part], type(empty)):
                parent[part] = empty
        elif not isinstance(parent.get(part), type(empty)):
            parent[part] = empty
        parent = parent[part]
    if isinstance(path[-1], int) and not parent:
        parent.append(LETTER * BIG)
    else:
        parent[path[-1]] = LETTER * BIG
    return result


def with_big(document: dict[str, Any], path: tuple[Any, ...]) -> dict[str, Any]:
    """DOCUMENT with the string (or the key) at PATH made BIG characters long."""
    result = copy.deepcopy(document)
    parent: Any = result
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if isinstance(last, tuple):  # a key: renamed, its value kept
        key = last[1]
        parent[LETTER * BIG] = parent.pop(key)
    else:
        parent[last] = LETTER * BIG
    return result


def refusal(document: dict[str, Any]) -> str | None:
    try:
        render(yaml.dump(document, Dumper=yaml.CSafeDumper), Options())
    except InvalidSpec as error:
        return str(error)
    return None


SEEDS = seeds()


def _place(seed: dict[str, Any], path: tuple[Any, ...]) -> str:
    """Where PATH is, as far as the check that reads it can tell: a role's field by the role's whole content
    (the seeds repeat roles verbatim: layouts, picker generations), any other by the document's."""
    if seed["kind"] == "InferenceService" and path[:2] == ("spec", "roles") and len(path) > 2 \
            and path[2] < len(seed["spec"]["roles"]):
        context: Any = seed["spec"]["roles"][path[2]]
        path = path[3:]
    else:
        context = seed
    return json.dumps([seed["kind"], context, path], sort_keys=True, default=str)


def _cases() -> list[list[tuple[tuple[Any, ...], bool]]]:
    """Each seed's fields to try (True: a string of it made big; False: one planted), those of a place an
    earlier seed tried left out."""
    tried: set[str] = set()
    cases = []
    for seed in SEEDS:
        own = []
        for path, present in [*((p, True) for p in string_fields(seed)), *((p, False) for p in planted_fields(seed))]:
            place = _place(seed, path)
            if place not in tried:
                tried.add(place)
                own.append((path, present))
        cases.append(own)
    return cases


CASES = _cases()


def _too_long(index: int) -> list[tuple[tuple[Any, ...], int, str]]:
    """The fields of seed INDEX whose 100 KB value an error quotes at length: (path, length, its start)."""
    seed = SEEDS[index]
    found = []
    for path, present in CASES[index]:
        message = refusal(with_big(seed, path) if present else planted(seed, path))
        if message is not None and (LETTER * (MAX_SHOWN + 1) in message or len(message) > LONGEST_MESSAGE):
            found.append((path, len(message), message[:200]))
    return found


def test_a_100_kb_value_is_quoted_as_a_short_excerpt() -> None:
    """Every seed's fields, judged by two processes (one per core: each field is a whole render)."""
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        found = dict(zip((f"{s['kind']}-{s['metadata']['name']}-{n}" for n, s in enumerate(SEEDS)),
                         pool.map(_too_long, range(len(SEEDS))), strict=True))
    assert sum(map(len, CASES)) > 5000
    assert not any(found.values()), {seed: fields[:5] for seed, fields in found.items() if fields}
