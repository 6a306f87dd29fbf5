"""Every object the expansion writes satisfies its kind's upstream schema — or the service is refused
with one error naming the field of the service the violation came from.

Each generated object maps its fields back to where they came from (a LeaderWorkerSet's pod templates
to the role's template, a Gateway's spec to the router's gateway…). A role's LeaderWorkerSets differ
only in their names and index labels, so only the first of each role is checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from fusion_helm.base.kinds import (
    DISAGGREGATED_SET,
    GATEWAY,
    HTTP_ROUTE,
    LEADER_WORKER_SET,
    POD_GROUP,
    POD_MONITOR,
    SCALED_OBJECT,
)
from fusion_helm.base.labels import LABEL_ROLE_NAME
from fusion_helm.errors import InvalidSpec, clip, format_path
from fusion_helm.expand.names import served_model_name
from fusion_helm.model import InferenceService, Role
from fusion_helm.model.upstream import has_schema, violation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

Origins = list[tuple[tuple[str | int, ...], str]]
"""(a field of the generated object, the service's field it comes from), longest first."""
LWS_TEMPLATE = ("spec", "leaderWorkerTemplate")


def check_objects(service: InferenceService, objects: Iterable[Mapping[str, Any]]) -> None:
    checked_roles: set[str] = set()
    for obj in objects:
        if obj["kind"] == LEADER_WORKER_SET.kind:
            role_name = obj["metadata"]["labels"][LABEL_ROLE_NAME]
            if role_name in checked_roles:
                continue
            checked_roles.add(role_name)
        elif not has_schema(obj["apiVersion"], obj["kind"]):
            continue  # Kubernetes' own kinds: what the user gives them is checked where it is read
        found = violation(obj)
        if found is not None:
            path, message = found
            raise InvalidSpec(service.where, _source(service, obj, path), message)


def _source(service: InferenceService, obj: Mapping[str, Any], path: tuple[str | int, ...]) -> str:
    for prefix, source in _origins(service, obj):
        if path[:len(prefix)] == prefix:
            return format_path([source, *path[len(prefix):]])
    return f"spec (in the {obj['kind']} {clip(obj['metadata']['name'])} it makes, at {format_path(path)})"


def _origins(service: InferenceService, obj: Mapping[str, Any]) -> Origins:
    kind = obj["kind"]
    origins: Origins = [(("metadata",), "metadata")]
    if kind == LEADER_WORKER_SET.kind:
        role = next(r for r in service.roles if r.name == obj["metadata"]["labels"][LABEL_ROLE_NAME])
        origins += _lws_origins(role)
    elif kind == POD_GROUP.kind:
        origins.append(((), "spec.roles"))
    elif kind == DISAGGREGATED_SET.kind:
        for index, role in enumerate(service.roles):
            origins += [(("spec", "roles", index, *path), source) for path, source in _lws_origins(role)]
            origins.append((("spec", "roles", index, "spec", "rolloutStrategy", "rollingUpdateConfiguration"),
                            f"{role.path}.rollout"))
    elif kind == POD_MONITOR.kind:
        origins.append(((), "spec.monitoring.podMonitor"))
    elif kind == SCALED_OBJECT.kind:
        role = next(r for r in service.roles if r.name == obj["metadata"]["labels"][LABEL_ROLE_NAME])
        origins += [(("spec", "advanced", "horizontalPodAutoscalerConfig", "behavior"),
                     f"{role.path}.autoscaling.behavior"), ((), f"{role.path}.autoscaling")]
    elif service.router is not None:
        router = service.router
        models = {served_model_name(service.name, model.name): model.path for model in service.router.models}
        origins += [(("spec",), f"{router.path}.gateway")] if kind == GATEWAY.kind else []
        origins += [(("spec",), f"{router.path}.httproute")] if kind == HTTP_ROUTE.kind else []
        origins.append(((), models.get(obj["metadata"]["name"], router.path)))
    return sorted(origins, key=lambda origin: -len(origin[0]))


def _lws_origins(role: Role) -> Origins:
    """A LeaderWorkerSet's fields, or a DisaggregatedSet role's (the same, under the role)."""
    if role.taken_over:
        return [(LWS_TEMPLATE, "spec.leaderWorkerTemplate"), ((), "spec")]
    return [((*LWS_TEMPLATE, "workerTemplate"), role.template_path),
            ((*LWS_TEMPLATE, "leaderTemplate"), role.template_path),
            ((*LWS_TEMPLATE, "size"), f"{role.path}.multinode.nodeCount"),
            ((), role.path)]
