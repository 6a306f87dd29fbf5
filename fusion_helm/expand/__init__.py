"""Pure expansion: an InferenceService model → the Kubernetes objects that serve it.

Order of the result: the PodGroup first (its pods wait for it), then the model cache's claim, fetch
program and fetch Jobs, then each role's LeaderWorkerSets
by role order and replica index (layout role: the role's one, and its autoscaler; layout
disaggregated: the DisaggregatedSet, then the roles' autoscalers), each followed by the role's
PodDisruptionBudget, then the router's objects, then each
frontend's, then the Services over serving pods, then spec.tls's Certificate, then the PodMonitors.
Generated objects may share unchanged sub-structures (a role's pod spec is the same object in all
its replicas): treat the result as read-only.
"""

from __future__ import annotations

from fusion_helm.collector import paused
from fusion_helm.errors import InvalidSpec
from fusion_helm.expand import gang
from fusion_helm.expand.conformance import check_objects
from fusion_helm.expand.lws import RoleBlueprint, leader_worker_sets, role_blueprint
from fusion_helm.expand.names import check_collisions, check_name_lengths, check_service_names
from fusion_helm.expand.pods import role_templates
from fusion_helm.limits import MAX_OBJECT_BYTES, MAX_OUTPUT_BYTES
from fusion_helm.model import InferenceService, Layout, Role

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fusion_helm.expand.autoscaling import Routing

LWS_OVERHEAD_BYTES = 1024
"""What a LeaderWorkerSet adds to its pod templates: names, labels, the spec's other fields."""


def expand(service: InferenceService) -> list[dict[str, Any]]:
    """The objects that serve SERVICE, each valid by its kind's upstream schema; InvalidSpec if not."""
    with paused():
        return _expand(service)


def _expand(service: InferenceService) -> list[dict[str, Any]]:
    for role in service.roles:
        check_name_lengths(service, role)
    check_collisions(service)
    check_service_names(service)
    plan = gang.plan_gang(service)
    templates = {role.name: role_templates(service, role) for role in service.roles}
    if any(role.weights is not None for role in service.roles):
        from fusion_helm.expand.weights import with_weights

        templates = with_weights(service, templates)
    if service.frontends:
        from fusion_helm.expand.frontends import frontend_templates

        templates = frontend_templates(service, templates)
    if service.tls is not None:
        from fusion_helm.expand.tls import with_tls

        templates = with_tls(service, templates)
    if service.router is not None:
        from fusion_helm.expand.router import routed_templates

        templates = routed_templates(service, service.router, templates)
    autoscaled = any(role.autoscaling is not None for role in service.roles)
    if autoscaled:
        from fusion_helm.expand.autoscaling import with_drain

        templates = with_drain(service, templates)
    blueprints = {role.name: role_blueprint(service, role, templates[role.name], plan) for role in service.roles}
    _check_sizes(service, blueprints)
    requests = {role.name: gang.replica_requests(service, role, templates[role.name]) for role in service.roles}
    objects = gang.pod_groups(service, plan, requests)
    if service.model_cache is not None:
        from fusion_helm.expand.weights import weight_objects

        objects += weight_objects(service)
    # The modules of a layout or feature a service does not use are not loaded: a post-renderer starts
    # on every helm call.
    if service.layout is Layout.DISAGGREGATED:
        from fusion_helm.expand.disaggregated_set import disaggregated_set

        objects.append(disaggregated_set(service, blueprints))
    routing = _routing(service) if autoscaled else None
    for role in service.roles:
        objects += leader_worker_sets(service, role, blueprints[role.name], plan)
        if role.autoscaling is not None:
            from fusion_helm.expand.autoscaling import autoscalers

            objects += autoscalers(service, role, routing)
        if role.disruption_budget is not None:
            from fusion_helm.expand.disruption import disruption_budget

            objects.append(disruption_budget(service, role))
    if service.router is not None:
        from fusion_helm.expand.router import router_objects

        objects += router_objects(service, service.router, templates)
    if service.frontends:
        from fusion_helm.expand.frontends import frontend_objects

        for frontend in service.frontends:
            objects += frontend_objects(service, frontend)
    if service.service is not None or any(role.service is not None for role in service.roles):
        from fusion_helm.expand.services import client_services

        objects += client_services(service)
    if service.tls is not None and service.tls.cert_manager is not None:
        from fusion_helm.expand.tls import certificate

        objects.append(certificate(service))
    if service.monitoring is not None:
        from fusion_helm.expand.monitoring import pod_monitors

        objects += pod_monitors(service)
    check_objects(service, objects)
    return objects


def _routing(service: InferenceService) -> Routing | None:
    """What the autoscalers read of the router: its name, and whether its picker can hold requests and what
    it reports of them."""
    from fusion_helm.expand.autoscaling import Routing

    if service.router is None:
        return None
    from fusion_helm.expand.router import generation_of

    return Routing(router=service.router.name, picker_metrics=generation_of(service, service.router).picker_metrics)


def _check_sizes(service: InferenceService, blueprints: dict[str, RoleBlueprint]) -> None:
    """Refuse, before writing anything, a LeaderWorkerSet or DisaggregatedSet (every role's templates)
    the API server could not store, and an expansion too large to write."""
    total = 0
    role: Role
    for role in service.roles:
        each = blueprints[role.name].json_bytes + LWS_OVERHEAD_BYTES
        if each > MAX_OBJECT_BYTES:
            raise InvalidSpec(service.where, role.template_path,
                              f"makes LeaderWorkerSets of about {each:,} bytes, over the {MAX_OBJECT_BYTES:,} bytes "
                              "the API server stores in one object")
        total += each * (1 if service.layout.grouped else role.replicas)
        if service.layout is Layout.DISAGGREGATED and total > MAX_OBJECT_BYTES:
            raise InvalidSpec(service.where, role.template_path,
                              f"brings the DisaggregatedSet, which holds every role's templates, to about "
                              f"{total:,} bytes, over the {MAX_OBJECT_BYTES:,} bytes the API server stores in "
                              "one object; shrink the pod templates")
        if total > MAX_OUTPUT_BYTES:
            raise InvalidSpec(service.where, f"{role.path}.replicas",
                              f"the expansion would write about {total // 2**20:,} MiB, over the limit of "
                              f"{MAX_OUTPUT_BYTES // 2**20} MiB; lower replicas or shrink the pod templates")


__all__ = ["expand"]
