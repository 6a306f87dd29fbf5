"""The pod templates of one role: as given for single-node replicas, Ray leader/worker for multi-node."""

from __future__ import annotations

import os
from collections.abc import Mapping

from fusion_helm.errors import InvalidSpec
from fusion_helm.expand import ray
from fusion_helm.model import InferenceService, Role
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SHELL = ["/bin/sh", "-c"]
WORKER_DROPPED_FIELDS = ("ports", "readinessProbe", "livenessProbe", "startupProbe")
"""A Ray worker never serves HTTP, so a serving port or probe on it would never answer."""


@record
class RoleTemplates:
    size: int
    worker: Mapping[str, Any]
    leader: Mapping[str, Any] | None = None
    """Only multi-node roles have a leader template; LWS uses the worker template otherwise."""


def role_templates(service: InferenceService, role: Role) -> RoleTemplates:
    if not role.ray_bootstrap:
        return RoleTemplates(size=role.node_count, worker=role.template, leader=role.leader_template)
    if not role.multinode:
        return RoleTemplates(size=1, worker=role.template)
    serving = role.template["spec"]["containers"][0]
    serve = _serve_argv(service, role, serving)
    leader = _with_serving_container(role.template, {
        **serving,
        "command": SHELL,
        "args": [ray.leader_script(serve)],
        "ports": _with_ray_port(serving.get("ports", [])),
    })
    worker_container = {k: v for k, v in serving.items() if k not in WORKER_DROPPED_FIELDS}
    worker = _with_serving_container(role.template, {
        **worker_container, "command": SHELL, "args": [ray.worker_script()],
    })
    return RoleTemplates(size=role.node_count, leader=leader, worker=worker)


def _serve_argv(service: InferenceService, role: Role, serving: Mapping[str, Any]) -> list[str]:
    command = serving.get("command")
    if command and os.path.basename(command[0]) in ("sh", "bash") and "-c" in command:
        raise InvalidSpec(
            service.where, f"{role.template_path}.spec.containers[0].command",
            "a multi-node role needs the server's command in exec form (a list of words), not a "
            "shell script: the leader runs it after `ray start` and appends "
            f"{ray.EXECUTOR_FLAG} ray to it",
        )
    return [*(command or role.serving_command), *serving.get("args", [])]


def _with_ray_port(ports: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    if any(port.get("containerPort") == ray.RAY_PORT for port in ports):
        return ports
    return [*ports, {"containerPort": ray.RAY_PORT}]


def _with_serving_container(template: Mapping[str, Any], container: Mapping[str, Any]) -> dict[str, Any]:
    spec = template["spec"]
    return {**template, "spec": {**spec, "containers": [container, *spec["containers"][1:]]}}
