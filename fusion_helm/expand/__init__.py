"""Pure expansion: an InferenceService model → the Kubernetes objects that serve it.

Order of the result: the PodGroup first (its pods wait for it), then each role's LeaderWorkerSets
by role order and replica index, then the router's objects. Generated objects may share unchanged
sub-structures (a role's pod spec is the same object in all its replicas): treat the result as
read-only.
"""

from __future__ import annotations

from typing import Any

from fusion_helm.expand import gang, naming
from fusion_helm.expand.lws import leader_worker_set, role_blueprint
from fusion_helm.expand.pods import role_templates
from fusion_helm.expand.router import router_objects
from fusion_helm.model import InferenceService


def expand(service: InferenceService) -> list[dict[str, Any]]:
    for role in service.roles:
        naming.check_name_lengths(service, role)
    plan = gang.plan_gang(service)
    templates = {role.name: role_templates(service, role) for role in service.roles}
    objects = gang.pod_groups(service, plan, templates)
    for role in service.roles:
        blueprint = role_blueprint(service, role, templates[role.name], plan)
        objects += (leader_worker_set(service, role, blueprint, plan, index)
                    for index in range(role.replicas))
    if service.router is not None:
        objects += router_objects(service, service.router)
    return objects


__all__ = ["expand"]
