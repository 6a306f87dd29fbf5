"""The writer lays out what libyaml would write, byte for byte: a differential fuzz test against
PyYAML's C dumper on random data made of the shapes and strings generated objects hold."""

from __future__ import annotations

import random
from typing import Any

from fusion_helm.kio.write import dump, libyaml_dump
from tests.support import TRICKY_STRINGS

WORDS = [*TRICKY_STRINGS, "x" * 130, "k" * 200, " ", "  two", "trailing \n", "a\n ", "\n", "\n\n", "a\r\nb", "a\tb",
         "\x00", "\x1b[0m", "\ufeff", "\u00a0", "ünï", "日本", "a: b\nc", "|", "- a\n- b\n", "#!/bin/sh\necho hi\n"]


PRINTABLE = [chr(code) for code in range(0x20, 0x7F)]


def random_text(rng: random.Random) -> str:
    """Printable ASCII, mostly letters, with every indicator, blank and quote YAML knows."""
    return "".join(rng.choice(PRINTABLE) if rng.random() < 0.4 else rng.choice("abc/_.-1: #'\"")
                   for _ in range(rng.randint(1, 12)))


def _key(rng: random.Random) -> Any:
    roll = rng.random()
    return rng.choice(WORDS) if roll < 0.65 else random_text(rng) if roll < 0.95 else rng.choice([1, None, True])


def random_data(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 6 or roll < 0.45:
        if rng.random() < 0.3:
            return random_text(rng)
        return rng.choice([*WORDS, None, True, False, 0, -7, 2**63, 1.5, -0.0, 1e21, 3.0, float(2**60)])
    if roll < 0.75:
        return {_key(rng): random_data(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return [random_data(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def test_the_writer_writes_what_libyaml_writes() -> None:
    rng = random.Random(11)
    compared = 0
    for _ in range(20_000):
        data = {_key(rng): random_data(rng) for _ in range(rng.randint(1, 4))}
        assert dump(data) == libyaml_dump(data), data
        compared += 1
    assert compared == 20_000
