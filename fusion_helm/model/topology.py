"""Where Volcano may place a gang's pods in the cluster's network: ``networkTopology`` of a role's
replicas, of the service's replicas by default, and of the whole service.

Volcano describes the network as HyperNodes in tiers (1: the nodes behind one switch or NVLink domain,
higher: the domains above); a constraint names the highest tier a set of pods may span.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from fusion_helm.errors import InvalidSpec
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class TopologyMode(StrEnum):
    HARD = "hard"
    """Never beyond the tier: what fits in no domain of it waits, whole."""
    SOFT = "soft"
    """The lowest tier that fits, then the next, then anywhere (Volcano's soft mode has no bound)."""
    NONE = "none"
    """A role's replicas without a constraint, whatever the service's default (ours, not Volcano's)."""


@record
class NetworkTopology:
    mode: TopologyMode
    highest_tier_allowed: int | None = None
    highest_tier_name: str | None = None

    @property
    def tier(self) -> str:
        """How messages name the bound: "tier 1", "tier rack", or "any tier" (soft)."""
        if self.highest_tier_allowed is not None:
            return f"tier {self.highest_tier_allowed}"
        return f"tier {self.highest_tier_name}" if self.highest_tier_name else "any tier"

    def to_manifest(self) -> dict[str, Any]:
        """Volcano's NetworkTopologySpec."""
        manifest: dict[str, Any] = {"mode": self.mode.value}
        if self.highest_tier_allowed is not None:
            manifest["highestTierAllowed"] = self.highest_tier_allowed
        if self.highest_tier_name is not None:
            manifest["highestTierName"] = self.highest_tier_name
        return manifest


def parse_network_topology(raw: Mapping[str, Any] | None, path: str, where: str, opt_out: bool = False
                           ) -> NetworkTopology | None:
    """A ``networkTopology`` as the schema validated it; InvalidSpec for what Volcano's webhook refuses
    (both tier fields) and what would leave pods waiting for ever or bound nowhere (hard without a tier,
    a tier with soft, which ignores it). OPT_OUT: mode none is allowed (a role's)."""
    if raw is None:
        return None
    topology = NetworkTopology(mode=TopologyMode(raw.get("mode", TopologyMode.HARD)),
                               highest_tier_allowed=raw.get("highestTierAllowed"),
                               highest_tier_name=raw.get("highestTierName"))
    tiers = [name for name in ("highestTierAllowed", "highestTierName") if name in raw]
    if topology.mode is TopologyMode.NONE:
        if not opt_out:
            raise InvalidSpec(where, f"{path}.mode",
                              "none opts a role out of the service's default; here, remove networkTopology instead")
        if tiers:
            raise InvalidSpec(where, f"{path}.{tiers[0]}", "goes with mode hard; mode none has no tier")
    elif len(tiers) == 2:
        raise InvalidSpec(where, f"{path}.highestTierName",
                          "give highestTierAllowed or highestTierName, not both (Volcano refuses both)")
    elif topology.mode is TopologyMode.HARD and not tiers:
        raise InvalidSpec(where, path, "mode hard needs highestTierAllowed (a tier number, from 1) or "
                                       "highestTierName (a HyperNode tierName)")
    elif topology.mode is TopologyMode.SOFT and tiers:
        raise InvalidSpec(where, f"{path}.{tiers[0]}",
                          "goes with mode hard: mode soft tries the lowest tier first and then any, whatever "
                          "the bound; for a bound, use mode hard")
    return topology


def check_nested(replica: NetworkTopology, service: NetworkTopology, replica_path: str, where: str) -> None:
    """A replica lies inside the service's domain: a replica bound above the service's says nothing
    (Volcano keeps the lower one). Comparable only as numbers."""
    if (replica.mode is TopologyMode.HARD and service.mode is TopologyMode.HARD
            and replica.highest_tier_allowed is not None and service.highest_tier_allowed is not None
            and replica.highest_tier_allowed > service.highest_tier_allowed):
        raise InvalidSpec(where, f"{replica_path}.highestTierAllowed",
                          f"is {replica.highest_tier_allowed}, above gangSchedule.serviceNetworkTopology's "
                          f"{service.highest_tier_allowed}: a replica lies within the service's domain, so "
                          "its bound can only be lower or equal")
