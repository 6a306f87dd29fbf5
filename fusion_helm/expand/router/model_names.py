"""The model names a shared Gateway routes to a service: what clients put in a request body's
``model``, which the Gateway's body-based router copies into ``MODEL_HEADER``."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import takewhile

from fusion_helm.errors import InvalidSpec
from fusion_helm.model import InferenceService, Router
from fusion_helm.model.engine import SERVED_MODEL_NAME, ServerCommand

TYPE_CHECKING = False
if TYPE_CHECKING:
    from fusion_helm.expand.pods import RoleTemplates

MODEL_HEADER = "X-Gateway-Model-Name"
"""The header the Inference Extension's body-based router (its body-field-to-header plugin, as
charts/fusioninfer-bbr runs it) sets from the body's ``model``."""


def routed_model_names(service: InferenceService, router: Router, templates: Mapping[str, RoleTemplates]
                       ) -> tuple[str, ...]:
    """ROUTER's ``modelNames``, else each serving role's engine's served names and its adapters' names,
    in spec order, each once."""
    if router.model_names is not None:
        return router.model_names
    names: list[str] = []
    for role in service.roles:
        role_templates = templates[role.name]
        server = role_templates.leader_server if role_templates.leader is not None else role_templates.worker_server
        served = () if server is None else _served_names(server)
        if not served:
            raise InvalidSpec(service.where, f"{router.path}.modelNames",
                              f"is required: the engine of role {role.name} names no model its command line shows "
                              "(--served-model-name or the model); list the names clients ask for")
        names += [name for name in (*served, *(adapter.name for adapter in role.adapters)) if name not in names]
    return tuple(names)


def _served_names(server: ServerCommand) -> tuple[str, ...]:
    """The names the engine answers to: vLLM's and SGLang's ``--served-model-name NAME…``, else the model."""
    value, occurrence = server.value(SERVED_MODEL_NAME)
    if occurrence is None:
        model, _ = server.model()
        return () if model is None else (model,)
    assert value is not None
    if occurrence.inline or occurrence.in_script:
        return (value,)
    following = server.words[occurrence.index + 2:]
    return (value, *takewhile(lambda word: not word.startswith("-"), following))
