"""post-install / post-upgrade hook: write the InferenceService's status — each role's ComponentStatus,
the Ready condition and, in the role layout, the Progressing one — from its pods (and LeaderWorkerSets),
polling until every role runs and none is rolling, one fails, or time is up.

    python report_status.py --namespace NS --service NAME [--wait SECONDS]

Never fails the release over readiness: the status says how far it got. Exits 1 only when the API
server cannot be used.
"""

from __future__ import annotations

import argparse
import sys
import time

from kube import ApiError, Kube

from fusion_helm import status
from fusion_helm.labels import LABEL_SERVICE

INFERENCE_SERVICES = "/apis/fusioninfer.io/v1alpha1/namespaces/{namespace}/inferenceservices/{name}"
LEADER_WORKER_SETS = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/{namespace}/leaderworkersets"
GROUP_NAME = "scheduling.k8s.io/group-name"


def report(kube: Kube, namespace: str, name: str) -> tuple[status.Phase | None, dict[str, str]]:
    """Write the status once; the common phase when every role shares one (else None), and the roles
    still rolling (role layout) with how far each is."""
    path = INFERENCE_SERVICES.format(namespace=namespace, name=name)
    service = kube.get(path)
    selector = f"labelSelector={LABEL_SERVICE}%3D{name}"
    pods = kube.get(f"/api/v1/namespaces/{namespace}/pods?{selector}")["items"]
    leader_worker_sets = kube.get(f"{LEADER_WORKER_SETS.format(namespace=namespace)}?{selector}")["items"] \
        if status.role_layout(service["spec"]) else []
    now = status.now()
    statuses, body = status.service_status(service, pods, now, leader_worker_sets)
    overridden = sorted(pod["metadata"]["name"] for pod in pods
                        if (pod["metadata"].get("annotations") or {}).get(GROUP_NAME, name) != name)
    if overridden:  # LWS's own gang scheduling rewrites the annotation: our PodGroup no longer applies
        body["conditions"].append({
            "type": "GangScheduling", "status": "False", "reason": "GroupNameOverridden",
            "message": f"pods not in PodGroup {name} (is LWS gangSchedulingManagement on?): "
                       + ", ".join(overridden[:5]),
            "observedGeneration": body["observedGeneration"], "lastTransitionTime": now})
    kube.merge_patch(f"{path}/status", {"status": body})
    phases = {s.phase for s in statuses.values()}
    phase = phases.pop() if len(phases) == 1 else (status.Phase.FAILED if status.Phase.FAILED in phases else None)
    return phase, status.rollouts(leader_worker_sets)


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
