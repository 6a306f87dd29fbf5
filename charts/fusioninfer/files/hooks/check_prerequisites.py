"""pre-install / pre-upgrade hook: refuse, before anything is applied, a cluster that cannot serve
the release: the LeaderWorkerSet API must be served and, when the service is gang-scheduled,
Volcano's PodGroup API too, with LWS's own gang scheduling off (its pod webhook rewrites
``scheduling.k8s.io/group-name``, taking the pods out of our PodGroup); with a router, each resource
it needs: those of the objects it creates (InferencePool, HTTPRoute, Gateway) and the model objects
its endpoint picker watches; in layout disaggregated, the DisaggregatedSet APIs.

    python check_prerequisites.py [--gang [--lws-config NAMESPACE/NAME]] [--api GROUP/VERSION/RESOURCE ...]
                                  [--layout NAME --layout-api GROUP/VERSION/RESOURCE ...]

API discovery is open to every authenticated account; the LWS configuration ConfigMap is read
where the chart could grant it (the namespace exists), and skipped where not.
"""

from __future__ import annotations

import argparse
import re
import sys

from kube import ApiError, Kube

REQUIRED = {
    "/apis/leaderworkerset.x-k8s.io/v1": "the LeaderWorkerSet API (leaderworkerset.x-k8s.io/v1) is not served: "
                                         "install LWS (https://lws.sigs.k8s.io) first",
}
GANG = {
    "/apis/scheduling.volcano.sh/v1beta1": "the Volcano PodGroup API (scheduling.volcano.sh/v1beta1) is not served, "
                                           "and the service is gang-scheduled: install Volcano v1.14 or later, "
                                           "or set gangSchedule.enable=false",
}


# An uncommented `gangSchedulingManagement:` key in LWS's Configuration (config.lws.x-k8s.io/v1alpha1)
LWS_GANG = re.compile(r"^\s*gangSchedulingManagement\s*:", re.MULTILINE)


def lws_gang_scheduling(kube: Kube, config: str) -> str | None:
    """Why LWS's gang scheduling is on, or None (off, or its ConfigMap not readable here)."""
    namespace, name = config.split("/", 1)
    try:
        configmap = kube.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}")
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gang", action="store_true", help="the service is gang-scheduled")
    parser.add_argument("--lws-config", metavar="NAMESPACE/NAME", help="LWS's configuration ConfigMap")
    parser.add_argument("--api", action="append", default=[], metavar="GROUP/VERSION/RESOURCE",
                        help="a resource the service's router creates objects of, or its endpoint picker watches")
    parser.add_argument("--layout", help="the service's layout, when it needs more than LWS")
    parser.add_argument("--layout-api", action="append", default=[], metavar="GROUP/VERSION/RESOURCE",
                        help="a resource the service's layout needs")
    args = parser.parse_args(argv)
    kube = Kube()
    try:
        missing = [message for path, message in {**REQUIRED, **(GANG if args.gang else {})}.items()
                   if not kube.exists(path)]
        missing += [f"{resource} ({group_version}) is not served, and the service's router needs it (its "
                    "objects, or what its endpoint picker watches: the picker exits at start without it): install "
                    "the Gateway API and Gateway API Inference Extension CRDs (docs/router.md)"
                    for group_version, resource in (api.rsplit("/", 1) for api in args.api)
                    if not serves(kube, group_version, resource)]
        missing += [f"{resource} ({group_version}) is not served, and the service's layout {args.layout} needs it: "
                    "install LWS v0.10.0 or later (its DisaggregatedSet controller and CRDs), or choose another "
                    "layout (docs/layouts.md)"
                    for group_version, resource in (api.rsplit("/", 1) for api in args.layout_api)
                    if not serves(kube, group_version, resource)]
        if args.gang and args.lws_config and (gang_on := lws_gang_scheduling(kube, args.lws_config)):
            missing.append(gang_on)
    except (ApiError, OSError) as error:
        print(f"check_prerequisites: {error}", file=sys.stderr)
        return 1
    for message in missing:
        print(f"check_prerequisites: {message}", file=sys.stderr)
    if not missing:
        print("prerequisites: ok")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
