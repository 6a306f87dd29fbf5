"""A role's autoscaler. It scales the role through a scale subresource whose selector is the role's leader
pods — its LeaderWorkerSet's (layout role), or its DisaggregatedSetRoleScaler's (layout disaggregated),
whose count the DisaggregatedSet controller gives the role in every revision — so a replica is added or
removed whole, all its nodes.

With ``autoscaling.prometheus`` (or ``triggers``) KEDA scales it: a ScaledObject whose triggers query the
signals the router and the engines report, as the service's PodMonitors have Prometheus scrape them, pinned
to the service's namespace, service and role; KEDA makes the HorizontalPodAutoscaler, and takes the role to
zero and back. Otherwise a HorizontalPodAutoscaler of ours. Never both: two would fight over the count.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from fusion_helm.base.kinds import (
    HORIZONTAL_POD_AUTOSCALER,
    LEADER_WORKER_SET,
    ROLE_SCALER,
    SCALED_OBJECT,
    TRIGGER_AUTHENTICATION,
)
from fusion_helm.base.labels import LABEL_ROLE_NAME, LABEL_SERVICE, LABEL_WORKER_INDEX
from fusion_helm.errors import InvalidSpec
from fusion_helm.expand.generations import GENERATIONS, Routing
from fusion_helm.expand.labelling import object_metadata, prometheus_label, role_labels
from fusion_helm.expand.names import role_lws_name, role_scaler_name
from fusion_helm.expand.pods import Pod
from fusion_helm.model import ComponentType, InferenceService, Layout, Role
from fusion_helm.model.engine_flags import ENGINE_METRICS, EngineMetric
from fusion_helm.model.scaling import (
    MAX_POLICY_PERIOD_SECONDS,
    METRIC_SOURCES,
    Autoscaling,
    Signal,
    Target,
    keep_up_trigger_name,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

QUEUEING = " or ".join(str(name) for name, generation in GENERATIONS.items() if generation.flow_control)
"""The picker generations with flow control, for the messages."""
ENGINE_SIGNALS = {Signal.ENGINE_QUEUE: EngineMetric.QUEUE, Signal.ENGINE_RUNNING: EngineMetric.RUNNING,
                  Signal.KV_CACHE: EngineMetric.KV_CACHE, Signal.PREFILL_BACKLOG: EngineMetric.PROMPT_TOKENS}
RATE_WINDOW = "1m"
"""prefill-backlog is a rate of prompt tokens over this window."""
ROUTED_DEFAULT = (Target(Signal.PICKER_QUEUE, 1), Target(Signal.PICKER_RUNNING, 8))
"""llm-d's pair: scale out as soon as requests queue at the picker, and on what each replica has in flight."""
UNROUTED_DEFAULT = (Target(Signal.ENGINE_QUEUE, 1),)
PREFILL_DEFAULT = (Target(Signal.PREFILL_BACKLOG, 4000),)
"""Prompt tokens per second one prefill replica takes in."""
POLLING_SECONDS = 5
"""How often KEDA asks Prometheus (its default is 30 s): a burst or a request at zero is seen within it."""
DEFAULT_COLD_START_SECONDS = 600
"""A serving container without a startupProbe: ten minutes to load and warm up."""
MAX_COLD_START_SECONDS = 86400
"""A day: no request waits longer for a replica (and a Gateway API duration holds at most 5 digits a unit)."""
WAKE_SLACK_SECONDS = 120
"""Beyond the cold start, what waking a role takes: Prometheus's scrape, KEDA's poll, scheduling."""
SCALE_DOWN_WINDOW_SECONDS = (60, 600)
"""The bounds of scale-down's stabilization window, which is the role's cold start: a replica is let go
only once demand has stayed lower for as long as it would take to bring it back."""
SCALE_UP_PODS = 4
DRAIN_SECONDS = 30
"""How long a replica being removed keeps serving after it is marked for deletion (its serving containers'
preStop sleep): the pickers drop it within a second or two, and what it already serves finishes."""
KILL_GRACE_SECONDS = 30
"""The engine's own shutdown after the drain, within the pod's termination grace period."""
FALLBACK_FAILURES = 12
"""KEDA's polls (POLLING_SECONDS apart, a minute in all) that fail in a row before the role goes to its
fallback count: longer than a new install takes to be first scraped, so that its roles at zero stay there."""
CREDENTIAL_KEYS = {"bearer": {"bearerToken": "token"}, "basic": {"username": "username", "password": "password"}}
"""KEDA's prometheus trigger parameters → the keys of the user's Secret, by mode."""


def draining(pod: Pod) -> Pod:
    """POD draining before it stops, for a role an autoscaler removes replicas of while they serve: its
    serving container (a multi-node replica's workers' too: the leader's engine needs their ranks to the
    end) sleeps DRAIN_SECONDS in its preStop, where the container has no preStop of its own, within a
    termination grace period long enough for the drain and the engine's own shutdown."""
    spec = pod.spec
    serving, *others = spec["containers"]
    lifecycle = serving.get("lifecycle") or {}
    if "preStop" not in lifecycle:
        serving = {**serving, "lifecycle": {**lifecycle, "preStop": {"sleep": {"seconds": DRAIN_SECONDS}}}}
    given = spec.get("terminationGracePeriodSeconds")
    grace = max(given if isinstance(given, int) and not isinstance(given, bool) else 30,
                DRAIN_SECONDS + KILL_GRACE_SECONDS)
    return pod.with_spec({**spec, "containers": [serving, *others], "terminationGracePeriodSeconds": grace})


def scale_target(service: InferenceService, role: Role) -> dict[str, str]:
    """What the role's autoscaler scales: apiVersion, kind and name."""
    if service.layout is Layout.DISAGGREGATED:
        return {"apiVersion": ROLE_SCALER.api_version, "kind": ROLE_SCALER.kind,
                "name": role_scaler_name(service.name, role.name)}
    return {"apiVersion": LEADER_WORKER_SET.api_version, "kind": LEADER_WORKER_SET.kind,
            "name": role_lws_name(service, role)}


def autoscalers(service: InferenceService, role: Role, routing: Routing | None) -> list[dict[str, Any]]:
    """The role's autoscaler (KEDA's ScaledObject and its TriggerAuthentication, or a HorizontalPodAutoscaler);
    none for a role with a fixed size."""
    scaling = role.autoscaling
    if scaling is None:
        return []
    if scaling.keda:
        return scaled_objects(service, role, scaling, routing)
    return [horizontal_pod_autoscaler(service, role, scaling)]


def horizontal_pod_autoscaler(service: InferenceService, role: Role, scaling: Autoscaling) -> dict[str, Any]:
    """Named as what it scales."""
    _check_utilization(service, role, scaling)
    target = scale_target(service, role)
    spec: dict[str, Any] = {
        "scaleTargetRef": target,
        "minReplicas": scaling.min_replicas,
        "maxReplicas": scaling.max_replicas,
    }
    if scaling.metrics:
        spec["metrics"] = [dict(metric) for metric in scaling.metrics]
    if scaling.behavior is not None:
        spec["behavior"] = dict(scaling.behavior)
    return {"apiVersion": HORIZONTAL_POD_AUTOSCALER.api_version, "kind": HORIZONTAL_POD_AUTOSCALER.kind,
            "metadata": object_metadata(service, target["name"], role_labels(service, role)),
            "spec": spec}


def _check_utilization(service: InferenceService, role: Role, scaling: Autoscaling) -> None:
    """A utilization is a share of what the pods request: the HorizontalPodAutoscaler cannot compute one for a
    pod whose containers do not all request the resource, and never acts. Its default (no metrics) is CPU's."""
    path = f"{role.path}.autoscaling"
    wanted = [(f"{path}.metrics[{index}].{METRIC_SOURCES[metric['type']]}.target.type", metric[
        METRIC_SOURCES[metric["type"]]].get("name")) for index, metric in enumerate(scaling.metrics)
        if metric["type"] == "Resource" and metric["resource"]["target"]["type"] == "Utilization"]
    if not scaling.metrics:
        wanted = [(f"{path}.metrics", "cpu")]
    containers = role.template["spec"]["containers"]
    for field, resource in wanted:
        lacking = [str(container.get("name")) for container in containers
                   if not any(resource in ((container.get("resources") or {}).get(kind) or {})
                              for kind in ("requests", "limits"))]
        if lacking:
            raise InvalidSpec(
                service.where, field,
                ("are left out, so the HorizontalPodAutoscaler follows its default, " if not scaling.metrics else
                 "is Utilization: ") + f"the pods' {resource} utilization, a share of the {resource} they request, "
                f"and container(s) {', '.join(lacking)} request none: it would never scale; follow the LLM signals "
                "(autoscaling.prometheus.serverAddress), give metrics, or request "
                f"{resource} in every container")


def signals(service: InferenceService, role: Role, routing: Routing | None) -> tuple[Target, ...]:
    """What ROLE's size follows: its own signals, else its defaults — a prefill role's prompt-token backlog;
    a role behind a picker that queues, the picker's queue and requests in flight; else its engines' queue."""
    scaling = role.autoscaling
    assert scaling is not None and scaling.keda
    if scaling.signals:
        for index, target in enumerate(scaling.signals):
            if target.signal.read_at_picker and (routing is None or not routing.generation.flow_control):
                raise InvalidSpec(service.where, f"{role.path}.autoscaling.signals[{index}].type",
                                  f"{target.signal} is read at the router's picker, and "
                                  + ("the service has no router" if routing is None else
                                     f"its picker generation has no flow control ({QUEUEING} has)")
                                  + "; follow an engine signal (engine-queue, engine-running, kv-cache)")
        return scaling.signals
    if scaling.prometheus is None:  # triggers alone
        return ()
    if role.component_type is ComponentType.PREFILLER:
        return PREFILL_DEFAULT
    return ROUTED_DEFAULT if routing is not None and routing.generation.flow_control else UNROUTED_DEFAULT


def queue_seconds(service: InferenceService, routing: Routing) -> int | None:
    """How long the router's picker holds a request in its queue, where an autoscaled role needs it to queue
    (it follows the queue, or stands at zero while idle); None: the picker does not queue."""
    if routing.generation.flow_control and holds_requests(service, routing):
        return request_ttl_seconds(service)
    return None


def holds_requests(service: InferenceService, routing: Routing) -> bool:
    """The router's picker must queue requests (flow control on): a role follows the picker's queue, or
    stands at zero while idle."""
    for role in service.roles:
        scaling = role.autoscaling
        if scaling is None or not scaling.keda:
            continue
        if scaling.min_replicas == 0 or any(target.signal is Signal.PICKER_QUEUE
                                            for target in signals(service, role, routing)):
            return True
    return False


def request_ttl_seconds(service: InferenceService) -> int:
    """How long the picker holds a request: the longest a KEDA-scaled role takes to wake and start."""
    return max((cold_start_seconds(role) + WAKE_SLACK_SECONDS for role in service.roles
                if role.autoscaling is not None and role.autoscaling.keda), default=WAKE_SLACK_SECONDS)


def cold_start_seconds(role: Role) -> int:
    """How long a new replica may take to serve: its serving container's startup probe budget (the kubelet's
    defaults where it leaves them out), else DEFAULT_COLD_START_SECONDS; at most MAX_COLD_START_SECONDS."""
    probe = role.template["spec"]["containers"][0].get("startupProbe")
    if not isinstance(probe, Mapping):
        return DEFAULT_COLD_START_SECONDS

    def field(name: str, default: int) -> int:
        value = probe.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default

    budget = field("initialDelaySeconds", 0) + field("periodSeconds", 10) * field("failureThreshold", 3)
    return min(budget, MAX_COLD_START_SECONDS)


def scaled_objects(service: InferenceService, role: Role, scaling: Autoscaling, routing: Routing | None
                   ) -> list[dict[str, Any]]:
    target = scale_target(service, role)
    name = target["name"]
    labels = role_labels(service, role)
    _check_zero(service, role, scaling, routing)
    objects: list[dict[str, Any]] = []
    authentication = None
    prometheus = scaling.prometheus
    if prometheus is not None and prometheus.credentials_secret is not None:
        authentication = {"name": name}
        objects.append(trigger_authentication(service, name, labels, scaling))
    triggers = [_prometheus_trigger(service, role, signal, routing, authentication)
                for signal in signals(service, role, routing)]
    if scaling.keep_up_with is not None:
        triggers.append(_keep_up_trigger(service, role, scaling))
    triggers += [dict(trigger) for trigger in scaling.triggers]
    cold_start = cold_start_seconds(role)
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": target["apiVersion"], "kind": target["kind"], "name": name},
        "minReplicaCount": scaling.min_replicas,
        "maxReplicaCount": scaling.max_replicas,
        "pollingInterval": POLLING_SECONDS,
        # Back to zero no sooner than a replica takes to start: each wake costs a cold start.
        "cooldownPeriod": max(300, cold_start),
        "advanced": {"horizontalPodAutoscalerConfig": {"behavior": _behavior(scaling, cold_start)}},
        "triggers": triggers,
    }
    if prometheus is not None and triggers:
        # A signal KEDA cannot read is an error (its queries never read "nothing" as 0), and this the count
        # it then keeps, waking a role at zero to it (KEDA 2.19 and later).
        spec["fallback"] = {"failureThreshold": FALLBACK_FAILURES, "replicas": scaling.fallback_replicas}
    objects.insert(0, {"apiVersion": SCALED_OBJECT.api_version, "kind": SCALED_OBJECT.kind,
                       "metadata": object_metadata(service, name, labels), "spec": spec})
    return objects


def _check_zero(service: InferenceService, role: Role, scaling: Autoscaling, routing: Routing | None) -> None:
    """A role at zero needs something to hold its requests meanwhile, and a signal to wake it."""
    if scaling.min_replicas > 0:
        return
    path = f"{role.path}.autoscaling.minReplicas"
    if role.component_type is ComponentType.PREFILLER:
        if scaling.keep_up_with is None and routing is not None:
            raise InvalidSpec(service.where, path,
                              "is 0 on a prefill role that follows no decoder: decodes would wait for a prefill "
                              "that never wakes; add autoscaling.keepUpWith (the decoder role, a ratio)")
        if routing is not None:
            return
    if routing is None:
        raise InvalidSpec(service.where, path,
                          "is 0, and nothing would hold the requests that arrive while the role has no replica: "
                          f"add a router role (the {QUEUEING} picker queues them until a replica is ready), "
                          "or set minReplicas to 1")
    if not routing.generation.flow_control:
        raise InvalidSpec(service.where, path,
                          "is 0, and this picker generation cannot hold requests while the role has no replica; "
                          f"use endpointPicker.generation {QUEUEING} (its flow control queues them), or set "
                          "minReplicas to 1")
    if scaling.signals and not any(target.signal is Signal.PICKER_QUEUE for target in scaling.signals) \
            and scaling.keep_up_with is None:
        raise InvalidSpec(service.where, f"{role.path}.autoscaling.signals",
                          "have no picker-queue signal, which wakes a role at zero (its engines report nothing "
                          "while it has none); add {type: picker-queue, target: 1}")


def _prometheus_trigger(service: InferenceService, role: Role, target: Target, routing: Routing | None,
                        authentication: Mapping[str, str] | None) -> dict[str, Any]:
    scaling = role.autoscaling
    assert scaling is not None and scaling.prometheus is not None
    if service.namespace is None:
        raise InvalidSpec(service.where, "metadata.namespace",
                          f"is required where {role.path}.autoscaling queries Prometheus: the query pins the "
                          "service's metrics by its namespace (the chart sets it to the release's)")
    if service.monitoring is None:
        raise InvalidSpec(service.where, f"{role.path}.autoscaling.prometheus",
                          "queries what spec.monitoring's PodMonitors have Prometheus scrape, and the service has "
                          "none: set spec.monitoring.podMonitor.enabled, or give autoscaling.triggers instead")
    metadata = {
        "serverAddress": scaling.prometheus.server_address,
        # 0 where the service is scraped and the signal has no series yet (a role at zero reports none);
        # nothing - an error KEDA acts on - where none of the service's pods is scraped at all.
        "query": f"{_query(service, role, target.signal, routing)} or on() (0 * max({_scraped(service)}))",
        "threshold": _number(target.per_replica),
        # Any request waiting or running wakes a role at zero, and keeps it up.
        "activationThreshold": "0",
        "ignoreNullValues": "false",
    }
    if scaling.prometheus.unsafe_ssl:
        metadata["unsafeSsl"] = "true"
    trigger: dict[str, Any] = {"type": "prometheus", "name": str(target.signal), "metricType": "AverageValue",
                               "metadata": metadata}
    if authentication is not None:
        metadata["authModes"] = scaling.prometheus.credentials_mode or ""
        trigger["authenticationRef"] = dict(authentication)
    return trigger


def _scraped(service: InferenceService) -> str:
    """The scrape targets of the service's pods, pickers and engines alike: Prometheus's ``up`` series of
    each target it scrapes."""
    return f"up{_selector(service, None)}"


def _query(service: InferenceService, role: Role, signal: Signal, routing: Routing | None) -> str:
    """The signal summed over the pods that report it — the router's pickers, or the role's engines —
    selected by the labels the PodMonitors copy from the pods (podTargetLabels) and the namespace."""
    if signal.read_at_picker:
        assert routing is not None
        metrics = routing.generation.picker_metrics
        assert metrics is not None, "signals() refuses a picker signal without flow control"
        return f"sum({metrics[signal]}{_selector(service, routing.router.name)})"
    engine = role.server(service.where).engine
    metric = ENGINE_METRICS[engine].get(ENGINE_SIGNALS[signal]) if engine is not None else None
    if metric is None:
        raise InvalidSpec(service.where, f"{role.path}.autoscaling.signals",
                          f"{signal} is read from the engines' metrics, and the role runs neither vLLM nor SGLang, "
                          "whose metric names the signals know: follow the picker's signals, or give "
                          "autoscaling.triggers")
    if signal is Signal.PREFILL_BACKLOG:
        return f"sum(rate({metric}{_selector(service, role.name)}[{RATE_WINDOW}]))"
    return f"sum({metric}{_selector(service, role.name)})"


def _selector(service: InferenceService, role_name: str | None) -> str:
    """The service's series (a role's, given ROLE_NAME), by the labels the PodMonitors copy from the pods."""
    assert service.namespace is not None
    labels = {"namespace": service.namespace, prometheus_label(LABEL_SERVICE): service.name}
    if role_name is not None:
        labels[prometheus_label(LABEL_ROLE_NAME)] = role_name
    # PromQL reads a double-quoted string with Go's escapes, which JSON's are a subset of.
    return "{" + ",".join(f"{key}={json.dumps(value)}" for key, value in labels.items()) + "}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _keep_up_trigger(service: InferenceService, role: Role, scaling: Autoscaling) -> dict[str, Any]:
    """KEDA counts the other role's leader pods (one per replica) and asks for one replica per 1/ratio of
    them, rounded up."""
    assert scaling.keep_up_with is not None
    other = scaling.keep_up_with.role
    selector = {LABEL_SERVICE: service.name, LABEL_ROLE_NAME: other, LABEL_WORKER_INDEX: "0"}
    return {"type": "kubernetes-workload", "name": keep_up_trigger_name(other),
            "metadata": {"podSelector": ",".join(f"{key}={value}" for key, value in selector.items()),
                         "value": _number(1 / scaling.keep_up_with.ratio), "activationValue": "0"}}


def _behavior(scaling: Autoscaling, cold_start: int) -> dict[str, Any]:
    """The user's, else: up by at most doubling (or SCALE_UP_PODS) per cold start, so the replicas still
    starting are not asked for again while the queue they will drain is still long; down to the highest
    demand of the last cold start, at the HorizontalPodAutoscaler's own pace (the window already keeps
    every replica that demand could need back sooner than it would start; stepping slower only pays for
    idle accelerators)."""
    if scaling.behavior is not None:
        return dict(scaling.behavior)
    period = min(max(cold_start, 15), MAX_POLICY_PERIOD_SECONDS)
    shortest, longest = SCALE_DOWN_WINDOW_SECONDS
    return {"scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                        "policies": [{"type": "Percent", "value": 100, "periodSeconds": period},
                                     {"type": "Pods", "value": SCALE_UP_PODS, "periodSeconds": period}]},
            "scaleDown": {"stabilizationWindowSeconds": min(max(cold_start, shortest), longest),
                          "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}}


def trigger_authentication(service: InferenceService, name: str, labels: dict[str, str], scaling: Autoscaling
                           ) -> dict[str, Any]:
    """The user's Secret, read by KEDA for each query: the keys its mode needs, and the CA if it has one."""
    prometheus = scaling.prometheus
    assert prometheus is not None and prometheus.credentials_secret is not None
    keys = dict(CREDENTIAL_KEYS[prometheus.credentials_mode or "bearer"])
    if prometheus.credentials_ca:
        keys["ca"] = "ca"
    refs = [{"parameter": parameter, "name": prometheus.credentials_secret, "key": key}
            for parameter, key in keys.items()]
    return {"apiVersion": TRIGGER_AUTHENTICATION.api_version, "kind": TRIGGER_AUTHENTICATION.kind,
            "metadata": object_metadata(service, name, labels), "spec": {"secretTargetRef": refs}}
