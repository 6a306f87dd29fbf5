# A copy of fusion_helm/programs/routed_names.py, made by `make generate` (ci/chart_copies.py) for the chart; do not edit.
"""The model names a service's HTTPRoute will match on a shared Gateway, read from its spec as the chart
renders it, before anything is applied: what the pre-install check asks the cluster about.

The expansion decides these names (fusion_helm/expand/router/model_names.py, routed_model_names) from the
serving containers' command lines as fusion_helm.model.engine reads them, which a stock Python image cannot
import. This is its standard-library twin for the spellings a spec gives them in: ``router.modelNames``; else
each serving role's engine's ``--served-model-name NAME…``, else its model (vLLM's ``serve MODEL`` or
``--model``, SGLang's ``--model-path``), else, where the role reads a model source, that source's name; the
adapters its command line loads and ``model.adapters``; and the names ``router.modelRewrites`` takes. A role
whose engine is started from a shell script is not read here (its words are the script's): it is named
among the roles not read, and its names are left to the status hook, which reads the route as written.
tests/programs/test_routed_names.py holds the twin to the expansion's answers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from fusion_helm.base import needs

VLLM, SGLANG = "vllm", "sglang"
VLLM_COMMAND = ("vllm", "serve")
SGLANG_COMMAND = ("python3", "-m", "sglang.launch_server")
"""What a serving container without a command of its own runs (fusion_helm/model/bootstrap.py)."""
VLLM_MODULES = frozenset({"vllm.entrypoints.openai.api_server", "vllm.entrypoints.cli.main"})
SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh"})
BOOTSTRAP_ENGINES = {"ray": VLLM, "vllm": VLLM, "vllm-data-parallel": VLLM, "sglang": SGLANG}
"""The engine a multi-node bootstrap launches (custom: whatever its templates run)."""
SERVED_NAME = {VLLM: ("--served-model-name",), SGLANG: ("--served-model-name",)}
MODEL = {VLLM: ("--model",), SGLANG: ("--model-path", "--model")}
ADAPTERS = {VLLM: ("--lora-modules",), SGLANG: ("--lora-paths",)}
"""Each engine's spellings of the options that name what it serves (fusion_helm/model/engine_flags.py)."""


def router_role(spec: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The service's router role, or None."""
    return next((role for role in spec.get("roles") or [] if role.get("componentType") == needs.ROUTER), None)


def routed_names(spec: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The model names the route of a service of SPEC matches on its shared Gateway, in the expansion's
    order, each once; and the serving roles whose names are not read here (their engines start from a
    script). None of either without a router on a shared Gateway."""
    router = router_role(spec)
    if router is None or not router.get("sharedGateway"):
        return [], []
    if router.get("modelNames") is not None:
        return list(dict.fromkeys(str(name) for name in router["modelNames"])), []
    names: list[str] = []
    unread: list[str] = []
    for role in needs.serving_roles(spec):
        weights = role["model"] if "model" in role else spec.get("model")
        served = role_names(role, weights or {})
        if served is None:
            unread.append(str(role.get("name", "")))
            continue
        names += [*served, *(str(adapter["name"]) for adapter in (weights or {}).get("adapters") or [])]
    names += [str(rewrite["model"]) for rewrite in router.get("modelRewrites") or []]
    return list(dict.fromkeys(names)), unread


def role_names(role: Mapping[str, Any], weights: Mapping[str, Any]) -> list[str] | None:
    """The names ROLE's engine serves (its model's, then the adapters its command line loads), WEIGHTS its
    model source (``model``; {} for none); None where its engine starts from a shell script."""
    containers = ((role.get("template") or {}).get("spec") or {}).get("containers") or [{}]
    words, implied, engine = command_line(role, containers[0])
    if shell_script(words):
        return None
    read = engine or VLLM  # an engine neither's flags are read as vLLM's, the most lenient parser
    served = option_values(words, SERVED_NAME[read], engine)
    if not served:
        model = serve_model(words, implied, engine) or last_value(words, MODEL[read], engine)
        if weights.get("source"):  # the weights stage names the model's name (its command's, or the source's)
            if given(words, SERVED_NAME[read], engine):  # but not past a --served-model-name of no name
                return None
            served = [model or source_name(str(weights["source"]))]
        elif model is not None:
            served = [model]
    if not served:
        return []
    return [*served, *(adapter_name(module) for module in option_values(words, ADAPTERS[read], engine))]


def shell_script(words: Sequence[str]) -> bool:
    """WORDS run a shell script (``SHELL [-FLAG…] -c SCRIPT …``: fusion_helm/model/engine.py _shell_script)."""
    if not words or os.path.basename(words[0]) not in SHELLS or "-c" not in words[1:]:
        return False
    flag = words.index("-c", 1)
    return flag + 1 < len(words) and all(word.startswith("-") for word in words[1:flag])


def command_line(role: Mapping[str, Any], container: Mapping[str, Any]) -> tuple[list[str], int, str | None]:
    """The container's command line as it runs (the image's entrypoint first where it gives no command),
    how many of its words are that entrypoint's, and the engine that reads it (None: neither)."""
    multinode = role.get("multinode") or {}
    command = [str(word) for word in container.get("command") or ()]
    args = [str(word) for word in container.get("args") or ()]
    bootstrap = None  # one node: no bootstrap, whatever multinode says
    if needs.node_count(role) >= 2:
        bootstrap = str(multinode.get("bootstrap") or implied_bootstrap(multinode, container))
    default = SGLANG_COMMAND if bootstrap == SGLANG else VLLM_COMMAND
    implied = [] if command else [str(word) for word in multinode.get("servingCommand") or default]
    words = [*implied, *command, *args]
    return words, len(implied), BOOTSTRAP_ENGINES.get(bootstrap or "") or engine_of(words)


def implied_bootstrap(multinode: Mapping[str, Any], container: Mapping[str, Any]) -> str:
    """The bootstrap of a multi-node role that names none: SGLang's for an SGLang server or image, else vLLM's
    (ray or vllm, either launching vLLM; an image that says neither is refused by the post-renderer)."""
    command = [str(word) for word in container.get("command") or multinode.get("servingCommand") or ()]
    image = str(container.get("image") or "").split("@", 1)[0]
    repository = image.rpartition(":")[0] if ":" in image.rsplit("/", 1)[-1] else image
    return SGLANG if engine_of([*command, *map(str, container.get("args") or ())]) == SGLANG \
        or SGLANG in repository else "vllm"


def engine_of(words: Sequence[str]) -> str | None:
    """The engine a command line starts (fusion_helm/model/engine.py engine_of)."""
    if not words:
        return None
    program = os.path.basename(words[0])
    module = words[2] if len(words) > 2 and words[1] == "-m" else None
    if program == VLLM or module in VLLM_MODULES:
        return VLLM
    if program == SGLANG or module == "sglang.launch_server":
        return SGLANG
    return None


def serve_model(words: Sequence[str], implied: int, engine: str | None) -> str | None:
    """vLLM's ``vllm serve MODEL`` (or ``python -m vllm.entrypoints.cli.main serve MODEL``): MODEL."""
    if engine != VLLM or engine_of(words) != VLLM:
        return None
    serve = 1 if os.path.basename(words[0]) == VLLM else 3
    model = serve + 1
    if len(words) > model and words[serve] == "serve" and not words[model].startswith("-") and model >= implied:
        return words[model]
    return None


def occurrences(words: Sequence[str], spellings: Sequence[str], engine: str | None
                ) -> Iterator[tuple[int, str | None, bool]]:
    """Where an option of SPELLINGS (one that takes a value) is given whole, as ENGINE's parser reads it
    (vLLM's: underscores for dashes, a dotted key a part of it): its word's index, its value, and whether
    that value is in the same word."""
    index = 0
    while index < len(words):
        word = words[index]
        written, equals, value = word.partition("=")
        name, dotted = written, False
        if written.startswith("--") and engine != SGLANG:
            head, dot, _ = written[2:].partition(".")
            name, dotted = "--" + head.replace("_", "-"), bool(dot)
        if word.startswith("-") and word not in ("-", "--") and name in spellings:
            if equals:
                found: tuple[int, str | None, bool] = (index, value, True)
            elif index + 1 < len(words):
                found = (index, words[index + 1], False)
                index += 1
            else:
                found = (index, None, False)
            if not dotted:
                yield found
        index += 1


def given(words: Sequence[str], spellings: Sequence[str], engine: str | None) -> bool:
    """An option of SPELLINGS is given at all (a dotted key of it, or without a value, too)."""
    read = (word.partition("=")[0] for word in words if word.startswith("--"))
    return any(("--" + name[2:].partition(".")[0].replace("_", "-") if engine != SGLANG else name) in spellings
               for name in read)


def last_value(words: Sequence[str], spellings: Sequence[str], engine: str | None) -> str | None:
    given = list(occurrences(words, spellings, engine))
    return given[-1][1] if given else None


def option_values(words: Sequence[str], spellings: Sequence[str], engine: str | None) -> list[str]:
    """The words the last occurrence of an option of SPELLINGS takes, as vLLM's one-or-more arguments are
    given: its value, and the words after it up to the next option."""
    given = list(occurrences(words, spellings, engine))
    if not given or given[-1][1] is None:
        return []
    index, value, inline = given[-1]
    assert value is not None
    if inline:
        return [value]
    following = []
    for word in words[index + 2:]:
        if word.startswith("-"):
            break
        following.append(word)
    return [value, *following]


def adapter_name(module: str) -> str:
    """An adapter's name as vLLM and SGLang take a module: ``NAME=PATH``, or JSON with a ``name``."""
    if module.startswith("{"):
        try:
            parsed = json.loads(module)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("name"), str):
            return str(parsed["name"])
    return module.partition("=")[0]


def source_name(uri: str) -> str:
    """The name clients ask for of a model source whose command names no model: hf's ORG/NAME, else the
    source's path (or its bucket or claim)."""
    scheme, _, rest = uri.partition("://")
    parts = [part for part in rest.split("/") if part]
    if scheme == "hf":
        return "/".join(parts[:2])
    return "/".join(parts[1:]) or (parts[0] if parts else "")
