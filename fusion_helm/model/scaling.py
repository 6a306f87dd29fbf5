"""How a role in the role layout changes size and template: its rollout bounds and its autoscaler."""

from __future__ import annotations

import re
from collections.abc import Mapping

from fusion_helm.errors import InvalidSpec, show
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PERCENT = re.compile(r"[0-9]+%")
LWS_ROLLOUT_DEFAULTS: Mapping[str, int] = {"maxUnavailable": 1, "maxSurge": 0}
"""LWS's defaults for a rollingUpdateConfiguration (layout role)."""
DISAGGREGATED_SET_ROLLOUT_DEFAULTS: Mapping[str, int] = {"maxUnavailable": 0, "maxSurge": 1}
"""A DisaggregatedSet role's rollout without a rollingUpdateConfiguration: each role gets a new group
before it loses an old one, so every revision keeps serving while they overlap."""

# The keys of a MetricSpec that go with each of its types (autoscaling/v2).
METRIC_SOURCES = {"ContainerResource": "containerResource", "External": "external", "Object": "object",
                  "Pods": "pods", "Resource": "resource"}


@record
class Autoscaling:
    """``roles[].autoscaling``: a HorizontalPodAutoscaler owns the role's replica count."""

    min_replicas: int
    max_replicas: int
    metrics: tuple[Mapping[str, Any], ...] = ()


def parse_autoscaling(raw: Mapping[str, Any] | None, path: str, where: str) -> Autoscaling | None:
    if raw is None:
        return None
    scaling = Autoscaling(min_replicas=raw.get("minReplicas", 1), max_replicas=raw["maxReplicas"],
                          metrics=tuple(raw.get("metrics") or ()))
    if scaling.max_replicas < scaling.min_replicas:
        raise InvalidSpec(where, f"{path}.maxReplicas",
                          f"must be at least minReplicas ({scaling.min_replicas}), got {scaling.max_replicas}")
    for index, metric in enumerate(scaling.metrics):
        source = METRIC_SOURCES[metric["type"]]
        if not isinstance(metric.get(source), Mapping):
            raise InvalidSpec(where, f"{path}.metrics[{index}].{source}",
                              f"is required (an object) for a metric of type {metric['type']}")
        for other in set(METRIC_SOURCES.values()) - {source}:
            if other in metric:
                raise InvalidSpec(where, f"{path}.metrics[{index}].{other}",
                                  f"must be absent from a metric of type {metric['type']}")
    return scaling


def check_rollout(rollout: Mapping[str, Any], replicas: int, path: str, where: str,
                  defaults: Mapping[str, int] = LWS_ROLLOUT_DEFAULTS) -> None:
    """Refuse what the LWS and DisaggregatedSet webhooks would: a bound that is neither a count nor a
    percentage up to 100%, or both bounds 0 at the role's replicas (nothing could ever be replaced),
    bounds the rollout leaves out taking DEFAULTS."""
    for key in ("maxUnavailable", "maxSurge"):
        value = rollout.get(key)
        if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            continue
        if not (isinstance(value, str) and PERCENT.fullmatch(value) and int(value[:-1]) <= 100):
            raise InvalidSpec(where, f"{path}.{key}",
                              f"must be a count (>= 0) or a percentage up to 100% such as \"25%\", got {show(value)}")
    bounds = {**defaults, **rollout}
    if replicas and scaled(bounds["maxUnavailable"], replicas, up=False) == 0 \
            and scaled(bounds["maxSurge"], replicas, up=True) == 0:
        raise InvalidSpec(where, f"{path}.maxUnavailable",
                          f"and maxSurge are both 0 at {replicas} replica(s): no group could ever be replaced; "
                          "allow one to be unavailable or one to be added")


def scaled(value: int | str, replicas: int, up: bool) -> int:
    """A count, or a percentage of REPLICAS rounded UP or down, as LWS reads it."""
    if isinstance(value, int):
        return value
    share = int(value[:-1]) * replicas
    return -(-share // 100) if up else share // 100
