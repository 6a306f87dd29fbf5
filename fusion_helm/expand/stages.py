"""The expansion as an ordered table of stages: what a service's features make, and in which order.

``expand`` runs: the names' checks; the facts every stage reads, decided once per service (``Facts``); each
role's pod templates (``pods.role_templates``: as given, or a multi-node bootstrap's leader and workers)
through every applying stage's pod step, in table order; the roles' blueprints (``lws``: the templates
stamped with labels, scheduler and PodGroup); every applying stage's objects, in table order — each
role's objects (its LeaderWorkerSets, autoscalers and budget) together, where the first stage with per-role
objects stands —; and the conformance check of every object against its kind's upstream schema.

A stage's ``load`` imports its modules only when the stage applies: a post-renderer starts on every helm
call, and loads only what the services in its stream use. docs/architecture.md states this table
(tests/expand/test_stages.py holds the two together) and where a new feature goes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from fusion_helm.collector import paused
from fusion_helm.expand import gang
from fusion_helm.expand.conformance import check_objects
from fusion_helm.expand.lws import RoleBlueprint, check_sizes, role_blueprint
from fusion_helm.expand.names import check_names, check_unique_names
from fusion_helm.expand.pods import Change, Pods, RoleTemplates, role_templates
from fusion_helm.model import InferenceService, Layout, Role
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fusion_helm.expand.cache import FetchJob
    from fusion_helm.expand.generations import Routing

    Objects = list[dict[str, Any]]
    Blueprints = Mapping[str, RoleBlueprint]


@record
class Facts:
    """What the stages read of a service beyond its model, each decided once."""

    service: InferenceService
    gang: gang.GangPlan
    """Whether it is gang-scheduled, and its atomic minimum."""
    routing: Routing | None
    """Its router's picker generation and the port its pool routes to; None: no router."""
    queue_seconds: int | None
    """How long the router's picker holds a request while an autoscaled role wakes or scales; None: it does
    not queue."""
    fetch_jobs: tuple[FetchJob, ...]
    """The Jobs that fetch the weights onto the model cache."""


@record
class PodStep:
    pods: Pods
    """Which pods of a role's replicas it changes."""
    change: Callable[[Facts, Role, RoleTemplates], Change | None]
    """The change to each of those pods of a role (its templates as the earlier stages left them); None: the
    role is left as it is."""


@record
class Steps:
    """What a stage does: a pod step, objects for the service, objects for each serving role."""

    pods: PodStep | None = None
    objects: Callable[[Facts, Blueprints], Objects] | None = None
    role_objects: Callable[[Facts, Role, Blueprints], Objects] | None = None


@record
class Stage:
    name: str
    when: str
    """When it applies, as docs/architecture.md says it."""
    applies: Callable[[InferenceService], bool]
    load: Callable[[], Steps]


def _always(_: InferenceService) -> bool:
    return True


def _gang() -> Steps:
    def pod_groups(facts: Facts, blueprints: Blueprints) -> Objects:
        service = facts.service
        return gang.pod_groups(service, facts.gang, {
            role.name: gang.replica_requests(service, role, blueprints[role.name].templates) for role in service.roles})

    return Steps(objects=pod_groups)


def _tokens() -> Steps:
    from fusion_helm.expand import tokens

    return Steps(pods=PodStep(Pods.ALL, lambda _, __, ___: tokens.without_automount))


def _weights() -> Steps:
    from fusion_helm.expand import cache, weights

    return Steps(pods=PodStep(Pods.ALL, lambda facts, role, _: weights.reading(facts.service, role, facts.fetch_jobs)),
                 objects=lambda facts, _: cache.cache_objects(facts.service, facts.fetch_jobs))


def _tls() -> Steps:
    from fusion_helm.expand import tls

    return Steps(pods=PodStep(Pods.SERVING, lambda facts, role, _: tls.serving_https(facts.service, role)))


def _layout() -> Steps:
    from fusion_helm.expand import lws

    def disaggregated_set(facts: Facts, blueprints: Blueprints) -> Objects:
        if facts.service.layout is not Layout.DISAGGREGATED:
            return []
        from fusion_helm.expand.disaggregated_set import disaggregated_set

        return [disaggregated_set(facts.service, blueprints)]

    return Steps(objects=disaggregated_set, role_objects=lambda facts, role, blueprints: list(
        lws.leader_worker_sets(facts.service, role, blueprints[role.name], facts.gang)))


def _autoscaling() -> Steps:
    from fusion_helm.expand import autoscaling

    return Steps(role_objects=lambda facts, role, _: autoscaling.autoscalers(facts.service, role, facts.routing))


def _disruption() -> Steps:
    from fusion_helm.expand import disruption

    return Steps(role_objects=lambda facts, role, _: [] if role.disruption_budget is None else [
        disruption.disruption_budget(facts.service, role)])


def _router() -> Steps:
    from fusion_helm.expand.router import role, sidecar

    def routing(facts: Facts) -> Routing:
        assert facts.routing is not None
        return facts.routing

    return Steps(pods=PodStep(Pods.SERVING, lambda facts, role, templates: sidecar.decoder_sidecar(
        facts.service, routing(facts), role, templates)),
                 objects=lambda facts, blueprints: role.router_objects(
                     facts.service, routing(facts), facts.queue_seconds,
                     {name: blueprint.templates for name, blueprint in blueprints.items()}))


def _precise() -> Steps:
    from fusion_helm.expand.router import precise

    def publishing(facts: Facts, role: Role, _: RoleTemplates) -> Change | None:
        if facts.routing is None or facts.routing.precise is None:
            return None
        return precise.publishing(facts.service, role)

    return Steps(pods=PodStep(Pods.SERVING, publishing))


def _drain() -> Steps:
    from fusion_helm.expand import autoscaling

    return Steps(pods=PodStep(Pods.ALL, lambda _, role, __: None if role.autoscaling is None else autoscaling.draining))


def _frontends() -> Steps:
    from fusion_helm.expand import frontends

    return Steps(pods=PodStep(Pods.ALL, lambda facts, role, _: frontends.prefill_annotation(facts.service, role)),
                 objects=lambda facts, _: [obj for frontend in facts.service.frontends
                                           for obj in frontends.frontend_objects(facts.service, frontend)])


def _services() -> Steps:
    from fusion_helm.expand import services

    return Steps(objects=lambda facts, _: services.client_services(facts.service))


def _certificate() -> Steps:
    from fusion_helm.expand import tls

    return Steps(objects=lambda facts, _: [tls.certificate(facts.service)])


def _monitoring() -> Steps:
    from fusion_helm.expand import monitoring

    return Steps(objects=lambda facts, _: monitoring.pod_monitors(facts.service))


def _network() -> Steps:
    from fusion_helm.expand import network

    return Steps(objects=lambda facts, _: network.network_policies(facts.service, facts.routing,
                                                                   bool(facts.fetch_jobs)))


def _has_network_policies(service: InferenceService) -> bool:
    return service.network_policies is not None or (
        service.router is not None and service.router.picker_network_policy is not None)


STAGES: tuple[Stage, ...] = (
    Stage("gang", "always (no PodGroup where the service is not gang-scheduled)", _always, _gang),
    Stage("tokens", "always", _always, _tokens),
    Stage("weights", "a role reads a model source, or spec.modelCache",
          lambda service: service.model_cache is not None or any(role.weights for role in service.roles), _weights),
    Stage("tls", "spec.tls", lambda service: service.tls is not None, _tls),
    Stage("layout", "always", _always, _layout),
    Stage("autoscaling", "a role's autoscaling", lambda service: any(role.autoscaling for role in service.roles),
          _autoscaling),
    Stage("disruption", "a role's disruption budget",
          lambda service: any(role.disruption_budget is not None for role in service.roles), _disruption),
    Stage("router", "a router role", lambda service: service.router is not None, _router),
    Stage("precise", "a router's precise-prefix-cache scorer",
          lambda service: service.router is not None and service.router.reads_engine_caches, _precise),
    Stage("drain", "a role's autoscaling", lambda service: any(role.autoscaling for role in service.roles), _drain),
    Stage("frontends", "a frontend role", lambda service: bool(service.frontends), _frontends),
    Stage("services", "spec.service or a role's service",
          lambda service: service.service is not None or any(role.service for role in service.roles), _services),
    Stage("certificate", "spec.tls.certManager",
          lambda service: service.tls is not None and service.tls.cert_manager is not None, _certificate),
    Stage("monitoring", "spec.monitoring.podMonitor", lambda service: service.monitoring is not None, _monitoring),
    Stage("network", "spec.networkPolicy (on by default), or the picker's networkPolicy", _has_network_policies,
          _network),
)
"""The stages, in order: their pod steps change a role's templates in this order, their objects are written
in this order."""


def expand(service: InferenceService) -> list[dict[str, Any]]:
    """The objects that serve SERVICE, each valid by its kind's upstream schema; InvalidSpec if not."""
    with paused():
        return _expand(service)


def _expand(service: InferenceService) -> list[dict[str, Any]]:
    check_names(service)
    templates = {role.name: role_templates(service, role) for role in service.roles}
    facts = facts_of(service, templates)
    steps = [stage.load() for stage in STAGES if stage.applies(service)]
    for step in steps:
        if step.pods is not None:
            templates = _changed(facts, step.pods, templates)
    blueprints = {role.name: role_blueprint(service, role, templates[role.name], facts.gang) for role in service.roles}
    check_sizes(service, blueprints)
    objects = _objects(facts, blueprints, steps)
    check_unique_names(service, objects)
    check_objects(service, objects)
    return objects


def facts_of(service: InferenceService, templates: Mapping[str, RoleTemplates]) -> Facts:
    """SERVICE's facts, for its roles' pod TEMPLATES as given, each decided by its feature's own module."""
    plan = gang.plan_gang(service)
    fetch_jobs: tuple[FetchJob, ...] = ()
    if service.model_cache is not None:
        from fusion_helm.expand.cache import fetch_jobs as fetch_jobs_of

        fetch_jobs = fetch_jobs_of(service)
    routing = queue_seconds = None
    if service.router is not None:
        from fusion_helm.expand.router.role import routing as routing_of

        routing = routing_of(service, service.router, templates)
        if any(role.autoscaling for role in service.roles):
            from fusion_helm.expand.autoscaling import queue_seconds as queue_seconds_of

            queue_seconds = queue_seconds_of(service, routing)
    return Facts(service=service, gang=plan, routing=routing, queue_seconds=queue_seconds, fetch_jobs=fetch_jobs)


def _changed(facts: Facts, step: PodStep, templates: Mapping[str, RoleTemplates]) -> dict[str, RoleTemplates]:
    result = dict(templates)
    for role in facts.service.roles:
        change = step.change(facts, role, templates[role.name])
        if change is not None:
            result[role.name] = templates[role.name].map(step.pods, change)
    return result


def _objects(facts: Facts, blueprints: Blueprints, steps: list[Steps]) -> Objects:
    """Each step's objects in order; the roles' own objects, role by role, where the first step that has
    any stands."""
    objects: Objects = []
    per_role = [step.role_objects for step in steps if step.role_objects is not None]
    roles_written = False
    for step in steps:
        if step.objects is not None:
            objects += step.objects(facts, blueprints)
        if step.role_objects is not None and not roles_written:
            roles_written = True
            for role in facts.service.roles:
                for role_objects in per_role:
                    objects += role_objects(facts, role, blueprints)
    return objects


__all__ = ["STAGES", "Facts", "Stage", "Steps", "expand"]
