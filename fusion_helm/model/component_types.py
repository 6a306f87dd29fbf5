"""What a role is by its componentType, and which of a role's fields each componentType takes.

``ROLE_FIELDS`` is the one table of the latter: every field of a role in the schema (a test holds the two
together), with the componentTypes that take it. The schema cannot say it (a role's fields are one object
for every componentType), so the model refuses a field its role does not take, by this table alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum

from fusion_helm.base.needs import PREFILL_DECODE
from fusion_helm.errors import InvalidSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class ComponentType(StrEnum):
    WORKER = "worker"
    PREFILLER = "prefiller"
    DECODER = "decoder"
    ROUTER = "router"
    FRONTEND = "frontend"


def is_disaggregated(component_types: Iterable[str]) -> bool:
    """A service with these roles serves prefill and decode apart."""
    return not PREFILL_DECODE.isdisjoint(component_types)


SERVING = frozenset({ComponentType.WORKER, ComponentType.PREFILLER, ComponentType.DECODER})
"""The roles whose pods serve requests."""
EVERY = frozenset(ComponentType)
ROUTER = frozenset({ComponentType.ROUTER})
FRONTEND = frozenset({ComponentType.FRONTEND})

ROLE_FIELDS: Mapping[str, frozenset[ComponentType]] = {
    "name": EVERY, "componentType": EVERY,
    # A frontend's pods are one Deployment's: its count, its pod template and its Service.
    "replicas": SERVING | FRONTEND, "template": SERVING | FRONTEND, "service": SERVING | FRONTEND,
    **dict.fromkeys(("rollout", "model", "autoscaling", "networkTopology", "recoveryPolicy", "disruptionBudget",
                     "multinode"), SERVING),
    "frontend": FRONTEND,
    **dict.fromkeys(("poolAPIVersion", "targetPort", "strategy", "endpointPickerConfig", "endpointPicker", "gateway",
                     "httproute", "inferencePaths", "sharedGateway", "modelNames", "modelRewrites", "canaryOf",
                     "models"), ROUTER),
}
"""Each field of a role → the componentTypes that take it."""

WHY_NOT: Mapping[ComponentType, str] = {
    ComponentType.ROUTER: "a router's pods are its endpoint pickers, set up by endpointPicker (their number by "
                          "endpointPicker.replicas), and clients reach it through its Gateway",
    ComponentType.FRONTEND: "a frontend is one Deployment of pods alike, in front of the serving roles",
}
"""Why a componentType takes no field but its own, where the list of those who do does not say it."""


def check_role_fields(raw: Mapping[str, Any], path: str, where: str) -> ComponentType:
    """RAW's componentType; InvalidSpec at the first field that componentType does not take."""
    component_type = ComponentType(raw["componentType"])
    for field in raw:
        takers = ROLE_FIELDS[field]
        if component_type not in takers:
            why = WHY_NOT.get(component_type)
            raise InvalidSpec(where, f"{path}.{field}",
                              f"only allowed on componentType {_either(takers)}, not {component_type}"
                              + (f": {why}" if why else ""))
    return component_type


def _either(types: frozenset[ComponentType]) -> str:
    names = [str(component_type) for component_type in ComponentType if component_type in types]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
