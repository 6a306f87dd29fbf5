"""pre-install / pre-upgrade hook: refuse, before anything is applied, a cluster that cannot serve
the release: the LeaderWorkerSet API must be served and, when the service is gang-scheduled,
Volcano's PodGroup API too, with LWS's own gang scheduling off (its pod webhook rewrites
``scheduling.k8s.io/group-name``, taking the pods out of our PodGroup); with a router, each resource
it needs: those of the objects it creates (InferencePool, HTTPRoute, Gateway) and the model objects
its endpoint picker watches; in layout disaggregated, the DisaggregatedSet APIs; with PodMonitors, the
Prometheus Operator's PodMonitor API. Where the service is
placed: its Volcano queue must exist and be Open (Volcano schedules nothing from another), its
PriorityClass must exist (Kubernetes refuses every pod naming a missing one), and each network topology
tier it names must be one the cluster's HyperNodes have (Volcano reads an unknown tier name as no bound
at all, and a tier number with no HyperNode at or below it as the whole cluster). The claims its weights
are read from must exist in its namespace (its pods would wait for them forever). On a shared Gateway,
no other service's route may match its model names there already (programs/model_owners.py: a name has one
owner, or a stable service and its canaries). And first, the InferenceService API itself: served, and by
a CRD no older than the chart's (FILE, the fields the chart's CRD has), whose missing fields the API server
would drop from the service without a word.

    python -m fusion_helm.programs.check --spec FILE [--crd-fields FILE] [--lws-config NAMESPACE/NAME]
                                      [--namespace NAMESPACE] [--service NAME]

What to check is decided from the service's spec (FILE: JSON, as the chart renders it) by the rules the
post-renderer decides by (fusion_helm.base.needs). API discovery is open to every authenticated account;
the LWS configuration ConfigMap is read where the chart could grant it (the namespace exists), and
skipped where not. The queue, the PriorityClass and the HyperNodes are cluster-scoped: the chart grants
reading them (a ClusterRole) only when the service names them; likewise listing the HTTPRoutes of every
namespace, only for a service on a shared Gateway. Where that list is refused all the same (403), the
model names are not checked and the check says so: the chart grants it, so a refusal there is the cluster's
policy, and the status hook reports the names' owner once the service runs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from fusion_helm.base import needs
from fusion_helm.base.kinds import (
    CONFIG_MAP,
    HTTP_ROUTE,
    HYPER_NODE,
    INFERENCE_SERVICE,
    LEADER_WORKER_SET,
    PERSISTENT_VOLUME_CLAIM,
    POD_GROUP,
    PRIORITY_CLASS,
    QUEUE,
    inference_pool,
)
from fusion_helm.programs import model_owners
from fusion_helm.programs.kube import ApiError, Kube
from fusion_helm.programs.routed_names import routed_names

REQUIRED = {
    f"/apis/{LEADER_WORKER_SET.api_version}": f"the LeaderWorkerSet API ({LEADER_WORKER_SET.api_version}) is not "
                                              "served: install LWS (https://lws.sigs.k8s.io) first",
}
GANG = {
    f"/apis/{POD_GROUP.api_version}": f"the Volcano PodGroup API ({POD_GROUP.api_version}) is not served, "
                                      "and the service is gang-scheduled: install Volcano v1.14 or later, "
                                      "or set gangSchedule.enable=false",
}


# An uncommented `gangSchedulingManagement:` key in LWS's Configuration (config.lws.x-k8s.io/v1alpha1)
LWS_GANG = re.compile(r"^\s*gangSchedulingManagement\s*:", re.MULTILINE)


def lws_gang_scheduling(kube: Kube, config: str) -> str | None:
    """Why LWS's gang scheduling is on, or None (off, or its ConfigMap not readable here)."""
    namespace, name = config.split("/", 1)
    try:
        configmap = kube.get(CONFIG_MAP.path(namespace, name))
    except ApiError as error:
        if error.status in (403, 404):
            print(f"prerequisites: {config} not readable ({error.status}); LWS gang scheduling not checked")
            return None
        raise
    for key, text in sorted((configmap.get("data") or {}).items()):
        if LWS_GANG.search(text):
            return (f"LWS gang scheduling management is on ({config}, {key}: gangSchedulingManagement): its pod "
                    "webhook rewrites scheduling.k8s.io/group-name and the pods leave this service's PodGroup; "
                    "turn it off in LWS, or set gangSchedule.enable=false")
    return None


def serves(kube: Kube, group_version: str, resource: str) -> bool:
    listed = kube.find(f"/apis/{group_version}") or {}
    return any(served.get("name") == resource for served in listed.get("resources") or [])


API_GROUP, KIND, PLURAL = INFERENCE_SERVICE.group, INFERENCE_SERVICE.kind, INFERENCE_SERVICE.plural
CRD_CHART = "fusioninfer-crds"
SCHEMA_SETTLE = 10.0  # seconds
UPGRADE_CRD = (f"helm upgrade --install {CRD_CHART} charts/{CRD_CHART} --take-ownership (Helm 4: and "
               "--server-side=true --force-conflicts; once per cluster, docs/lifecycle.md)")


def crd_problem(kube: Kube, fields_file: str, settle: float = SCHEMA_SETTLE) -> str | None:
    """Why the served InferenceService API cannot take this chart's service, or None: not served, or
    served by an older CRD (a field of the chart's missing from the served schema, which is readable
    by every account as the API server publishes it). The API server publishes a CRD's schema a moment
    after discovery serves it, and a changed CRD's a moment after the change: a schema absent or short
    of fields is read again for up to SETTLE seconds before it counts (a CRD chart installed just
    before this release, as helmfile and docs/lifecycle.md do)."""
    wanted = json.loads(Path(fields_file).read_text())
    version = wanted["version"]
    if not serves(kube, f"{API_GROUP}/{version}", PLURAL):
        return f"the {KIND} API ({API_GROUP}/{version}) is not served: install its CRD: {UPGRADE_CRD}"
    deadline = time.monotonic() + settle
    while True:
        missing = served_schema_lacks(kube, wanted)
        if missing == [] or time.monotonic() >= deadline:
            break
        time.sleep(0.5)
    if missing is None:
        return (f"the {KIND} API ({API_GROUP}/{version}) is served but its schema was not published within "
                f"{settle:g} s, so its fields cannot be checked; try again, or upgrade its CRD: {UPGRADE_CRD}")
    if not missing:
        return None
    shown = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
    return (f"the served {KIND} CRD is older than this chart's: it lacks {shown}, which the API server would "
            f"drop from the service; upgrade it: {UPGRADE_CRD}")


def served_schema_lacks(kube: Kube, wanted: dict[str, Any]) -> list[str] | None:
    """The fields of WANTED's schema the published one lacks, or None while none is published."""
    version = wanted["version"]
    served = kube.find(f"/openapi/v3/apis/{API_GROUP}/{version}")
    if served is None:
        return None
    group = ".".join(reversed(API_GROUP.split(".")))
    schema = ((served.get("components") or {}).get("schemas") or {}).get(f"{group}.{version}.{KIND}")
    if schema is None:
        return None
    return list(missing_fields(wanted["schema"], schema, ""))


def missing_fields(wanted: dict[str, Any], served: dict[str, Any], path: str) -> Iterator[str]:
    """The field paths WANTED's schema has and SERVED's lacks (``[]`` for a list's items)."""
    for name, sub in sorted((wanted.get("properties") or {}).items()):
        here = f"{path}.{name}" if path else name
        theirs = (served.get("properties") or {}).get(name)
        if theirs is None:
            yield here
        else:
            yield from missing_fields(sub, theirs, here)
    if isinstance(wanted.get("items"), dict):
        yield from missing_fields(wanted["items"], served.get("items") or {}, f"{path}[]")



def queue_problem(kube: Kube, queue: str) -> str | None:
    found = kube.find(QUEUE.path(name=queue))
    if found is None:
        return (f"queue {queue} does not exist (a Volcano Queue, scheduling.volcano.sh/v1beta1): Volcano would never "
                "schedule the service's PodGroup; create it, or set schedulingStrategy.queue to an Open queue")
    state = (found.get("status") or {}).get("state") or "Unknown"
    if state != "Open":
        return (f"queue {queue} is {state}, not Open: Volcano schedules no PodGroup of it; open it, or set "
                "schedulingStrategy.queue to an Open queue")
    return None


def priority_class_problem(kube: Kube, name: str) -> str | None:
    if kube.exists(PRIORITY_CLASS.path(name=name)):
        return None
    return (f"PriorityClass {name} does not exist: Kubernetes refuses every serving pod that names it; create it, "
            "or change schedulingStrategy.priorityClassName")


def claim_problems(kube: Kube, namespace: str, claims: Iterable[str]) -> list[str]:
    """A claim the weights are read from that does not exist; one that pods of one node only can mount is
    said, not refused (every serving pod may run on one node)."""
    problems = []
    for claim in claims:
        found = kube.find(PERSISTENT_VOLUME_CLAIM.path(namespace, claim))
        if found is None:
            problems.append(f"PersistentVolumeClaim {claim} does not exist in namespace {namespace}, and the service's "
                            "weights are read from it: its pods would wait for it forever; create it, or change "
                            "modelCache.claimName or the pvc:// source (docs/models.md)")
        elif "ReadWriteOnce" in ((found.get("spec") or {}).get("accessModes") or []):
            print(f"prerequisites: PersistentVolumeClaim {claim} is ReadWriteOnce: only pods of one node can mount "
                  "it (ReadWriteMany or ReadOnlyMany lets every node's)")
    return problems


def tier_problems(kube: Kube, tiers: list[str]) -> list[str]:
    group_version, resource = HYPER_NODE.api_version, HYPER_NODE.plural
    if not serves(kube, group_version, resource):
        return [f"{resource} ({group_version}) is not served, and the service's networkTopology needs them: install "
                "Volcano v1.12 or later and describe the cluster's network with HyperNodes (docs/gang-scheduling.md)"]
    specs = [item.get("spec") or {} for item in (kube.get(HYPER_NODE.path()).get("items") or [])]
    names = {spec.get("tierName") for spec in specs}
    numbers = [spec["tier"] for spec in specs if isinstance(spec.get("tier"), int)]
    problems = []
    for tier in tiers:
        if tier.isdigit():
            if not any(number <= int(tier) for number in numbers):
                problems.append(f"no HyperNode has tier {tier} or lower: Volcano would read highestTierAllowed {tier} "
                                "as the whole cluster; describe the cluster's network with HyperNodes "
                                "(docs/gang-scheduling.md)")
        elif tier not in names:
            known = ", ".join(sorted(name for name in names if name)) or "none"
            problems.append(f"no HyperNode has tierName {tier} (tier names: {known}): Volcano would place the pods "
                            "with no bound at all; fix highestTierName")
    return problems


def canary_problems(kube: Kube, spec: dict[str, Any], namespace: str) -> list[str]:
    """A canary's stable pool that does not exist: its route would send the rest of its model's requests (most
    of them) to no pool at all. (Its own pool is refused by the post-renderer.)"""
    problems = []
    for api_version, pool in needs.canary_pools(spec):
        kind = inference_pool(api_version)
        if not serves(kube, api_version, kind.plural) or kube.find(kind.path(namespace, pool)) is not None:
            continue  # not served: said above, with what the router needs
        pools = sorted(str(item["metadata"]["name"]) for item in kube.get(kind.path(namespace)).get("items") or [])
        problems.append(f"InferencePool {pool} does not exist in namespace {namespace}, and canaryOf.inferencePool "
                        "names it: the canary's route would send every request for its model names it does not "
                        "keep to no pool (each answered with an error); name the stable service's pool, "
                        f"<service>-<router role name> (pools there: {', '.join(pools) or 'none'})")
    return problems


def model_name_problems(kube: Kube, spec: dict[str, Any], namespace: str, service: str) -> list[str]:
    """The service's model names that another service's route already matches on its shared Gateway, each
    in a sentence naming the route and what to do."""
    owner = model_owners.owner_of(spec, namespace, service)
    if owner is None:
        return []
    models, unread = routed_names(spec)
    if unread:
        print(f"prerequisites: the model names of role(s) {', '.join(unread)} are not read here (an engine started "
              "from a script): give router.modelNames to have them checked before install; the status hook checks "
              "the route as written (condition ModelNamesOwned)")
    if not models:
        return []
    try:
        routes = kube.every(HTTP_ROUTE)
    except ApiError as error:
        if error.status == 403:
            print(f"prerequisites: warning: listing the HTTPRoutes of every namespace is refused (403), so whether "
                  f"another route on Gateway {owner.gateway_name} already matches this service's model names is not "
                  "checked (the chart grants it for a service on a shared Gateway: a policy of the cluster refuses it)")
            return []
        if error.status == 404:  # the HTTPRoute API is not served: said above, with what the router needs
            return []
        raise
    return [model_owners.refusal(claim, owner) for claim in model_owners.claims(routes, owner, models)]


def problems(kube: Kube, spec: dict[str, Any], crd_fields: str | None, lws_config: str | None,
             namespace: str | None = None, service: str | None = None) -> list[str]:
    """Why the cluster cannot serve a service of SPEC, each in a sentence (none: it can)."""
    gang = needs.gang_minimum(spec) is not None
    layout = needs.layout(spec)
    missing = [problem for problem in [crd_problem(kube, crd_fields)] if problem] if crd_fields else []
    missing += [message for path, message in {**REQUIRED, **(GANG if gang else {})}.items() if not kube.exists(path)]
    missing += [f"{resource} ({group_version}) is not served, and the service's router needs it (its "
                "objects, or what its endpoint picker watches: the picker exits at start without it): install "
                "the Gateway API and Gateway API Inference Extension CRDs (docs/router.md)"
                for group_version, resource in _unserved(kube, needs.router_apis(spec))]
    missing += [f"{resource} ({group_version}) is not served, and the service's layout {layout} needs it: "
                "install LWS v0.10.0 or later (its DisaggregatedSet controller and CRDs), or choose another "
                "layout (docs/layouts.md)"
                for group_version, resource in _unserved(kube, needs.layout_apis(spec))]
    missing += [f"{resource} ({group_version}) is not served, and the service asks for PodMonitors: install "
                "the Prometheus Operator (its CRDs), or set monitoring.podMonitor.enabled=false "
                "(docs/monitoring.md)"
                for group_version, resource in _unserved(kube, needs.monitoring_apis(spec))]
    missing += [f"{resource} ({group_version}) is not served, and spec.tls.certManager has a Certificate write the "
                "serving certificate: install cert-manager, or name a Secret of yours in spec.tls.secretName "
                "(docs/router.md)"
                for group_version, resource in _unserved(kube, needs.tls_apis(spec))]
    missing += [f"{resource} ({group_version}) is not served, and roles[].autoscaling has KEDA scale a role "
                "(autoscaling.prometheus or triggers): install KEDA, or scale with a HorizontalPodAutoscaler "
                "(leave prometheus and triggers out) (docs/autoscaling.md)"
                for group_version, resource in _unserved(kube, needs.autoscaling_apis(spec))]
    if gang and lws_config and (gang_on := lws_gang_scheduling(kube, lws_config)):
        missing.append(gang_on)
    placement = needs.placement(spec)
    if placement.queue and (problem := queue_problem(kube, placement.queue)):
        missing.append(problem)
    if placement.priority_class and (problem := priority_class_problem(kube, placement.priority_class)):
        missing.append(problem)
    if placement.tiers:
        missing += tier_problems(kube, list(placement.tiers))
    if namespace is not None:
        missing += claim_problems(kube, namespace, needs.weight_claims(spec))
        missing += canary_problems(kube, spec, namespace)
        if service is not None:
            missing += model_name_problems(kube, spec, namespace, service)
    return missing


def _unserved(kube: Kube, resources: Iterable[str]) -> list[tuple[str, str]]:
    """Of RESOURCES (group/version/resource), those not served, as (group/version, resource)."""
    return [(group_version, resource) for group_version, resource in (api.rsplit("/", 1) for api in resources)
            if not serves(kube, group_version, resource)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusion_helm.programs.check", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", metavar="FILE", required=True, help="the InferenceService's spec, as JSON")
    parser.add_argument("--crd-fields", metavar="FILE",
                        help="the chart's CRD schema (its fields): the served one must have them")
    parser.add_argument("--lws-config", metavar="NAMESPACE/NAME", help="LWS's configuration ConfigMap")
    parser.add_argument("--namespace", help="the service's namespace: where the claims it reads weights from must be")
    parser.add_argument("--service", help="the service's name (with --namespace): its model names are checked on its "
                                          "shared Gateway")
    args = parser.parse_args(argv)
    try:
        spec = json.loads(Path(args.spec).read_text())
        missing = problems(Kube(), spec, args.crd_fields, args.lws_config, args.namespace, args.service)
    except (ApiError, OSError, ValueError) as error:
        print(f"check_prerequisites: {error}", file=sys.stderr)
        return 1
    for message in missing:
        print(f"check_prerequisites: {message}", file=sys.stderr)
    if not missing:
        print("prerequisites: ok")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
