"""``spec.gangSchedule``: which of a service's pods Volcano places together, as the spec says it."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from fusion_helm.errors import InvalidSpec
from fusion_helm.model.topology import NetworkTopology, check_nested, parse_network_topology
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fusion_helm.model.inference_service import Role


class GangLevel(StrEnum):
    GROUP = "group"
    """Every replica of every role together: all or nothing."""
    ROLE = "role"
    """The first minRoleReplicas replicas of each role together; further replicas as capacity allows."""


@record
class GangSchedule:
    """``spec.gangSchedule`` as written (the service did not omit it)."""

    enable: bool
    level: GangLevel
    min_role_replicas: Mapping[str, int]
    network_topology: NetworkTopology | None = None
    """The default of the roles' replicas."""
    service_network_topology: NetworkTopology | None = None
    """The PodGroup's own: the whole service."""


def parse_gang_schedule(raw: Mapping[str, Any] | None, roles: tuple[Role, ...], where: str
                         ) -> GangSchedule | None:
    if raw is None:
        return None
    gang = GangSchedule(
        enable=raw.get("enable", True), level=GangLevel(raw.get("level", GangLevel.ROLE)),
        min_role_replicas=dict(raw.get("minRoleReplicas") or {}),
        network_topology=parse_network_topology(raw.get("networkTopology"), "spec.gangSchedule.networkTopology",
                                                where),
        service_network_topology=parse_network_topology(
            raw.get("serviceNetworkTopology"), "spec.gangSchedule.serviceNetworkTopology", where))
    if gang.service_network_topology is not None:
        if gang.network_topology is not None:
            check_nested(gang.network_topology, gang.service_network_topology, "spec.gangSchedule.networkTopology",
                         where)
        for served in roles:
            if served.network_topology is not None:
                check_nested(served.network_topology, gang.service_network_topology,
                             f"{served.path}.networkTopology", where)
    by_name = {role.name: role for role in roles}
    for role_name, count in gang.min_role_replicas.items():
        path = f"spec.gangSchedule.minRoleReplicas.{role_name}"
        role = by_name.get(role_name)
        if role is None:
            raise InvalidSpec(where, path, f"names no serving role (serving roles: {', '.join(by_name)})")
        if gang.level is GangLevel.GROUP:
            raise InvalidSpec(where, path, "only applies to level role; level group requires every replica")
        if count > role.replicas:
            replicas = "autoscaling.minReplicas" if role.autoscaling else "replicas"
            raise InvalidSpec(where, path, f"must be at most the role's {replicas} ({role.replicas}), got {count}")
    for role in roles if gang.level is GangLevel.GROUP else ():
        if role.autoscaling is not None:
            raise InvalidSpec(where, f"{role.path}.autoscaling",
                              "cannot go with gangSchedule level group, which requires every replica while the "
                              "autoscaler changes how many there are; use level role")
    return gang
