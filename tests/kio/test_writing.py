"""The writer lays out what libyaml would write, byte for byte: a differential fuzz test against
PyYAML's C dumper on random data made of the shapes and strings generated objects hold."""

from __future__ import annotations

import random
from typing import Any

from fusion_helm.kio.scalars import needs_quotes, pyyaml_tag, resolve_plain
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


def pyyaml_words() -> list[str]:
    """Every case of every word PyYAML's resolvers know, each with a character more and less."""
    words = ["yes", "no", "true", "false", "on", "off", "null", "y", "n", "~", "<<", "=", ".inf", ".nan", "-.inf"]
    cases = {variant for word in words
             for variant in (word, word.upper(), word.capitalize(), word.swapcase(), word + "s", word[:-1])}
    return sorted(cases)


PYYAML_ALONE = ["190:20:30", "-1:20", "1:20:30.5", "2001-12-14 21:59:43.10 -5", "2001-12-14t21:59:43 +1",
                "2001-12-14\t21:59:43", "2001-12-14 21:59:43Z", "=", "!", "&", "*"]
"""Strings PyYAML reads as another type and Go as a string: sexagesimal numbers, its timestamps, its
value and YAML tags."""


def test_a_string_pyyaml_reads_as_another_type_is_quoted() -> None:
    """`pyyaml_tag` asks PyYAML's resolver only of strings one of its patterns could match (beyond the
    words Go reads alike); over every string here it gives the resolver's own answer, and
    `needs_quotes` quotes every string that answer retypes."""
    import yaml

    resolver = yaml.resolver.Resolver()
    rng = random.Random(7)
    number_like = ("".join(rng.choice("0123456789_.:+-eEbxabcdefABCDEFTtZ \tGim") for _ in range(rng.randint(0, 12)))
                   for _ in range(20_000))
    texts = [*TRICKY_STRINGS, *WORDS, *pyyaml_words(), *(random_text(rng) for _ in range(20_000)),
             *(rng.choice("0123456789+-.") + text for text in number_like),
             *PYYAML_ALONE, "0b1_0", "1_000", "2001-12-14", "+.5", "-1_2.3e+4", "0x_1F"]
    quoted_by_pyyaml_alone = []
    for text in texts:
        tag = resolver.resolve(yaml.ScalarNode, text, (True, False))
        assert pyyaml_tag(text) == tag, text
        other_type = tag != "tag:yaml.org,2002:str"
        assert needs_quotes(text) or not other_type, text
        if other_type and resolve_plain(text)[0] == "str":
            quoted_by_pyyaml_alone.append(text)
    assert set(PYYAML_ALONE) <= set(quoted_by_pyyaml_alone)
