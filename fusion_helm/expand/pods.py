"""The pod templates of one role: as given for single-node replicas; for multi-node ones the leader
and workers its bootstrap makes (fusion_helm/expand/bootstrap.py), or custom's own as written."""

from __future__ import annotations

import os
from collections.abc import Mapping

from fusion_helm.errors import InvalidSpec
from fusion_helm.expand import bootstrap
from fusion_helm.model import InferenceService, Role
from fusion_helm.model.bootstrap import Bootstrap, MultiNode
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SERVING_ONLY_FIELDS = ("ports", "readinessProbe", "livenessProbe", "startupProbe")
"""A worker that does not serve (it runs ranks for the leader's server) would never answer a serving
port or a probe."""


@record
class RoleTemplates:
    size: int
    worker: Mapping[str, Any]
    leader: Mapping[str, Any] | None = None
    """None: LWS makes the leader from the worker template too."""


def role_templates(service: InferenceService, role: Role) -> RoleTemplates:
    multinode = role.multinode
    if multinode is None:
        return RoleTemplates(size=1, worker=role.template)
    if multinode.bootstrap is Bootstrap.CUSTOM:
        if multinode.worker_template is None:
            return RoleTemplates(size=role.node_count, worker=role.template)
        return RoleTemplates(size=role.node_count, leader=role.template, worker=multinode.worker_template)
    serving = role.template["spec"]["containers"][0]
    serve = _serve_argv(service, role, multinode, serving)
    leader = bootstrap.leader(multinode, serve)
    leader_template = _with_serving_container(role.template, {
        **serving, "command": leader.command, "args": leader.args,
        "ports": _with_port(serving.get("ports", []), multinode.port),
    })
    worker = bootstrap.worker(multinode, serve)
    kept = serving if role.every_node_serves else {k: v for k, v in serving.items() if k not in SERVING_ONLY_FIELDS}
    worker_template = _with_serving_container(role.template, {**kept, "command": worker.command, "args": worker.args})
    return RoleTemplates(size=role.node_count, leader=leader_template, worker=worker_template)


def _serve_argv(service: InferenceService, role: Role, multinode: MultiNode, serving: Mapping[str, Any]) -> list[str]:
    command = serving.get("command")
    path = f"{role.template_path}.spec.containers[0]"
    if command and os.path.basename(command[0]) in ("sh", "bash") and "-c" in command:
        raise InvalidSpec(
            service.where, f"{path}.command",
            f"a multi-node role needs the server's command in exec form (a list of words), not a shell script: "
            f"bootstrap {multinode.bootstrap} starts it with flags of its own (or set multinode.bootstrap custom "
            "and give the workers' template as multinode.workerTemplate)")
    argv = [*(command or role.serving_command), *serving.get("args", [])]
    for flag in bootstrap.written_flags(multinode):
        for index, word in enumerate(argv):
            if word == flag or word.startswith(f"{flag}="):
                field = "command" if command and index < len(command) else "args"
                raise InvalidSpec(service.where, f"{path}.{field}",
                                  f"{flag} is written by bootstrap {multinode.bootstrap} for each pod: remove it "
                                  "(docs/expansion.md, multi-node bootstraps)")
    return argv


def _with_port(ports: list[Mapping[str, Any]], port: int) -> list[Mapping[str, Any]]:
    if any(given.get("containerPort") == port for given in ports):
        return ports
    return [*ports, {"containerPort": port}]


def _with_serving_container(template: Mapping[str, Any], container: Mapping[str, Any]) -> dict[str, Any]:
    spec = template["spec"]
    return {**template, "spec": {**spec, "containers": [container, *spec["containers"][1:]]}}
