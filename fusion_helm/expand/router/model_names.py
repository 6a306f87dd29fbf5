"""The model names a shared Gateway routes to a service: what clients put in a request body's
``model``, which the Gateway's body-based router (its body-field-to-header plugin, as
charts/fusioninfer-bbr runs it) copies into ``MODEL_HEADER``."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from itertools import takewhile

from fusion_helm.errors import InvalidSpec
from fusion_helm.model import InferenceService, Router
from fusion_helm.model.engine import ServerCommand
from fusion_helm.model.engine_flags import LORA_MODULES, LORA_PATHS, SERVED_MODEL_NAME, Option

TYPE_CHECKING = False
if TYPE_CHECKING:
    from fusion_helm.expand.pods import RoleTemplates

def routed_model_names(service: InferenceService, router: Router, templates: Mapping[str, RoleTemplates]
                       ) -> tuple[str, ...]:
    """ROUTER's ``modelNames``, else each serving role's engine's served names and its adapters' names,
    and the names its picker rewrites (those clients send), in spec order, each once."""
    if router.model_names is not None:
        return router.model_names
    names: list[str] = []
    for role in service.roles:
        server = templates[role.name].leading.server
        served = () if server is None else _served_names(server)
        if not served:
            raise InvalidSpec(service.where, f"{router.path}.modelNames",
                              f"is required: the engine of role {role.name} names no model its command line shows "
                              "(--served-model-name or the model); list the names clients ask for")
        names += [*served, *(adapter.name for adapter in role.adapters)]
    return tuple(dict.fromkeys([*names, *(rewrite.model for rewrite in router.model_rewrites)]))


def adapters_by_model(service: InferenceService, templates: Mapping[str, RoleTemplates]
                      ) -> dict[str, tuple[str, ...]]:
    """Each name a serving role's engine serves its model under, to the adapters it serves beside it
    (model.adapters, and those its command line loads), each once."""
    found: dict[str, tuple[str, ...]] = {}
    for role in service.roles:
        server = templates[role.name].leading.server
        if server is None:
            continue
        adapters = (*(adapter.name for adapter in role.adapters), *_adapter_names(server))
        for name in model_names(server) if adapters else ():
            found[name] = tuple(dict.fromkeys([*found.get(name, ()), *adapters]))
    return found


def serves_adapters(service: InferenceService, templates: Mapping[str, RoleTemplates]) -> bool:
    """A serving role's engines serve LoRA adapters: its model's, or those its command line loads."""
    return any(role.adapters or _adapter_names(templates[role.name].leading.server) for role in service.roles)


def _served_names(server: ServerCommand) -> tuple[str, ...]:
    """The names the engine answers to: its model's (below), then the adapters it loads at start."""
    named = model_names(server)
    return (*named, *_adapter_names(server)) if named else ()


def model_names(server: ServerCommand) -> tuple[str, ...]:
    """The names the engine serves its model under: vLLM's and SGLang's ``--served-model-name NAME…``, else
    the model; none where its command line names neither."""
    named = _values(server, SERVED_MODEL_NAME)
    if named:
        return named
    model, _ = server.model()
    return () if model is None else (model,)


def _adapter_names(server: ServerCommand | None) -> tuple[str, ...]:
    """The adapters the engine loads at start: vLLM's ``--lora-modules``, SGLang's ``--lora-paths``."""
    if server is None:
        return ()
    return tuple(_adapter_name(word) for option in (LORA_MODULES, LORA_PATHS) for word in _values(server, option))


def _values(server: ServerCommand, option: Option) -> tuple[str, ...]:
    """The words OPTION takes, as vLLM's one-or-more arguments are given: its value, and the words after it
    up to the next option (in the container's own words)."""
    value, occurrence = server.value(option)
    if occurrence is None or value is None:  # not given, or given last without a value (the engine refuses it)
        return ()
    if occurrence.inline or occurrence.in_script:
        return (value,)
    following = server.words[occurrence.index + 2:]
    return (value, *takewhile(lambda word: not word.startswith("-"), following))


def _adapter_name(module: str) -> str:
    """An adapter's name as vLLM and SGLang take a module: ``NAME=PATH``, or JSON with a ``name``."""
    if module.startswith("{"):
        with contextlib.suppress(ValueError):
            parsed = json.loads(module)
            if isinstance(parsed, dict) and isinstance(parsed.get("name"), str):
                return str(parsed["name"])
    return module.partition("=")[0]
