"""The typed InferenceService model, parsed and checked from a Kubernetes object."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from fusion_helm.base import needs
from fusion_helm.base.needs import GROUPED_LAYOUTS, NOT_SERVING, PREFILL_DECODE
from fusion_helm.errors import InvalidSpec, clip, show
from fusion_helm.model.bootstrap import VLLM_SERVING_COMMAND, MultiNode, parse_multinode
from fusion_helm.model.component_types import ComponentType, check_role_fields, is_disaggregated
from fusion_helm.model.engine import ServerCommand, server_command
from fusion_helm.model.exposure import (
    ClientService,
    Frontend,
    Tls,
    parse_client_service,
    parse_frontend,
    parse_tls,
)
from fusion_helm.model.gang import GangSchedule, parse_gang_schedule
from fusion_helm.model.metadata import check_dns_label, check_metadata
from fusion_helm.model.network import NetworkPolicies, parse_network_policies
from fusion_helm.model.parallelism import check_gpu_fit
from fusion_helm.model.scaling import (
    DISAGGREGATED_SET_ROLLOUT_DEFAULTS,
    LWS_ROLLOUT_DEFAULTS,
    Autoscaling,
    check_rollout,
    parse_autoscaling,
)
from fusion_helm.model.schema import api_source
from fusion_helm.model.topology import NetworkTopology, parse_network_topology
from fusion_helm.model.validation import check_pods_of, check_unique, validate_spec
from fusion_helm.model.weights import (
    Adapter,
    ModelCache,
    WeightsSource,
    check_fetchable,
    parse_adapters,
    parse_cache,
    parse_source,
)
from fusion_helm.records import EMPTY, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fusion_helm.model.monitoring import PodMonitoring
    from fusion_helm.model.router import Router

API_GROUP: str = api_source()["group"]
API_VERSION = f"{API_GROUP}/{api_source()['version']}"
KIND: str = api_source()["kind"]

DEFAULT_SERVING_COMMAND = VLLM_SERVING_COMMAND
TLS_SECRET_SUFFIX = "-serving-tls"
"""The Secret spec.tls.certManager's Certificate writes by default: ``<service>-serving-tls``, the
Certificate's own name (expand/names.certificate_name)."""


class RecoveryPolicy(StrEnum):
    ROLE_RESTART = "RoleRestart"
    """A failed pod recreates its whole replica (leader and workers)."""
    NONE = "None"
    """Only the failed pod restarts."""


class Layout(StrEnum):
    REPLICA = "replica"
    """One LeaderWorkerSet per role replica: each replica independent, a template change restarts them all."""
    ROLE = "role"
    """One LeaderWorkerSet per role, its replicas the LWS's groups: rolling updates and autoscaling."""
    DISAGGREGATED = "disaggregated"
    """One DisaggregatedSet, its roles the serving roles: a change to any role rolls every role to a new
    revision together (LWS's DisaggregatedSet controller), each role's replicas the groups of its
    revision's LeaderWorkerSets; autoscaling through role scalers."""

    @property
    def grouped(self) -> bool:
        """A role's replicas are the groups of LeaderWorkerSets it shares, all made from one template."""
        return self is not Layout.REPLICA

    @property
    def rollout_defaults(self) -> Mapping[str, int]:
        """The bounds of a role's rollout that it leaves out."""
        return DISAGGREGATED_SET_ROLLOUT_DEFAULTS if self is Layout.DISAGGREGATED else LWS_ROLLOUT_DEFAULTS


MAX_DISAGGREGATED_ROLES = 10
"""A DisaggregatedSet has 2 to 10 roles (its CRD's bounds)."""


@record
class Role:
    name: str
    component_type: ComponentType
    replicas: int
    node_count: int
    serving_command: tuple[str, ...]
    template: Mapping[str, Any]
    """The serving pod's: a replica's leader, which the bootstrap derives the workers from (custom:
    the workers have ``multinode.worker_template``, or the same)."""
    position: int
    """Index in ``spec.roles``, for error paths."""
    recovery_policy: RecoveryPolicy = RecoveryPolicy.ROLE_RESTART
    multinode: MultiNode | None = None
    """How a replica's nodes join (its bootstrap); None: a replica is one pod running ``template``. A
    taken-over LeaderWorkerSet's is custom (its templates as written), one node or more."""
    startup_policy: str | None = None
    """A taken-over LeaderWorkerSet's startupPolicy, carried over."""
    rollout: Mapping[str, Any] | None = None
    """Layout role: the LWS's rollingUpdateConfiguration (maxUnavailable, maxSurge, partition) as given."""
    autoscaling: Autoscaling | None = None
    """Layout role: the autoscaler's bounds; ``replicas`` is then its minimum, what the gang plans for."""
    network_config: Mapping[str, Any] | None = None
    """Layout role: a taken-over LeaderWorkerSet's networkConfig, carried over (it stays one LWS)."""
    volume_claims: Mapping[str, Any] = EMPTY
    """Layout role: a taken-over LeaderWorkerSet's volumeClaimTemplates and persistentVolumeClaimRetentionPolicy
    (leaderWorkerTemplate fields), carried over: its StatefulSets keep their names, so their claims do too."""
    network_topology: NetworkTopology | None = None
    """Its own ``networkTopology`` (mode none: opted out of the service's default); None: the default's."""
    service: ClientService | None = None
    """A Service over its serving pods."""
    disruption_budget: int | None = None
    """The replicas a voluntary disruption may take down at once (its PodDisruptionBudget); None: no budget."""
    weights: WeightsSource | None = None
    """Its ``model`` (or the service's); None: the container's command names the model, the engine fetches it."""
    adapters: tuple[Adapter, ...] = ()
    """Its model's LoRA adapters, fetched onto the cache."""

    @property
    def spans_nodes(self) -> bool:
        """A replica is several pods (nodes)."""
        return self.node_count >= 2

    @property
    def every_node_serves(self) -> bool:
        """Each pod of a replica serves requests (else only its leader does)."""
        data_parallel = self.multinode.data_parallel if self.multinode else None
        return data_parallel is not None and data_parallel.hybrid_load_balancing

    @property
    def path(self) -> str:
        return f"spec.roles[{self.position}]"

    @property
    def taken_over(self) -> bool:
        """Read from a LeaderWorkerSet (position -1), not from an InferenceService's roles."""
        return self.position < 0

    @property
    def template_path(self) -> str:
        return "spec.leaderWorkerTemplate.workerTemplate" if self.taken_over else f"{self.path}.template"

    @property
    def name_path(self) -> str:
        return "metadata.name" if self.taken_over else f"{self.path}.name"

    def server(self, where: str) -> ServerCommand:
        """The serving (first) container's command line, its engine the bootstrap's where one launches it
        (errors name document WHERE)."""
        command = server_command(self.template["spec"]["containers"][0], self.serving_command, where,
                                 f"{self.template_path}.spec.containers[0]")
        engine = self.multinode.bootstrap.engine if self.multinode is not None else None
        return command if engine is None or engine is command.engine else command.as_engine(engine)


@record
class InferenceService:
    name: str
    roles: tuple[Role, ...]
    """The serving roles (worker, prefiller, decoder), in spec order."""
    namespace: str | None = None
    labels: Mapping[str, str] = EMPTY
    scheduler_name: str | None = None
    queue: str | None = None
    """The PodGroup's Volcano queue."""
    priority_class_name: str | None = None
    """The PodGroup's and the serving pods' PriorityClass."""
    gang_schedule: GangSchedule | None = None
    """None when the spec omits it: the expansion then decides from the roles."""
    router: Router | None = None
    kind: str = KIND
    """The kind it was read from: an InferenceService, or a taken-over LeaderWorkerSet."""
    annotations: Mapping[str, str] = EMPTY
    """Carried to every generated object: a taken-over LeaderWorkerSet's own annotations."""
    layout: Layout = Layout.REPLICA
    monitoring: PodMonitoring | None = None
    """None: no PodMonitors."""
    service: ClientService | None = None
    """A Service over every serving role's serving pods."""
    frontends: tuple[Frontend, ...] = ()
    tls: Tls | None = None
    model_cache: ModelCache | None = None
    network_policies: NetworkPolicies | None = None
    """None: no NetworkPolicies (spec.networkPolicy.enabled false, or a taken-over LeaderWorkerSet's)."""

    @property
    def disaggregated(self) -> bool:
        return is_disaggregated(role.component_type for role in self.roles)

    @property
    def where(self) -> str:
        """How errors name this document."""
        return f"{self.kind} {self.name}"


def is_inference_service(obj: Mapping[str, Any]) -> bool:
    """True for any version of our kind; other versions are then refused by the parser."""
    api_version = obj.get("apiVersion")
    return (
        obj.get("kind") == KIND
        and isinstance(api_version, str)
        and api_version.split("/")[0] == API_GROUP
    )


def parse_inference_service(obj: Mapping[str, Any], where: str | None = None) -> InferenceService:
    """Validate an InferenceService object and return its model; InvalidSpec on bad input, naming the
    document as WHERE says (default: by kind and name)."""
    name, metadata, where = _identity(obj, where)
    spec = obj.get("spec")
    if spec is None:
        raise InvalidSpec(where, "spec", "is required")
    spec = validate_spec(spec, where)
    raws = spec["roles"]
    check_unique(where, "spec.roles", [raw["name"] for raw in raws], "name", "role name")
    for position, raw in enumerate(raws):
        check_role_fields(raw, f"spec.roles[{position}]", where)
    layout = Layout(needs.layout(spec))
    roles, model_cache = _parse_serving_roles(spec, layout, where)
    router = _parse_router(raws, bool(roles), where)
    frontends = _parse_frontends(raws, bool(roles), where)
    for role in roles:
        check_gpu_fit(role, where)
        _check_keep_up(role, roles, where)
    _check_layout(layout, roles, router, where)
    strategy = spec.get("schedulingStrategy") or {}
    return InferenceService(
        name=name,
        roles=roles,
        router=router,
        namespace=metadata.get("namespace"),
        labels=dict(metadata.get("labels") or {}),
        scheduler_name=strategy.get("schedulerName"),
        queue=strategy.get("queue"),
        priority_class_name=strategy.get("priorityClassName"),
        gang_schedule=parse_gang_schedule(spec.get("gangSchedule"), roles, where),
        layout=layout,
        monitoring=_parse_monitoring(spec.get("monitoring"), where),
        service=parse_client_service(spec.get("service"), "spec.service", where),
        frontends=frontends,
        tls=parse_tls(spec.get("tls"), f"{name}{TLS_SECRET_SUFFIX}", where),
        model_cache=model_cache,
        network_policies=parse_network_policies(spec.get("networkPolicy"), where),
    )


def _identity(obj: Mapping[str, Any], where: str | None) -> tuple[str, Mapping[str, Any], str]:
    """OBJ's name and checked metadata, and how errors name it (WHERE, else by kind and name)."""
    raw_metadata = obj.get("metadata")
    name = raw_metadata.get("name") if isinstance(raw_metadata, Mapping) else None
    where = where or (f"{KIND} {clip(name)}" if isinstance(name, str) and name else KIND)
    metadata = check_metadata(where, raw_metadata)
    if obj.get("apiVersion") != API_VERSION:
        raise InvalidSpec(where, "apiVersion", f"must be {API_VERSION}, got {show(obj.get('apiVersion'))}")
    if name is None or name == "":
        raise InvalidSpec(where, "metadata.name", "is required")
    check_dns_label(where, "metadata.name", name)
    return name, metadata, where


def _parse_serving_roles(spec: Mapping[str, Any], layout: Layout, where: str
                         ) -> tuple[tuple[Role, ...], ModelCache | None]:
    """The serving roles, each with its weights (its own ``model``, else the service's), and the model cache
    they are fetched onto."""
    model = spec.get("model")
    weights = None if model is None else (parse_source(model, "spec.model", where),
                                          parse_adapters(model, "spec.model", where))
    model_cache = parse_cache(spec.get("modelCache"), "spec.modelCache", where)
    roles = tuple(_parse_role(raw, position, where, layout, weights) for position, raw in enumerate(spec["roles"])
                  if raw["componentType"] not in NOT_SERVING)
    for role in roles:
        check_fetchable(role.weights, role.adapters, model_cache,
                        f"{role.path}.model" if "model" in spec["roles"][role.position] else "spec.model", where)
    return roles, model_cache


def _parse_frontends(raws: list[Mapping[str, Any]], serving: bool, where: str) -> tuple[Frontend, ...]:
    frontends = []
    for position, raw in enumerate(raws):
        if raw["componentType"] != ComponentType.FRONTEND:
            continue
        path = f"spec.roles[{position}]"
        if not serving:
            raise InvalidSpec(where, path, "a frontend needs a serving role to route to (worker, or prefiller and "
                                           "decoder)")
        frontend = parse_frontend(raw, position, where)
        check_pods_of(frontend.template, where, f"{path}.template")
        frontends.append(frontend)
    return tuple(frontends)


def _parse_monitoring(raw: Any, where: str) -> PodMonitoring | None:
    if not raw:
        return None
    from fusion_helm.model.monitoring import parse_monitoring  # most services have none: not loaded for them

    return parse_monitoring(raw, where)


def _check_layout(layout: Layout, roles: tuple[Role, ...], router: Router | None, where: str) -> None:
    """What a layout cannot serve: a DisaggregatedSet needs a prefill and a decode role (2 to 10 roles,
    all with replicas or none); the role layout cannot keep one request's prefill and decode on one
    revision while they roll apart, so a router pairing them is refused there."""
    kinds = {role.component_type for role in roles}
    if layout is Layout.DISAGGREGATED:
        if not kinds >= PREFILL_DECODE:
            missing = " and ".join(sorted(PREFILL_DECODE - kinds))
            raise InvalidSpec(where, "spec.layout",
                              f"disaggregated makes a DisaggregatedSet of prefill and decode roles, and the service "
                              f"has no {missing} role; use layout replica or role")
        if len(roles) > MAX_DISAGGREGATED_ROLES:
            raise InvalidSpec(where, roles[MAX_DISAGGREGATED_ROLES].path,
                              f"a DisaggregatedSet has at most {MAX_DISAGGREGATED_ROLES} roles; this is serving role "
                              f"{len(roles)}")
        fixed = [role for role in roles if role.autoscaling is None]
        empty = [role for role in fixed if role.replicas == 0]
        if empty and len(empty) < len(fixed):
            raise InvalidSpec(where, f"{empty[0].path}.replicas",
                              "is 0 while other roles have replicas: a DisaggregatedSet scales its roles to zero "
                              "together or not at all; set every role's replicas to 0, or none")
    elif layout is Layout.ROLE and router is not None and kinds >= PREFILL_DECODE:
        raise InvalidSpec(where, "spec.layout",
                          "role rolls each role's LeaderWorkerSet on its own, so while a change rolls, the router "
                          "would pair a prefill and a decode of different revisions; use layout disaggregated "
                          "(prefill and decode roll together as one revision, and the router keeps each request "
                          "on one) or replica (docs/layouts.md)")


def _check_keep_up(role: Role, roles: tuple[Role, ...], where: str) -> None:
    """``autoscaling.keepUpWith`` names another serving role."""
    keep_up = role.autoscaling.keep_up_with if role.autoscaling else None
    if keep_up is None:
        return
    others = [other.name for other in roles if other.name != role.name]
    if keep_up.role not in others:
        raise InvalidSpec(where, f"{role.path}.autoscaling.keepUpWith.role",
                          f"must name another serving role ({', '.join(others) or 'the service has none'}), "
                          f"got {show(keep_up.role)}")


def _parse_router(raws: list[Mapping[str, Any]], serving: bool, where: str) -> Router | None:
    positions = [position for position, raw in enumerate(raws) if raw["componentType"] == ComponentType.ROUTER]
    if not positions:
        return None
    if len(positions) > 1:
        raise InvalidSpec(where, f"spec.roles[{positions[1]}].componentType",
                          f"a service has at most one router (also spec.roles[{positions[0]}])")
    if not serving:
        raise InvalidSpec(where, f"spec.roles[{positions[0]}]",
                          "a router needs a serving role to route to (worker, or prefiller and decoder)")
    from fusion_helm.model.router import parse_router  # most services have none: not loaded for them

    disaggregated = is_disaggregated(raw["componentType"] for raw in raws)
    return parse_router(raws[positions[0]], positions[0], where, disaggregated)


def _parse_role(raw: Mapping[str, Any], position: int, where: str, layout: Layout,
                default_weights: tuple[WeightsSource, tuple[Adapter, ...]] | None) -> Role:
    path = f"spec.roles[{position}]"
    component_type = ComponentType(raw["componentType"])
    if "template" not in raw:
        raise InvalidSpec(where, f"{path}.template", f"is required for componentType {component_type}")
    if "spec" not in raw["template"]:
        raise InvalidSpec(where, f"{path}.template.spec", "is required")
    check_pods_of(raw["template"], where, f"{path}.template")
    for per_role_field in ("rollout", "autoscaling"):
        if per_role_field in raw and layout not in GROUPED_LAYOUTS:
            raise InvalidSpec(where, f"{path}.{per_role_field}",
                              f"needs spec.layout: role or disaggregated (a role's replicas are the groups of "
                              f"a LeaderWorkerSet, which roll and scale); layout {layout} makes one "
                              "LeaderWorkerSet per replica")
    autoscaling = parse_autoscaling(raw.get("autoscaling"), f"{path}.autoscaling", where)
    if autoscaling is not None and "replicas" in raw:
        raise InvalidSpec(where, f"{path}.replicas",
                          "is the autoscaler's while autoscaling is on (helm upgrade would otherwise reset it); "
                          "remove it and set autoscaling.minReplicas")
    replicas = needs.replicas(raw)
    rollout = raw.get("rollout")
    if rollout is not None:
        if layout is Layout.DISAGGREGATED and "partition" in rollout:
            raise InvalidSpec(where, f"{path}.rollout.partition",
                              "a DisaggregatedSet has no partition: its roles roll to a new revision together; "
                              "remove it (a canary needs layout role)")
        check_rollout(rollout, replicas, f"{path}.rollout", where, layout.rollout_defaults)
    multinode = raw.get("multinode") or {}
    node_count = needs.node_count(raw)
    joined = parse_multinode(multinode, node_count, raw["template"], f"{path}.multinode", where)
    if joined is not None and joined.worker_template is not None:
        if "spec" not in joined.worker_template:
            raise InvalidSpec(where, f"{path}.multinode.workerTemplate.spec", "is required")
        check_pods_of(joined.worker_template, where, f"{path}.multinode.workerTemplate")
    return Role(
        name=raw["name"],
        component_type=component_type,
        replicas=replicas,
        rollout=rollout,
        autoscaling=autoscaling,
        node_count=node_count,
        serving_command=tuple(multinode.get("servingCommand") or (
            joined.bootstrap.default_serving_command if joined else DEFAULT_SERVING_COMMAND)),
        multinode=joined,
        template=raw["template"],
        position=position,
        recovery_policy=RecoveryPolicy(raw.get("recoveryPolicy", RecoveryPolicy.ROLE_RESTART)),
        network_topology=parse_network_topology(raw.get("networkTopology"), f"{path}.networkTopology", where,
                                                opt_out=True),
        service=parse_client_service(raw.get("service"), f"{path}.service", where),
        disruption_budget=_disruption_budget(raw.get("disruptionBudget"), node_count),
        weights=weights[0] if (weights := _role_weights(raw, path, where, default_weights)) else None,
        adapters=weights[1] if weights else (),
    )


def _role_weights(raw: Mapping[str, Any], path: str, where: str,
                  default: tuple[WeightsSource, tuple[Adapter, ...]] | None
                  ) -> tuple[WeightsSource, tuple[Adapter, ...]] | None:
    """The role's own ``model``, else the service's."""
    if "model" not in raw:
        return default
    return parse_source(raw["model"], f"{path}.model", where), parse_adapters(raw["model"], f"{path}.model", where)


def _disruption_budget(raw: Mapping[str, Any] | None, node_count: int) -> int | None:
    """A multi-node role has a budget unless it opts out; a single-node one if it asks for one."""
    budget = raw or {}
    if not budget.get("enabled", node_count >= 2 or "maxUnavailableReplicas" in budget):
        return None
    return int(budget.get("maxUnavailableReplicas", 1))
