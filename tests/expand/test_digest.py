"""The spec hash's canonical JSON is json.dumps' own text, byte for byte (running services' hashes
depend on it), on random data of every JSON type and the characters JSON escapes."""

from __future__ import annotations

import json
import random
from typing import Any

from fusion_helm.expand.digest import canonical_json, short_hash

CHARS = ["a", "Z", '"', "\\", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f", "\x80", "é", "\u2028", "😀",
         "\ud7ff", "\uffff", " ", "/"]


def random_data(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.5:
        text = "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 5)))
        return rng.choice([None, True, False, 0, -1, 2**63, 1.5, -0.0, 1e21, 1e-7, text])
    if roll < 0.75:
        return {"".join(rng.choice(CHARS) for _ in range(rng.randint(0, 4))): random_data(rng, depth + 1)
                for _ in range(rng.randint(0, 4))}
    return [random_data(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def test_canonical_json_is_json_dumps() -> None:
    rng = random.Random(2)
    for _ in range(20_000):
        data = random_data(rng)
        assert canonical_json(data) == json.dumps(data, sort_keys=True, separators=(",", ":")), data


def test_short_hash() -> None:
    assert short_hash("x") == "2d711642b726b044"  # sha256("x")
