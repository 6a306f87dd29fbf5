"""The pod templates of one role, and the one walk over them.

A role's replicas are made from one template (single-node replicas; a multi-node replica whose every pod
runs the same template) or two: a leader's and its workers'. For multi-node replicas the bootstrap makes
both (fusion_helm/expand/bootstrap.py); custom's are as written. ``RoleTemplates.map`` is the only code that
walks them: every feature that changes a role's pods names which pods (``Pods``) and gives one change per
pod, and the walk decides which templates those are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum

from fusion_helm.errors import InvalidSpec
from fusion_helm.expand import bootstrap
from fusion_helm.model import InferenceService, Role
from fusion_helm.model.bootstrap import Bootstrap, MultiNode
from fusion_helm.model.engine import ServerCommand, server_command
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SERVING_PROBES_AND_PORTS = ("ports", "readinessProbe", "livenessProbe", "startupProbe")
"""A worker that does not serve (it runs ranks for the leader's server) would never answer a serving
port or a probe: a bootstrap's workers leave them out."""


class Pods(StrEnum):
    """Which pods of a replica a change is made to."""

    ALL = "all"
    """Every pod: the leader and the workers."""
    SERVING = "serving"
    """The pods that serve requests, which the InferencePool, the Services and the PodMonitors select: each
    replica's leader, and its workers too where every node serves."""
    LEADERS = "leaders"
    """Each replica's leader alone."""


@record
class Pod:
    """One pod template of a role, with its serving (first) container's command line."""

    template: Mapping[str, Any]
    server: ServerCommand | None
    """None: the container runs no server of its own (a Ray worker joins the leader's)."""
    launched: bool = False
    """A bootstrap's command runs the container, the server's words its arguments."""

    @property
    def spec(self) -> Mapping[str, Any]:
        return self.template["spec"]  # type: ignore[no-any-return]

    @property
    def serving_container(self) -> Mapping[str, Any]:
        return self.spec["containers"][0]  # type: ignore[no-any-return]

    def running(self, server: ServerCommand) -> dict[str, Any]:
        """The serving container running SERVER: its words in the container's command and args, or, where a
        bootstrap launches it, as the bootstrap command's arguments."""
        container = self.serving_container
        return {**container, "args": list(server.words)} if self.launched else server.write(container)

    def with_spec(self, spec: Mapping[str, Any], server: ServerCommand | None = None) -> Pod:
        """This pod with SPEC (and SERVER, the command line its serving container now runs, where it changed)."""
        return Pod({**self.template, "spec": spec}, self.server if server is None else server, self.launched)

    def with_template(self, template: Mapping[str, Any]) -> Pod:
        return Pod(template, self.server, self.launched)


Change = Callable[[Pod], Pod]
"""One feature's change to one pod template."""


@record
class RoleTemplates:
    size: int
    """Pods per replica."""
    worker: Pod
    leader: Pod | None = None
    """None: LWS makes the leader from the worker template too."""
    workers_serve: bool = False
    """Each pod of a replica serves requests, not only its leader."""

    @property
    def leading(self) -> Pod:
        """What a replica's leader runs: its own template, else the worker's."""
        return self.leader if self.leader is not None else self.worker

    @property
    def worker_serves(self) -> bool:
        """Some pod made from the worker template serves: it is also the leader's, or every pod serves."""
        return self.leader is None or self.workers_serve

    def pods(self, which: Pods) -> tuple[Pod, ...]:
        """The templates of WHICH pods, the leader's first."""
        if self._one_template(which):
            return (self.worker,)
        return (self.leading, self.worker) if self._with_workers(which) else (self.leading,)

    def map(self, which: Pods, change: Change) -> RoleTemplates:
        """These templates with CHANGE made to each of WHICH pods. Where the leader shares the worker template
        and only the leader is changed, it gets a template of its own."""
        if self._one_template(which):
            return RoleTemplates(self.size, change(self.worker), None, self.workers_serve)
        worker = change(self.worker) if self._with_workers(which) else self.worker
        return RoleTemplates(self.size, worker, change(self.leading), self.workers_serve)

    def _with_workers(self, which: Pods) -> bool:
        """WHICH pods include a multi-node replica's workers."""
        return which is Pods.ALL or (which is Pods.SERVING and self.workers_serve and self.size > 1)

    def _one_template(self, which: Pods) -> bool:
        """WHICH pods all run the worker template, and every pod that runs it is one of them."""
        return self.leader is None and (self.size == 1 or self._with_workers(which))


def role_templates(service: InferenceService, role: Role) -> RoleTemplates:
    multinode = role.multinode
    server = role.server(service.where)
    if multinode is None:
        return RoleTemplates(size=1, worker=Pod(role.template, server))
    if multinode.bootstrap is Bootstrap.CUSTOM:
        if multinode.worker_template is None:
            return RoleTemplates(size=role.node_count, worker=Pod(role.template, server))
        workers = server_command(multinode.worker_template["spec"]["containers"][0], role.serving_command,
                                 service.where, f"{role.path}.multinode.workerTemplate.spec.containers[0]")
        return RoleTemplates(size=role.node_count, leader=Pod(role.template, server),
                             worker=Pod(multinode.worker_template, workers))
    serving = role.template["spec"]["containers"][0]
    _check_written(multinode, server)
    leader = bootstrap.leader(multinode, server)
    leader_template = _with_serving_container(role.template, {
        **serving, **_command(leader.command),
        "ports": _with_port(serving.get("ports", []), multinode.port),
    })
    workers_serve = role.every_node_serves
    kept = serving if workers_serve else {key: value for key, value in serving.items()
                                          if key not in SERVING_PROBES_AND_PORTS}
    worker = bootstrap.worker(multinode, server)
    worker_command = worker.command if worker is not None else bootstrap.ray_worker(multinode)
    worker_template = _with_serving_container(role.template, {**kept, **_command(worker_command)})
    return RoleTemplates(size=role.node_count, leader=Pod(leader_template, leader.server, launched=True),
                         worker=Pod(worker_template, worker.server if worker is not None else None, launched=True),
                         workers_serve=workers_serve)


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
