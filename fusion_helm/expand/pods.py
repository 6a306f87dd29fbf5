"""The pod templates of one role: as given for single-node replicas; for multi-node ones the leader
and workers its bootstrap makes (fusion_helm/expand/bootstrap.py), or custom's own as written."""

from __future__ import annotations

from collections.abc import Mapping

from fusion_helm.errors import InvalidSpec
from fusion_helm.expand import bootstrap
from fusion_helm.model import InferenceService, Role
from fusion_helm.model.bootstrap import Bootstrap, MultiNode
from fusion_helm.model.engine import ServerCommand, server_command
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
    worker_server: ServerCommand | None
    """The command line of the worker template's serving container (None: a Ray worker's, no server)."""
    leader: Mapping[str, Any] | None = None
    """None: LWS makes the leader from the worker template too."""
    leader_server: ServerCommand | None = None
    launched: bool = False
    """The serving containers run a bootstrap's command, their servers' command lines as its args."""

    @property
    def leading(self) -> tuple[Mapping[str, Any], ServerCommand | None]:
        """The template and command line of a replica's leader: its own, else the worker's (LWS makes the
        leader from the worker template then)."""
        return (self.leader, self.leader_server) if self.leader is not None else (self.worker, self.worker_server)

    def with_servers(self, leader: Mapping[str, Any] | None, leader_server: ServerCommand | None,
                     worker: Mapping[str, Any], worker_server: ServerCommand | None) -> RoleTemplates:
        return RoleTemplates(self.size, worker, worker_server, leader, leader_server, self.launched)


def role_templates(service: InferenceService, role: Role) -> RoleTemplates:
    multinode = role.multinode
    server = role.server(service.where)
    if multinode is None:
        return RoleTemplates(size=1, worker=role.template, worker_server=server)
    if multinode.bootstrap is Bootstrap.CUSTOM:
        if multinode.worker_template is None:
            return RoleTemplates(size=role.node_count, worker=role.template, worker_server=server)
        workers = server_command(multinode.worker_template["spec"]["containers"][0], role.serving_command,
                                 service.where, f"{role.path}.multinode.workerTemplate.spec.containers[0]")
        return RoleTemplates(size=role.node_count, leader=role.template, leader_server=server,
                             worker=multinode.worker_template, worker_server=workers)
    serving = role.template["spec"]["containers"][0]
    _check_written(multinode, server)
    leader = bootstrap.leader(multinode, server)
    leader_template = _with_serving_container(role.template, {
        **serving, **_command(leader.command),
        "ports": _with_port(serving.get("ports", []), multinode.port),
    })
    kept = serving if role.every_node_serves else {k: v for k, v in serving.items() if k not in SERVING_ONLY_FIELDS}
    worker = bootstrap.worker(multinode, server)
    worker_command = worker.command if worker is not None else bootstrap.ray_worker(multinode)
    worker_template = _with_serving_container(role.template, {**kept, **_command(worker_command)})
    return RoleTemplates(size=role.node_count, leader=leader_template, leader_server=leader.server,
                         worker=worker_template, worker_server=worker.server if worker is not None else None,
                         launched=True)


def _check_written(multinode: MultiNode, server: ServerCommand) -> None:
    """A flag the bootstrap writes for each pod, given in the template too, would be overridden: refused."""
    for option in bootstrap.written_options(multinode):
        for occurrence in server.occurrences(option):
            raise InvalidSpec(server.where, server.field(occurrence),
                              f"{occurrence.written} is written by bootstrap {multinode.bootstrap} for each pod: "
                              "remove it (docs/expansion.md, multi-node bootstraps)")


def _command(command: bootstrap.Command) -> dict[str, list[str]]:
    return {"command": command.command, "args": command.args}


def _with_port(ports: list[Mapping[str, Any]], port: int) -> list[Mapping[str, Any]]:
    if any(given.get("containerPort") == port for given in ports):
        return ports
    return [*ports, {"containerPort": port}]


def _with_serving_container(template: Mapping[str, Any], container: Mapping[str, Any]) -> dict[str, Any]:
    spec = template["spec"]
    return {**template, "spec": {**spec, "containers": [container, *spec["containers"][1:]]}}
