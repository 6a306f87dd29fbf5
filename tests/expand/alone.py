"""A stage driven alone, as kustomize's filter tests drive one filter: its steps on a hand-made service,
facts and pod templates, nothing of the other stages around it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fusion_helm import parse_inference_service
from fusion_helm.expand.gang import GangPlan
from fusion_helm.expand.generations import Routing
from fusion_helm.expand.lws import role_blueprint
from fusion_helm.expand.pods import RoleTemplates, role_templates
from fusion_helm.expand.stages import STAGES, Facts, Steps
from fusion_helm.model import InferenceService

NO_GANG = GangPlan(group_name=None, scheduler_name=None)


def steps(name: str) -> Steps:
    [stage] = [stage for stage in STAGES if stage.name == name]
    return stage.load()


def model(obj: Mapping[str, Any]) -> InferenceService:
    return parse_inference_service(obj)


def given_templates(service: InferenceService) -> dict[str, RoleTemplates]:
    """Each role's pod templates as the role gives them."""
    return {role.name: role_templates(service, role) for role in service.roles}


def routing(service: InferenceService) -> Routing | None:
    """SERVICE's routing facts, as the expansion decides them; None without a router."""
    from fusion_helm.expand.router.role import routing as routing_of

    return None if service.router is None else routing_of(service, service.router, given_templates(service))


def facts(service: InferenceService, **given: Any) -> Facts:
    """SERVICE's facts as GIVEN, else none: not gang-scheduled, no router, no queue, no fetch Jobs."""
    return Facts(**{"service": service, "gang": NO_GANG, "routing": None, "queue_seconds": None, "fetch_jobs": (),
                    **given})


def pods(name: str, facts: Facts, templates: Mapping[str, RoleTemplates] | None = None
         ) -> dict[str, RoleTemplates]:
    """Each role's TEMPLATES (else as the roles give them) through stage NAME's pod step alone."""
    step = steps(name).pods
    assert step is not None, f"stage {name} has no pod step"
    service = facts.service
    current = dict(templates) if templates is not None else given_templates(service)
    for role in service.roles:
        change = step.change(facts, role, current[role.name])
        if change is not None:
            current[role.name] = current[role.name].map(step.pods, change)
    return current


def objects(name: str, facts: Facts, templates: Mapping[str, RoleTemplates] | None = None
            ) -> list[dict[str, Any]]:
    """Stage NAME's objects alone (its service's, then each role's), for TEMPLATES (else the roles' own)."""
    found = steps(name)
    service = facts.service
    given = templates or given_templates(service)
    blueprints = {role.name: role_blueprint(service, role, given[role.name], facts.gang) for role in service.roles}
    made = found.objects(facts, blueprints) if found.objects is not None else []
    if found.role_objects is not None:
        made += [obj for role in service.roles for obj in found.role_objects(facts, role, blueprints)]
    return made
