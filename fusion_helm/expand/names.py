"""Names of generated objects, and the limits their names must respect."""

from __future__ import annotations

from fusion_helm.base.kinds import LEADER_WORKER_SET
from fusion_helm.base.labels import LABEL_ROLE_NAME
from fusion_helm.errors import InvalidSpec
from fusion_helm.model import InferenceService, Layout, Role
from fusion_helm.model.inference_service import TLS_SECRET_SUFFIX
from fusion_helm.model.scaling import LWS_ROLLOUT_DEFAULTS, scaled

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from fusion_helm.model import Router
    from fusion_helm.model.exposure import ClientService, Frontend

MAX_NAME = 63
"""Pod names are host names and LWS names are label values: both DNS labels."""
MAX_STATEFULSET_NAME = 52
"""A StatefulSet's pods carry ``controller-revision-hash: <name>-<10-char hash>``, a label value."""

REVISION_LENGTH = 8
"""A DisaggregatedSet revision: the first 8 hex digits of a hash of its roles' templates."""
REVISION_PLACEHOLDER = "<revision>"
"""Stands for the revision in the names of a DisaggregatedSet's LeaderWorkerSets, which its controller
computes from the templates as the API server stores them."""
SERVICE_SUFFIX = "-prv"
"""The DisaggregatedSet controller's headless Service for a revision's LeaderWorkerSet: ``<lws>-prv``."""
SLICE = 0
"""A DisaggregatedSet of ours is one slice (its roles' replicas are the service's)."""



def lws_name(service: str, role: str, index: int) -> str:
    """Layout replica: the replica's LeaderWorkerSet."""
    return f"{service}-{role}-{index}"


def role_lws_name(service: InferenceService, role: Role) -> str:
    """Layout role: the role's one LeaderWorkerSet; a taken-over LeaderWorkerSet keeps its own name."""
    return service.name if role.taken_over else f"{service.name}-{role.name}"


def revision_lws_name(disaggregated_set: str, role: str, revision: str = REVISION_PLACEHOLDER) -> str:
    """Layout disaggregated: the role's LeaderWorkerSet of one revision, as the DisaggregatedSet
    controller names it: ``<set>-<slice>-<revision>-<role>``."""
    return f"{disaggregated_set}-{SLICE}-{revision}-{role}"


def role_scaler_name(disaggregated_set: str, role: str) -> str:
    """The DisaggregatedSetRoleScaler the controller makes for an autoscaled role: ``<set>-<role>``."""
    return f"{disaggregated_set}-{role}"


def pod_name(lws: str, group: int, worker: int = 0) -> str:
    """LWS ``x`` names group ``g``'s leader pod ``x-g`` and its workers ``x-g-1`` … ``x-g-(size-1)``."""
    return f"{lws}-{group}" + (f"-{worker}" if worker else "")


def task_name(role: str, index: int) -> str:
    """The replica's task (``volcano.sh/task-spec``): Volcano groups a job's pods by it (e.g. fit errors)."""
    return f"{role}-{index}"


def most_groups(service: InferenceService, role: Role) -> int:
    """The most groups one LeaderWorkerSet of the role can have at once: its autoscaler's maximum, and in
    layout role the surge groups of a rollout (a DisaggregatedSet surges with the new revision's own
    LeaderWorkerSet, never beyond the role's count in one)."""
    replicas = role.autoscaling.max_replicas if role.autoscaling else role.replicas
    if service.layout is Layout.DISAGGREGATED:
        return replicas
    surge = {**LWS_ROLLOUT_DEFAULTS, **(role.rollout or {})}["maxSurge"]
    return replicas + scaled(surge, replicas, up=True)


def router_name(service: str, router: str) -> str:
    """The InferencePool, Gateway, HTTPRoute (and model objects' prefix) of a router."""
    return f"{service}-{router}"


def picker_name(service: str, router: str) -> str:
    """The endpoint picker's Deployment, Service, ConfigMap, ServiceAccount, Role and RoleBinding."""
    return f"{service}-{router}-epp"


def pd_sidecar_name(service: str, router: str) -> str:
    """The Role and RoleBinding that let the prefill/decode sidecars read their pool."""
    return f"{service}-{router}-pd-sidecar"


def monitor_name(service: str, role: str) -> str:
    """A serving role's PodMonitor."""
    return f"{service}-{role}"


def disruption_budget_name(service: str, role: str) -> str:
    """A serving role's PodDisruptionBudget."""
    return f"{service}-{role}"


SERVING_SUFFIX = "-serving"


def role_service_name(service: InferenceService, role: Role) -> str:
    """The Service over a role's serving pods (``roles[].service``): the name it gives, else not
    ``<service>-<role>``, the headless Service the LWS controller makes for a role's LeaderWorkerSet in
    layout role."""
    assert role.service is not None
    return role.service.name or f"{service.name}-{role.name}{SERVING_SUFFIX}"


def service_service_name(service: InferenceService) -> str:
    """The Service over every serving role's serving pods (``spec.service``): the name it gives, else this."""
    assert service.service is not None
    return service.service.name or f"{service.name}{SERVING_SUFFIX}"


def frontend_service_name(service: InferenceService, frontend: Frontend) -> str:
    """A frontend role's Service: the name it gives, else its Deployment's."""
    return frontend.service.name or frontend_name(service.name, frontend.name)


def certificate_name(service: str) -> str:
    """spec.tls.certManager's Certificate (and, by default, the Secret it writes)."""
    return f"{service}{TLS_SECRET_SUFFIX}"


def frontend_name(service: str, frontend: str) -> str:
    """A frontend role's Deployment, Service, ServiceAccount, Role and RoleBinding."""
    return f"{service}-{frontend}"


def cache_claim_name(service: InferenceService) -> str:
    """The model cache's PersistentVolumeClaim: the one it names, else the service's own."""
    cache = service.model_cache
    assert cache is not None
    return cache.claim_name or f"{service.name}-model-cache"


def fetch_program_name(service: str) -> str:
    """The ConfigMap holding the fetch Jobs' program."""
    return f"{service}-fetch"


def fetch_job_name(service: str, digest: str) -> str:
    """A fetch Job, named for a digest of what it runs (a Job's pod template cannot change)."""
    return f"{service}-fetch-{digest}"


def role_policy_name(service: str, role: str) -> str:
    """The NetworkPolicy of a serving role's pods."""
    return f"{service}-{role}"


def group_policy_name(service: str, role: str, index: int) -> str:
    """The NetworkPolicy of one replica group of a multi-node role: its pods reach each other."""
    return f"{service}-{role}-group-{index}"


def fetch_policy_name(service: str) -> str:
    """The NetworkPolicy of the fetch Jobs' pods."""
    return f"{service}-fetch"


FETCH_DIGEST_LENGTH = 10
"""The hex digits of a fetch Job's digest."""


def served_model_name(service: str, model: str) -> str:
    """A router's served model entry's InferenceModel or InferenceObjective."""
    return f"{service}-{model}"


def adapter_model_name(service: str, model: str, adapter_digest: str) -> str:
    """The InferenceModel of an adapter served beside a model entry, named for a digest of the adapter's name
    (which may hold what an object's name may not)."""
    return f"{service}-{model}-{adapter_digest}"


def check_names(service: InferenceService) -> None:
    """Refuse, before anything is made, a service some object of which could not be named: too long, not
    starting with a letter where the name is a Service's or a host's, or another object's name."""
    for role in service.roles:
        check_name_lengths(service, role)
    check_collisions(service)
    check_service_names(service)
    if service.router is not None:
        check_router_names(service, service.router)
    if service.model_cache is not None:
        job = fetch_job_name(service.name, "0" * FETCH_DIGEST_LENGTH)
        if len(job) > MAX_NAME:
            raise InvalidSpec(service.where, "metadata.name",
                              f"fetch Job name {job!r} would be {len(job)} characters, over the limit of {MAX_NAME} "
                              "(a Job's pods carry its name as a label value); shorten the InferenceService name")


def check_unique_names(service: InferenceService, objects: Iterable[Mapping[str, Any]]) -> None:
    """Refuse two objects of one kind with one name: the second would replace the first. Named by the role
    that makes the second (its name), else the service's name."""
    made: dict[tuple[str, str], Mapping[str, Any]] = {}
    for obj in objects:
        key = (obj["kind"], obj["metadata"]["name"])
        first = made.setdefault(key, obj)
        if first is not obj:
            raise InvalidSpec(service.where, _maker_path(service, obj),
                              f"makes the {key[0]} {key[1]!r}, and so does {_maker(first)}; rename one of them")


def _role_of(obj: Mapping[str, Any]) -> str | None:
    return (obj["metadata"].get("labels") or {}).get(LABEL_ROLE_NAME)


def _maker(obj: Mapping[str, Any]) -> str:
    role = _role_of(obj)
    return "the service" if role is None else f"role {role!r}"


def _maker_path(service: InferenceService, obj: Mapping[str, Any]) -> str:
    role = _role_of(obj)
    paths = {role.name: f"{role.path}.name" for role in service.roles}
    paths.update({frontend.name: f"{frontend.path}.name" for frontend in service.frontends})
    if service.router is not None:
        paths[service.router.name] = f"{service.router.path}.name"
    return paths.get(role or "", "metadata.name")


def check_service_names(service: InferenceService) -> None:
    """Refuse a Service of ours whose name is not a DNS-1035 label (it starts with a letter) or that another
    Service of the release would have too: a role's, the service's, a frontend's, a picker's, or the headless
    Service the LWS controller makes for a LeaderWorkerSet of layout role."""
    names: dict[str, str] = {}

    def claim(name: str, path: str, what: str) -> None:
        if len(name) > MAX_NAME or not name[0].isalpha():
            raise InvalidSpec(service.where, path,
                              f"{what} {name!r} must start with a letter and have at most {MAX_NAME} characters, "
                              "as a Service name does; rename the InferenceService or the role")
        other = names.setdefault(name, what)
        if other != what:
            raise InvalidSpec(service.where, path, f"{what} {name!r} is also the name of {other}; rename a role")

    for role in service.roles:
        if service.layout is Layout.ROLE:
            names.setdefault(role_lws_name(service, role), f"the headless Service of role {role.name!r}'s "
                                                            "LeaderWorkerSet")
    if service.router is not None:
        names.setdefault(picker_name(service.name, service.router.name), "the endpoint picker's Service")
    for role in service.roles:
        if role.service is not None:
            claim(role_service_name(service, role), _name_path(role.service), f"role {role.name!r}'s Service")
    if service.service is not None:
        claim(service_service_name(service), _name_path(service.service), "the service's Service")
    for frontend in service.frontends:
        claim(frontend_name(service.name, frontend.name), f"{frontend.path}.name",
              f"frontend {frontend.name!r}'s Deployment")
        if frontend.service.name:
            claim(frontend.service.name, _name_path(frontend.service), f"frontend {frontend.name!r}'s Service")


def _name_path(wanted: ClientService) -> str:
    """The field a Service's name comes from: its own name where given, else its whole entry's."""
    return f"{wanted.path}.name" if wanted.name else wanted.path


def check_name_lengths(service: InferenceService, role: Role) -> None:
    """Refuse a role whose LeaderWorkerSet, Service, StatefulSet or pod names would be too long, or
    whose LeaderWorkerSets' headless Services could not be named so.

    LWS ``x`` makes a headless Service ``x`` (a DNS-1035 label: it starts with a letter), a leader
    StatefulSet ``x``, leader pods ``x-<group>``, and for multi-node replicas a worker StatefulSet
    ``x-<group>`` per group with pods ``x-<group>-1`` … ``x-<group>-<size-1>``. Layout replica: one
    group per LWS, the last replica's names are the longest; layout role: one LWS, its last possible
    group's are; layout disaggregated: one LWS per revision, named with its 8-digit revision.
    """
    if service.layout is Layout.REPLICA and role.replicas == 0:
        return
    if service.layout is Layout.ROLE:
        lws, last_group = role_lws_name(service, role), most_groups(service, role) - 1
    elif service.layout is Layout.DISAGGREGATED:
        lws = revision_lws_name(service.name, role.name, "0" * REVISION_LENGTH)
        last_group = most_groups(service, role) - 1
    else:
        lws, last_group = lws_name(service.name, role.name, role.replicas - 1), 0
    if not lws[0].isalpha():
        raise InvalidSpec(service.where, "metadata.name",
                          f"must start with a letter: the LWS controller names the headless Service of "
                          f"LeaderWorkerSet {lws!r} after it, and a Service name starts with a letter")
    # (Layout disaggregated: the set's Service x-prv is a DNS label whenever the StatefulSet name fits.)
    names = [(lws, LEADER_WORKER_SET.kind, MAX_NAME), (lws, "StatefulSet", MAX_STATEFULSET_NAME)]
    if last_group >= 0:
        names.append((pod_name(lws, last_group), "pod", MAX_NAME))
        if role.spans_nodes:
            names += [(pod_name(lws, last_group), "worker StatefulSet", MAX_STATEFULSET_NAME),
                      (pod_name(lws, last_group, role.node_count - 1), "worker pod", MAX_NAME)]
    for name, what, limit in names:
        if len(name) > limit:
            raise InvalidSpec(
                service.where, role.name_path,
                f"{what} name {name!r} would be {len(name)} characters, over the limit of {limit}; "
                "shorten the InferenceService or role name",
            )


def check_collisions(service: InferenceService) -> None:
    """Refuse two roles whose StatefulSets would share a name: role ``a``'s replica 1 worker StatefulSet
    ``svc-a-1-0`` is role ``a-1``'s replica 0 leader StatefulSet. (LeaderWorkerSet and pod names never
    collide across roles: their numeric suffixes differ in number.)"""
    if service.layout.grouped:
        _check_grouped_collisions(service)
        return
    made: dict[str, tuple[Role, int, str]] = {}
    for role in _roles_whose_names_can_meet(service.roles):
        for index in range(role.replicas):
            lws = lws_name(service.name, role.name, index)
            names = [(lws, "leader StatefulSet")]
            if role.spans_nodes:
                names.append((f"{lws}-0", "worker StatefulSet"))
            for name, what in names:
                other = made.setdefault(name, (role, index, what))
                if other[0] is not role:
                    first, first_index, first_what = other
                    raise InvalidSpec(service.where, role.name_path,
                                      f"role {role.name!r} replica {index}'s {what} {name!r} is also role "
                                      f"{first.name!r} replica {first_index}'s {first_what} ({first.name_path}); "
                                      "rename one of the roles")


def _check_grouped_collisions(service: InferenceService) -> None:
    """Layouts role and disaggregated: a multi-node role ``a`` makes a worker StatefulSet ``<lws>-<group>``
    per group, and worker pods ``<lws>-<group>-<n>``, where ``<lws>`` ends in ``-a``: role
    ``a-<number>``'s own LeaderWorkerSet, StatefulSet and pod names. Its groups come and go with
    scaling, so any such name is refused. In layout disaggregated the Service ``<lws>-prv`` of role ``a``
    is the headless Service of role ``a-prv``'s LeaderWorkerSet."""
    by_name = {role.name: role for role in service.roles}
    def name(role: Role) -> str:
        if service.layout is Layout.DISAGGREGATED:
            return revision_lws_name(service.name, role.name)
        return role_lws_name(service, role)
    for role in service.roles:
        prefix, _, suffix = role.name.rpartition("-")
        other = by_name.get(prefix)
        if other is not None and other.spans_nodes and suffix.isdigit():
            raise InvalidSpec(service.where, role.name_path,
                              f"role {role.name!r}'s LeaderWorkerSet {name(role)!r} is also the "
                              f"worker StatefulSet of group {suffix} of multi-node role {other.name!r} "
                              f"({other.name_path}) in layout {service.layout}; rename one of the roles")
        if service.layout is Layout.DISAGGREGATED and other is not None and f"-{suffix}" == SERVICE_SUFFIX:
            raise InvalidSpec(service.where, role.name_path,
                              f"role {role.name!r}'s LeaderWorkerSet {name(role)!r} would share its "
                              f"headless Service's name with the DisaggregatedSet's Service for role "
                              f"{other.name!r} ({other.name_path}); rename one of the roles")


def _roles_whose_names_can_meet(roles: tuple[Role, ...]) -> list[Role]:
    """Roles one of whose names begins with another's and a dash: only their replicas' names can be equal."""
    return [role for role in roles if any(
        other is not role and (other.name.startswith(f"{role.name}-") or role.name.startswith(f"{other.name}-"))
        for other in roles)]


def check_router_names(service: InferenceService, router: Router) -> None:
    """The picker's Service name must be a DNS label that starts with a letter (RFC 1035)."""
    name = picker_name(service.name, router.name)
    if len(name) > MAX_NAME:
        raise InvalidSpec(service.where, f"{router.path}.name",
                          f"endpoint picker Service name {name!r} would be {len(name)} characters, over the "
                          f"limit of {MAX_NAME}; shorten the InferenceService or role name")
    if not name[0].isalpha():
        raise InvalidSpec(service.where, "metadata.name",
                          f"must start with a letter when the service has a router: its endpoint picker "
                          f"Service {name!r} needs a name that does")
