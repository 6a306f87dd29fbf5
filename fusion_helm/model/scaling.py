"""How a role in the role layout changes size and template: its rollout bounds and its autoscaler."""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum

from fusion_helm.base import needs
from fusion_helm.errors import InvalidSpec, format_path, show
from fusion_helm.model.upstream import schema as upstream_schema
from fusion_helm.model.validation import first_error
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


class Signal(StrEnum):
    """What a role's size follows under KEDA (``autoscaling.signals[].type``)."""

    PICKER_QUEUE = "picker-queue"
    PICKER_RUNNING = "picker-running"
    ENGINE_QUEUE = "engine-queue"
    ENGINE_RUNNING = "engine-running"
    KV_CACHE = "kv-cache"
    PREFILL_BACKLOG = "prefill-backlog"

    @property
    def read_at_picker(self) -> bool:
        return self in (Signal.PICKER_QUEUE, Signal.PICKER_RUNNING)


@record
class Target:
    signal: Signal
    per_replica: float


@record
class PrometheusSource:
    """``autoscaling.prometheus``: where KEDA queries the signals."""

    server_address: str
    credentials_secret: str | None = None
    credentials_mode: str | None = None
    """bearer or basic."""
    credentials_ca: bool = False
    unsafe_ssl: bool = False


@record
class KeepUpWith:
    """At least ``ratio`` replicas of the role per replica of ``role``."""

    role: str
    ratio: float


@record
class Autoscaling:
    """``roles[].autoscaling``: a KEDA ScaledObject (``keda``) or a HorizontalPodAutoscaler owns the role's
    replica count."""

    min_replicas: int
    max_replicas: int
    metrics: tuple[Mapping[str, Any], ...] = ()
    prometheus: PrometheusSource | None = None
    signals: tuple[Target, ...] = ()
    """As written; empty: the role's defaults (``expand.autoscaling``)."""
    triggers: tuple[Mapping[str, Any], ...] = ()
    keep_up_with: KeepUpWith | None = None
    behavior: Mapping[str, Any] | None = None
    fallback_replicas: int = 1
    """The count while a signal cannot be read (``fallbackReplicas``; default minReplicas, at least 1)."""

    keda: bool = False
    """KEDA scales the role (needs.scaled_by_keda)."""


KEDA_ONLY = ("signals", "keepUpWith")
"""What only a ScaledObject reads: refused with a HorizontalPodAutoscaler."""


def parse_autoscaling(raw: Mapping[str, Any] | None, path: str, where: str) -> Autoscaling | None:
    if raw is None:
        return None
    prometheus = raw.get("prometheus")
    credentials = (prometheus or {}).get("credentials") or {}
    keep_up = raw.get("keepUpWith")
    scaling = Autoscaling(
        min_replicas=needs.min_replicas(raw), max_replicas=raw["maxReplicas"],
        metrics=tuple(raw.get("metrics") or ()),
        prometheus=None if prometheus is None else PrometheusSource(
            server_address=prometheus["serverAddress"], credentials_secret=credentials.get("secretName"),
            credentials_mode=credentials.get("mode"), credentials_ca=credentials.get("ca", False),
            unsafe_ssl=prometheus.get("unsafeSsl", False)),
        signals=tuple(Target(Signal(signal["type"]), signal["target"]) for signal in raw.get("signals") or ()),
        triggers=tuple(raw.get("triggers") or ()),
        keep_up_with=None if keep_up is None else KeepUpWith(keep_up["role"], keep_up["ratio"]),
        behavior=raw.get("behavior"), keda=needs.scaled_by_keda(raw),
        fallback_replicas=raw.get("fallbackReplicas", max(needs.min_replicas(raw), 1)))
    if scaling.behavior is not None:
        check_behavior(scaling.behavior, f"{path}.behavior", where)
    if scaling.max_replicas < scaling.min_replicas:
        raise InvalidSpec(where, f"{path}.maxReplicas",
                          f"must be at least minReplicas ({scaling.min_replicas}), got {scaling.max_replicas}")
    if "fallbackReplicas" in raw and (prometheus is None or scaling.fallback_replicas > scaling.max_replicas):
        raise InvalidSpec(where, f"{path}.fallbackReplicas",
                          "is the count while KEDA cannot read the signals it queries: it needs prometheus"
                          if prometheus is None else
                          f"must be at most maxReplicas ({scaling.max_replicas}), got {scaling.fallback_replicas}")
    for index, target in enumerate(scaling.signals):
        if target.per_replica <= 0:
            raise InvalidSpec(where, f"{path}.signals[{index}].target",
                              f"must be greater than 0 (what one replica carries), got {show(target.per_replica)}")
    if scaling.keep_up_with is not None and scaling.keep_up_with.ratio <= 0:
        raise InvalidSpec(where, f"{path}.keepUpWith.ratio",
                          f"must be greater than 0, got {show(scaling.keep_up_with.ratio)}")
    if scaling.keda:
        if scaling.metrics:
            raise InvalidSpec(where, f"{path}.metrics",
                              "are a HorizontalPodAutoscaler's, and prometheus or triggers make KEDA scale the role "
                              "(its ScaledObject makes the HorizontalPodAutoscaler; two would fight over the "
                              "count): give signals or triggers, or remove prometheus and triggers")
    else:
        for field in KEDA_ONLY:
            if field in raw:
                raise InvalidSpec(where, f"{path}.{field}",
                                  "is read by KEDA, which scales the role only with prometheus (where to query the "
                                  "signals) or triggers; add autoscaling.prometheus.serverAddress")
        if scaling.min_replicas == 0:
            raise InvalidSpec(where, f"{path}.minReplicas",
                              "is 0, and a HorizontalPodAutoscaler scales no lower than 1 (KEDA takes a role to zero "
                              "and back): add autoscaling.prometheus.serverAddress, or set minReplicas to 1 or more")
    for index, metric in enumerate(scaling.metrics):
        source = METRIC_SOURCES[metric["type"]]
        if not isinstance(metric.get(source), Mapping):
            raise InvalidSpec(where, f"{path}.metrics[{index}].{source}",
                              f"is required (an object) for a metric of type {metric['type']}")
        for other in set(METRIC_SOURCES.values()) - {source}:
            if other in metric:
                raise InvalidSpec(where, f"{path}.metrics[{index}].{other}",
                                  f"must be absent from a metric of type {metric['type']}")
        _check_target(metric, f"{path}.metrics[{index}].{source}.target", where)
    ours = [*(str(signal) for signal in Signal), *([] if scaling.keep_up_with is None else
                                                   [keep_up_trigger_name(scaling.keep_up_with.role)])]
    for index, trigger in enumerate(scaling.triggers):
        if isinstance(trigger, Mapping) and trigger.get("name") in ours:
            raise InvalidSpec(where, f"{path}.triggers[{index}].name",
                              f"is {show(trigger['name'])}, a name the ScaledObject's own triggers take "
                              f"({', '.join(ours)}), and KEDA refuses two triggers of one name: rename it")
    return scaling


SELECT_POLICIES = ("Max", "Min", "Disabled")
POLICY_TYPES = ("Pods", "Percent")
MAX_STABILIZATION_SECONDS = 3600
MAX_POLICY_PERIOD_SECONDS = 1800
"""What the API server holds a HorizontalPodAutoscaler's behavior to, beyond its schema (autoscaling/v2)."""


def check_behavior(behavior: Mapping[str, Any], path: str, where: str) -> None:
    """Refuse a behavior the HorizontalPodAutoscaler (ours, or the one KEDA makes) would not take, at PATH: its
    schema as KEDA's ScaledObject CRD states it, and the rules the API server adds."""
    found = first_error(upstream_schema("keda.sh/v1alpha1", "ScaledObject", "spec", "advanced",
                                        "horizontalPodAutoscalerConfig", "behavior"), behavior)
    if found is not None:
        raise InvalidSpec(where, format_path([path, *found[0]]), found[1])
    for direction in ("scaleUp", "scaleDown"):
        rules = behavior.get(direction) or {}
        at = f"{path}.{direction}"
        if not 0 <= rules.get("stabilizationWindowSeconds", 0) <= MAX_STABILIZATION_SECONDS:
            raise InvalidSpec(where, f"{at}.stabilizationWindowSeconds",
                              f"must be 0 to {MAX_STABILIZATION_SECONDS}, got {rules['stabilizationWindowSeconds']}")
        if rules.get("selectPolicy", "Max") not in SELECT_POLICIES:
            raise InvalidSpec(where, f"{at}.selectPolicy",
                              f"must be one of {', '.join(SELECT_POLICIES)}, got {show(rules['selectPolicy'])}")
        for index, policy in enumerate(rules.get("policies") or ()):
            here = f"{at}.policies[{index}]"
            if policy["type"] not in POLICY_TYPES:
                raise InvalidSpec(where, f"{here}.type",
                                  f"must be one of {', '.join(POLICY_TYPES)}, got {show(policy['type'])}")
            if policy["value"] <= 0:
                raise InvalidSpec(where, f"{here}.value", f"must be greater than 0, got {policy['value']}")
            if not 0 < policy["periodSeconds"] <= MAX_POLICY_PERIOD_SECONDS:
                raise InvalidSpec(where, f"{here}.periodSeconds",
                                  f"must be 1 to {MAX_POLICY_PERIOD_SECONDS}, got {policy['periodSeconds']}")


def keep_up_trigger_name(role: str) -> str:
    return f"keep-up-with-{role}"


TARGET_VALUES = {"Utilization": "averageUtilization", "Value": "value", "AverageValue": "averageValue"}
"""A MetricTarget's types (autoscaling/v2) → the field each is read from."""
UTILIZATION_SOURCES = ("resource", "containerResource")


def _check_target(metric: Mapping[str, Any], path: str, where: str) -> None:
    """Refuse what the API server refuses of a MetricTarget: a type it does not know, a type without its
    value, Utilization of anything but a resource."""
    source = METRIC_SOURCES[metric["type"]]
    target = metric[source].get("target")
    if not isinstance(target, Mapping):
        raise InvalidSpec(where, path, "is required (an object: type, and its value)")
    kind = target.get("type")
    if kind not in TARGET_VALUES:
        raise InvalidSpec(where, f"{path}.type",
                          f"must be one of {', '.join(TARGET_VALUES)}, got {show(kind)}")
    if kind == "Utilization" and source not in UTILIZATION_SOURCES:
        raise InvalidSpec(where, f"{path}.type",
                          f"is Utilization, which only a Resource or ContainerResource metric has; give Value or "
                          f"AverageValue for a metric of type {metric['type']}")
    if TARGET_VALUES[kind] not in target:
        raise InvalidSpec(where, f"{path}.{TARGET_VALUES[kind]}", f"is required with target type {kind}")


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
