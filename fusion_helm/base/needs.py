"""What an InferenceService needs of its cluster, decided from its spec: whether it is gang-scheduled, where
it is placed, and which APIs its layout, router and monitors need served.

The one home of these rules. The expansion decides by them (expand/gang.py, expand/generations.py,
on the validated model), and so does the check Job before anything is applied (fusion_helm.programs.check,
on the spec the chart renders: Helm 3 never post-renders hooks, so the check cannot read what the
post-renderer wrote). Standard library only; a spec is read as the API server stores it, an absent field
as the schema's default. The spec is not validated here: a spec the post-renderer refuses never reaches
the cluster, whatever this module says of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from fusion_helm.base.kinds import (
    CERTIFICATE,
    DEFAULT_LAYOUT,
    DISAGGREGATED_SET,
    GATEWAY,
    HTTP_ROUTE,
    POD_MONITOR,
    ROLE_SCALER,
    SCALED_OBJECT,
    TRIGGER_AUTHENTICATION,
    Kind,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the post-renderer 2.3 ms to import, and it decides by these rules
    from collections.abc import Callable
    from typing import Any, TypeVar

    Topology = TypeVar("Topology")

ROUTER = "router"
"""The componentType of a router role."""
NOT_SERVING = frozenset({ROUTER, "frontend"})
"""The componentTypes of the roles in front of the serving roles (a router, a frontend); every other role
serves. (The chart's Go templates name the same two: charts/fusioninfer/templates/_helpers.tpl.)"""
PREFILL_DECODE = frozenset({"prefiller", "decoder"})
"""The componentTypes of a prefill/decode service."""
GROUPED_LAYOUTS = frozenset({"role", "disaggregated"})
"""The layouts whose replicas are the groups of LeaderWorkerSets a role shares: their roles roll
(``rollout``) and autoscale (``autoscaling``)."""

# gang scheduling


def gang_by_default(roles: Iterable[tuple[str, int]]) -> bool:
    """Without spec.gangSchedule, whether the service is gang-scheduled, from each serving role's
    (componentType, nodeCount): a multi-node or prefill/decode service is; a single-node monolithic one
    is not (its replicas need no other to serve)."""
    return any(nodes >= 2 or component_type in PREFILL_DECODE for component_type, nodes in roles)


def atomic_minimum(roles: Iterable[tuple[str, int]], level: str, min_role_replicas: Mapping[str, int]
                   ) -> dict[str, int]:
    """Role → how many of its first replicas Volcano places together, from each serving role's (name,
    replicas): at level group every replica, at level role its minRoleReplicas (1 by default)."""
    return {name: replicas if level == "group" else min(min_role_replicas.get(name, 1), replicas)
            for name, replicas in roles}


def single_pod_gang(minimum: Mapping[str, int], node_counts: Mapping[str, int]) -> bool:
    """Whether the atomic minimum is at most one pod and every replica one pod: no gang at all."""
    return sum(count * node_counts[name] for name, count in minimum.items()) <= 1 \
        and all(nodes < 2 for nodes in node_counts.values())


def others_have_policy(level: str, layout: str) -> bool:
    """Whether a role's replicas beyond its atomic minimum have a subGroupPolicy of their own (even while
    it holds none: scaling up then changes nothing): at level role, and where replicas are LWS groups,
    whose rollouts surge."""
    return level != "group" or layout in GROUPED_LAYOUTS


GANG_OFF = "gangSchedule.enable is false"
NO_GANG_BY_DEFAULT = "a single-node monolithic service is gang-scheduled only with spec.gangSchedule"
SINGLE_POD_GANG = "a single pod's gang is no gang (one single-node replica)"
"""Why a service has no PodGroup: what compose_gang answers with its None."""


def compose_gang(roles: Iterable[tuple[str, str, int, int]], enable: bool | None, level: str,
                 min_role_replicas: Mapping[str, int]) -> tuple[dict[str, int] | None, str]:
    """The one composition of the gang, from each serving role's (name, componentType, replicas, nodeCount)
    and spec.gangSchedule's enable (None where the spec omits gangSchedule), level and minRoleReplicas: the
    atomic minimum (role → replicas) of its PodGroup and "", or None and why it has none (GANG_OFF,
    NO_GANG_BY_DEFAULT, SINGLE_POD_GANG). The expansion (expand/gang.py plan_gang, on the typed model) and
    the check (gang_minimum, on the stored spec) both decide by it."""
    roles = list(roles)
    if enable is None and not gang_by_default((component_type, nodes) for _, component_type, _, nodes in roles):
        return None, NO_GANG_BY_DEFAULT
    if enable is False:
        return None, GANG_OFF
    minimum = atomic_minimum(((name, count) for name, _, count, _ in roles), level, min_role_replicas)
    if single_pod_gang(minimum, {name: nodes for name, _, _, nodes in roles}):
        return None, SINGLE_POD_GANG
    return minimum, ""


# the spec, read as stored


def layout(spec: Mapping[str, Any]) -> str:
    """The spec's layout, its default where it names none."""
    return str(spec.get("layout", DEFAULT_LAYOUT))


def serving_roles(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [role for role in spec.get("roles") or [] if role.get("componentType") not in NOT_SERVING]


def replicas(role: Mapping[str, Any]) -> int:
    """The count the spec gives a role: its replicas, or its autoscaler's minimum (what the gang plans
    for while an autoscaler owns the count)."""
    return int(role["replicas"]) if "replicas" in role else min_replicas(role.get("autoscaling") or {})


def min_replicas(autoscaling: Mapping[str, Any]) -> int:
    """A role's autoscaler's minimum (1 unless given)."""
    return int(autoscaling.get("minReplicas", 1))


def node_count(role: Mapping[str, Any]) -> int:
    return int((role.get("multinode") or {}).get("nodeCount", 1))


def gang_minimum(spec: Mapping[str, Any]) -> dict[str, int] | None:
    """The atomic minimum of a gang-scheduled service (role → replicas), or None when it has no PodGroup.
    Its Go twin, whether there is one: fusioninfer.gangScheduled (charts/fusioninfer/templates/_helpers.tpl;
    tests/chart/test_chart_decisions.py holds them together)."""
    gang = spec.get("gangSchedule")
    roles = [(role["name"], role.get("componentType", ""), replicas(role), node_count(role))
             for role in serving_roles(spec)]
    return compose_gang(roles, None if gang is None else bool(gang.get("enable", True)),
                        (gang or {}).get("level", "role"), (gang or {}).get("minRoleReplicas") or {})[0]


# placement


class Placement:
    """What a service's pods are placed by, each cluster-scoped and named by the spec: the Volcano queue of
    its PodGroup, its PriorityClass, and the network topology tiers its PodGroup bounds pods by."""

    __slots__ = ("priority_class", "queue", "tiers")

    def __init__(self, queue: str | None, priority_class: str | None, tiers: tuple[str, ...]) -> None:
        self.queue, self.priority_class, self.tiers = queue, priority_class, tiers

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Placement) and \
            (self.queue, self.priority_class, self.tiers) == (other.queue, other.priority_class, other.tiers)

    def __hash__(self) -> int:
        return hash((self.queue, self.priority_class, self.tiers))

    def __repr__(self) -> str:
        return f"Placement(queue={self.queue!r}, priority_class={self.priority_class!r}, tiers={self.tiers!r})"


def chosen_topology(own: Topology | None, default: Topology | None, mode: Callable[[Topology], str | None]
                    ) -> Topology | None:
    """Where each replica of a role must lie: its own networkTopology (OWN), else the service's default
    (DEFAULT); None where it opts out (mode none) or neither says. MODE reads a topology's mode, as stored
    here or typed in the expansion (expand/gang.py replica_topology), which both decide by this."""
    topology = own if own is not None else default
    return None if topology is None or mode(topology) == "none" else topology


def replica_topology(role: Mapping[str, Any], gang: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """ROLE's replicas' topology (chosen_topology), read from the stored spec."""
    return chosen_topology(role.get("networkTopology"), (gang or {}).get("networkTopology"),
                           lambda topology: topology.get("mode"))


def placement(spec: Mapping[str, Any]) -> Placement:
    """The queue (a gang-scheduled service's PodGroup's), the PriorityClass, and the tiers of the
    PodGroup's hard network topologies (the replicas' of each role with a subGroupPolicy, and the whole
    service's), each as text, sorted. Its Go twin: fusioninfer.placement (charts/fusioninfer/templates/
    _helpers.tpl; tests/chart/test_chart_decisions.py holds them together)."""
    strategy = spec.get("schedulingStrategy") or {}
    minimum = gang_minimum(spec)
    if minimum is None:
        return Placement(None, strategy.get("priorityClassName"), ())
    gang = spec.get("gangSchedule") or {}
    level = gang.get("level", "role")
    topologies = [replica_topology(role, gang) for role in serving_roles(spec)
                  if minimum[role["name"]] > 0 or others_have_policy(level, layout(spec))]
    topologies.append(gang.get("serviceNetworkTopology"))
    tiers = {str(topology.get("highestTierName", topology.get("highestTierAllowed")))
             for topology in topologies if topology and topology.get("mode", "hard") == "hard"}
    return Placement(strategy.get("queue"), strategy.get("priorityClassName"), tuple(sorted(tiers)))


# the APIs a service needs served


LAYOUT_APIS: Mapping[str, tuple[str, ...]] = {"disaggregated": (DISAGGREGATED_SET.resource, ROLE_SCALER.resource)}
"""The resources a layout needs beyond LWS's: in layout disaggregated the set's and its role scalers' (what an
autoscaler scales, and what the status reads)."""
MONITORING_APIS = (POD_MONITOR.resource,)
"""What a service with PodMonitors needs served."""
TLS_APIS = (CERTIFICATE.resource,)
"""What a service whose certificate cert-manager writes (spec.tls.certManager) needs served."""
KEDA_APIS = (SCALED_OBJECT.resource,)
KEDA_CREDENTIAL_APIS = (TRIGGER_AUTHENTICATION.resource,)
"""What a role KEDA scales needs served; and one whose Prometheus asks for credentials."""


class PickerReads:
    """What a picker generation reads: the InferencePool APIs it takes, the kind of its model objects,
    whether it watches them (and exits at start without their CRD) even where the router serves no models,
    and the kind of the model-name rewrites it applies (None: it applies none)."""

    __slots__ = ("model", "models_watched_always", "pool_apis", "rewrite")

    def __init__(self, pool_apis: tuple[str, ...], model: Kind, models_watched_always: bool,
                 rewrite: Kind | None = None) -> None:
        self.pool_apis, self.model, self.models_watched_always = pool_apis, model, models_watched_always
        self.rewrite = rewrite


GIE_V05 = "gie-v0.5"
GIE_V1 = "gie-v1.0"
GIE_V15 = "gie-v1.5"
LLM_D_ROUTER = "llm-d-router"
"""The endpoint picker release lines (docs/router.md): PICKERS' keys, the schema's enum of
endpointPicker.generation (make generate writes it from PICKERS)."""
POOL_V1 = "inference.networking.k8s.io/v1"
POOL_V1ALPHA2 = "inference.networking.x-k8s.io/v1alpha2"
DEFAULT_POOL_API = POOL_V1
_GIE_MODELS = "inference.networking.x-k8s.io"
_LLM_D_MODELS = "llm-d.ai"
PICKERS: Mapping[str, PickerReads] = {
    GIE_V05: PickerReads((POOL_V1ALPHA2,), Kind(_GIE_MODELS, "v1alpha2", "InferenceModel", "inferencemodels"),
                            models_watched_always=True),
    GIE_V1: PickerReads((POOL_V1, POOL_V1ALPHA2),
                            Kind(_GIE_MODELS, "v1alpha2", "InferenceObjective", "inferenceobjectives"),
                            models_watched_always=True),
    # v1 pools only (its pool reconciler and cache know api/v1's InferencePool alone); it asks discovery at
    # start whether InferenceObjective and InferenceModelRewrite are served and watches only those that are
    # (pkg/epp/server/controller_config.go), so it starts without them.
    GIE_V15: PickerReads((POOL_V1,), Kind(_GIE_MODELS, "v1alpha2", "InferenceObjective", "inferenceobjectives"),
                            models_watched_always=False,
                            rewrite=Kind(_GIE_MODELS, "v1alpha2", "InferenceModelRewrite", "inferencemodelrewrites")),
    # Its own group's InferenceObjective, which it reads whenever its CRDs are installed (the Inference
    # Extension's, the legacy group, only where they are not: it watches both), and starts without.
    # Rewrites likewise: its own group's (pkg/epp/controller/inferencemodelrewrite_reconciler.go).
    LLM_D_ROUTER: PickerReads(
        (POOL_V1,), Kind(_LLM_D_MODELS, "v1alpha2", "InferenceObjective", "inferenceobjectives"),
        models_watched_always=False,
        rewrite=Kind(_LLM_D_MODELS, "v1alpha2", "InferenceModelRewrite", "inferencemodelrewrites")),
}
"""Each endpoint picker generation (docs/router.md) by name."""
DEFAULT_PICKERS: Mapping[str, str] = {POOL_V1: LLM_D_ROUTER, POOL_V1ALPHA2: GIE_V05}
"""The generation a monolithic service's router runs unless it names one, by pool API: on v1 pools
llm-d-router, whose prefix-cache scorer sizes its index to each engine's KV cache (ahead of gie-v1.0's on
the serving benchmark, README) and which verifies the engines' certificates; gateways of the v1alpha2 era
run the v0.5 picker, whose InferenceModel CRD their clusters have."""
PREFILL_DECODE_PICKER = LLM_D_ROUTER
"""A prefill/decode service's unless its router names one: the line whose picker and sidecar are released
together."""
LAYOUT_PICKERS: Mapping[str, str] = {"disaggregated": LLM_D_ROUTER}
"""The generation a layout needs, whatever the pool API: layout disaggregated the one with the rollout
screener (a prefill and a decode of different revisions must never serve one request)."""


def picker_of(named: str | None, layout: str, prefill_decode: bool, pool_api: str) -> str | None:
    """The generation a router runs: the one it names, else its layout's, else prefill/decode's, else its
    pool API's default (None for a pool API there is none of). Whether that one can serve the router is the
    expansion's to check."""
    return named or LAYOUT_PICKERS.get(layout) or (PREFILL_DECODE_PICKER if prefill_decode
                                                   else DEFAULT_PICKERS.get(pool_api))


def router_resources(reads: PickerReads, pool_api: str, gateway: bool, models: bool, rewrites: bool = False
                     ) -> list[str]:
    """The resources (group/version/resource) a router needs served: its pool's, its model objects'
    (where the picker watches them even without models), its REWRITES', the HTTPRoute's, and with a GATEWAY
    the Gateway's."""
    watched = reads.models_watched_always or models
    rewritten = [reads.rewrite.resource] if rewrites and reads.rewrite is not None else []
    return [f"{pool_api}/inferencepools", *([reads.model.resource] if watched else []), *rewritten,
            HTTP_ROUTE.resource, *([GATEWAY.resource] if gateway else [])]


def canary_pools(spec: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(the pool API, the stable pool's name) each canary router splits from (``canaryOf.inferencePool``),
    which must exist before its route sends most of its model's requests there. Its Go twin:
    fusioninfer.canaryPools (charts/fusioninfer/templates/_helpers.tpl), which grants the check that read."""
    return [(router.get("poolAPIVersion", DEFAULT_POOL_API), router["canaryOf"]["inferencePool"])
            for router in spec.get("roles") or []
            if router.get("componentType") == ROUTER and isinstance(router.get("canaryOf"), Mapping)
            and router["canaryOf"].get("inferencePool")]


def router_apis(spec: Mapping[str, Any]) -> list[str]:
    """What the spec's router needs served (none without a router, or with a generation that cannot read
    its pool: the post-renderer refuses that one)."""
    prefill_decode = any(role.get("componentType") in PREFILL_DECODE for role in spec.get("roles") or [])
    apis: list[str] = []
    for router in (role for role in spec.get("roles") or [] if role.get("componentType") == ROUTER):
        pool_api = router.get("poolAPIVersion", DEFAULT_POOL_API)
        reads = PICKERS.get(picker_of((router.get("endpointPicker") or {}).get("generation"),
                                      layout(spec), prefill_decode, pool_api) or "")
        if reads is not None and pool_api in reads.pool_apis:
            apis += [api for api in router_resources(reads, pool_api, gateway=bool(router.get("gateway")),
                                                     models=bool(router.get("models")),
                                                     rewrites=bool(router.get("modelRewrites"))) if api not in apis]
    return apis


def layout_apis(spec: Mapping[str, Any]) -> tuple[str, ...]:
    return LAYOUT_APIS.get(layout(spec), ())


def monitoring_apis(spec: Mapping[str, Any]) -> tuple[str, ...]:
    return MONITORING_APIS if ((spec.get("monitoring") or {}).get("podMonitor") or {}).get("enabled") else ()


def scaled_by_keda(autoscaling: Mapping[str, Any]) -> bool:
    """A role's ``autoscaling`` has KEDA scale it (a ScaledObject): it names a Prometheus to query, or triggers
    of KEDA's; otherwise a HorizontalPodAutoscaler does (model.scaling reads this too)."""
    return autoscaling.get("prometheus") is not None or bool(autoscaling.get("triggers"))


def queries_prometheus(spec: Mapping[str, Any]) -> bool:
    """A serving role's autoscaler queries the service's signals in Prometheus (KEDA's ScaledObject, whose
    health the status reads). Its Go twin: fusioninfer.queriesPrometheus (charts/fusioninfer/templates/
    _helpers.tpl), which grants the status hook that read."""
    return any((role.get("autoscaling") or {}).get("prometheus") is not None for role in serving_roles(spec))


def autoscaling_apis(spec: Mapping[str, Any]) -> tuple[str, ...]:
    scalings = [role.get("autoscaling") or {} for role in serving_roles(spec)]
    keda = [scaling for scaling in scalings if scaled_by_keda(scaling)]
    if not keda:
        return ()
    credentials = any((scaling.get("prometheus") or {}).get("credentials") for scaling in keda)
    return KEDA_APIS + (KEDA_CREDENTIAL_APIS if credentials else ())


def tls_apis(spec: Mapping[str, Any]) -> tuple[str, ...]:
    return TLS_APIS if (spec.get("tls") or {}).get("certManager") else ()


FETCHED_SCHEMES = frozenset({"hf", "s3"})
"""Sources a fetch Job copies onto the cache volume (a pvc:// one is read where it is)."""


def fetches_weights(spec: Mapping[str, Any]) -> bool:
    """The service has fetch Jobs: a model cache, and a serving role whose source (its own ``model``, else
    the service's) is fetched (the expansion writes one Job per such source; the status reads them)."""
    if not spec.get("modelCache"):
        return False
    default = spec.get("model")
    for role in serving_roles(spec):
        source = role.get("model", default)
        if source is not None and str(source.get("source", "")).partition("://")[0] in FETCHED_SCHEMES:
            return True
    return False


def weight_claims(spec: Mapping[str, Any]) -> tuple[str, ...]:
    """The claims of the namespace the service's weights are read from, sorted: the model cache's where it
    names one, and each pvc:// source's. They must exist, or the pods wait for them forever (the chart grants
    the check reading exactly these: templates/_helpers.tpl fusioninfer.weightClaims). A source's credentials
    are not read here: a missing Secret stops the pod that needs it, which the status names."""
    claims = set()
    claim = (spec.get("modelCache") or {}).get("claimName")
    if claim:
        claims.add(str(claim))
    default = spec.get("model")
    for role in serving_roles(spec):
        source = role.get("model", default)
        scheme, _, location = str((source or {}).get("source", "")).partition("://")
        if scheme == "pvc":
            claims.add(location.split("/", 1)[0])
    return tuple(sorted(claims))
