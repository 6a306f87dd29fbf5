# A copy of fusion_helm/programs/report.py, made by `make generate` (ci/chart_copies.py) for the chart; do not edit.
"""post-install / post-upgrade hook: write the InferenceService's status — each role's ComponentStatus,
the Ready condition and, where roles roll (layouts role and disaggregated), the Progressing one — from
its pods (and LeaderWorkerSets, DisaggregatedSet and role scalers), polling until every role runs and
none is rolling, one fails, or time is up.

    python -m fusion_helm.programs.report --namespace NS --service NAME [--wait SECONDS]

On a shared Gateway it also writes the ModelNamesOwned condition: whether another service's route matches
the service's model names there (programs/model_owners.py), a claim made after its install included, and
prints a warning line while one does. Never fails the release over readiness or a claim: the status says
how far it got. Exits 1 only when the API server cannot be used.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping
from typing import Any

from fusion_helm.base.kinds import HTTP_ROUTE, INFERENCE_SERVICE
from fusion_helm.base.labels import LABEL_SERVICE
from fusion_helm.programs import model_owners, status
from fusion_helm.programs.kube import ApiError, Kube
from fusion_helm.programs.routed_names import routed_names


def owned(kube: Kube, namespace: str, service: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """The ModelNamesOwned condition of SERVICE (in NAMESPACE), None off a shared Gateway: its names are those
    its route matches as the API server has it (before the route is there, its spec's)."""
    name = service["metadata"]["name"]
    owner = model_owners.owner_of(service["spec"], namespace, name)
    if owner is None:
        return None
    try:
        routes = kube.every(HTTP_ROUTE)
    except ApiError as error:
        if error.status not in (403, 404):
            raise
        return model_owners.ownership(None, owner, [])
    ours = [route for route in routes if route["metadata"].get("namespace") == namespace
            and (route["metadata"].get("labels") or {}).get(LABEL_SERVICE) == name
            and model_owners.attached(route, *owner.gateway)]
    models = list(dict.fromkeys(model for route in ours for model in model_owners.routed_models(route)))
    models = models or routed_names(service["spec"])[0]
    return model_owners.ownership(model_owners.claims(routes, owner, models), owner, models)


def report(kube: Kube, namespace: str, name: str
           ) -> tuple[status.Phase | None, dict[str, str], tuple[str, str, str] | None]:
    """Write the status once; the common phase when every role shares one (else None), the roles still
    rolling with how far each is, and who owns its model names (`owned`)."""
    path = INFERENCE_SERVICE.path(namespace, name)
    service = kube.get(path)
    pods, found = status.observe(kube, namespace, service)
    names = owned(kube, namespace, service)
    statuses, body = status.service_status(service, pods, status.now(), found, names)
    kube.merge_patch(f"{path}/status", status.as_patch(body))
    phases = {s.phase for s in statuses.values()}
    phase = phases.pop() if len(phases) == 1 else (status.Phase.FAILED if status.Phase.FAILED in phases else None)
    return phase, status.rolling(service["spec"], found) or {}, names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusion_helm.programs.report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--service", required=True)
    parser.add_argument("--wait", type=float, default=0, help="seconds to poll for every role Running")
    parser.add_argument("--interval", type=float, default=5)
    args = parser.parse_args(argv)
    kube = Kube()
    deadline = time.monotonic() + args.wait
    warned = ""
    try:
        while True:
            phase, rolling, names = report(kube, args.namespace, args.service)
            progress = "".join(f"; {role} progressing: {how}" for role, how in rolling.items())
            print(f"InferenceService {args.namespace}/{args.service}: {phase or 'roles differ'}{progress}", flush=True)
            if names is not None and names[0] != "True" and names[2] != warned:
                warned = names[2]
                print(f"InferenceService {args.namespace}/{args.service}: warning: {names[1]}: {warned}", flush=True)
            # A rolling role's old groups keep it Running: wait for the rollout too, so the last status
            # written is not the one from before the LWS controller started it.
            settled = phase is status.Phase.FAILED or (phase is status.Phase.RUNNING and not rolling)
            if settled or time.monotonic() >= deadline:
                return 0
            time.sleep(args.interval)
    except (ApiError, OSError) as error:
        print(f"report_status: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
