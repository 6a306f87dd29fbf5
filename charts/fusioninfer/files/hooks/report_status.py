"""post-install / post-upgrade hook: write the InferenceService's status — each role's ComponentStatus,
the Ready condition and, where roles roll (layouts role and disaggregated), the Progressing one — from
its pods (and LeaderWorkerSets, DisaggregatedSet and role scalers), polling until every role runs and
none is rolling, one fails, or time is up.

    python report_status.py --namespace NS --service NAME [--wait SECONDS]

Never fails the release over readiness: the status says how far it got. Exits 1 only when the API
server cannot be used.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from kube import ApiError, Kube

from fusion_helm import status
from fusion_helm.labels import LABEL_SERVICE, LABEL_SET_NAME

INFERENCE_SERVICES = "/apis/fusioninfer.io/v1alpha1/namespaces/{namespace}/inferenceservices/{name}"
LEADER_WORKER_SETS = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/{namespace}/leaderworkersets"
DISAGGREGATED_SETS = "/apis/disaggregatedset.x-k8s.io/v1/namespaces/{namespace}/disaggregatedsets/{name}"
ROLE_SCALERS = "/apis/disaggregatedset.x-k8s.io/v1/namespaces/{namespace}/disaggregatedsetrolescalers"
GROUP_NAME = "scheduling.k8s.io/group-name"


def workloads(kube: Kube, namespace: str, name: str, spec: dict[str, Any]) -> status.Workloads:
    """What the status needs besides pods, as `status.reads` asks for the service's layout."""
    kinds = status.reads(spec)
    ours, the_set = f"labelSelector={LABEL_SERVICE}%3D{name}", f"labelSelector={LABEL_SET_NAME}%3D{name}"
    return status.Workloads(
        leader_worker_sets=tuple(kube.get(f"{LEADER_WORKER_SETS.format(namespace=namespace)}?{ours}")["items"])
        if status.LEADER_WORKER_SET in kinds else (),
        disaggregated_set=kube.find(DISAGGREGATED_SETS.format(namespace=namespace, name=name))
        if status.DISAGGREGATED_SET in kinds else None,
        role_scalers=tuple(kube.get(f"{ROLE_SCALERS.format(namespace=namespace)}?{the_set}")["items"])
        if status.ROLE_SCALER in kinds else ())


def report(kube: Kube, namespace: str, name: str) -> tuple[status.Phase | None, dict[str, str]]:
    """Write the status once; the common phase when every role shares one (else None), and the roles
    still rolling with how far each is."""
    path = INFERENCE_SERVICES.format(namespace=namespace, name=name)
    service = kube.get(path)
    pods = kube.get(f"/api/v1/namespaces/{namespace}/pods?labelSelector={LABEL_SERVICE}%3D{name}")["items"]
    found = workloads(kube, namespace, name, service["spec"])
    now = status.now()
    statuses, body = status.service_status(service, pods, now, found)
    overridden = sorted(pod["metadata"]["name"] for pod in pods
                        if (pod["metadata"].get("annotations") or {}).get(GROUP_NAME, name) != name)
    if overridden:  # LWS's own gang scheduling rewrites the annotation: our PodGroup no longer applies
        body["conditions"].append({
            "type": "GangScheduling", "status": "False", "reason": "GroupNameOverridden",
            "message": f"pods not in PodGroup {name} (is LWS gangSchedulingManagement on?): "
                       + ", ".join(overridden[:5]),
            "observedGeneration": body["conditions"][0]["observedGeneration"], "lastTransitionTime": now})
    kube.merge_patch(f"{path}/status", status.as_patch(body))
    phases = {s.phase for s in statuses.values()}
    phase = phases.pop() if len(phases) == 1 else (status.Phase.FAILED if status.Phase.FAILED in phases else None)
    return phase, status.rolling(service["spec"], found) or {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
