# A copy of fusion_helm/programs/report.py, made by `make generate` (ci/chart_copies.py) for the chart; do not edit.
"""post-install / post-upgrade hook: write the InferenceService's status — each role's ComponentStatus,
the Ready condition and, where roles roll (layouts role and disaggregated), the Progressing one — from
its pods (and LeaderWorkerSets, DisaggregatedSet and role scalers), polling until every role runs and
none is rolling, one fails, or time is up.

    python -m fusion_helm.programs.report --namespace NS --service NAME [--wait SECONDS]

Never fails the release over readiness: the status says how far it got. Exits 1 only when the API
server cannot be used.
"""

from __future__ import annotations

import argparse
import sys
import time

from fusion_helm.base.kinds import INFERENCE_SERVICE
from fusion_helm.programs import status
from fusion_helm.programs.kube import ApiError, Kube


def report(kube: Kube, namespace: str, name: str) -> tuple[status.Phase | None, dict[str, str]]:
    """Write the status once; the common phase when every role shares one (else None), and the roles
    still rolling with how far each is."""
    path = INFERENCE_SERVICE.path(namespace, name)
    service = kube.get(path)
    pods, found = status.observe(kube, namespace, service)
    statuses, body = status.service_status(service, pods, status.now(), found)
    kube.merge_patch(f"{path}/status", status.as_patch(body))
    phases = {s.phase for s in statuses.values()}
    phase = phases.pop() if len(phases) == 1 else (status.Phase.FAILED if status.Phase.FAILED in phases else None)
    return phase, status.rolling(service["spec"], found) or {}


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
    try:
        while True:
            phase, rolling = report(kube, args.namespace, args.service)
            progress = "".join(f"; {role} progressing: {how}" for role, how in rolling.items())
            print(f"InferenceService {args.namespace}/{args.service}: {phase or 'roles differ'}{progress}", flush=True)
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
