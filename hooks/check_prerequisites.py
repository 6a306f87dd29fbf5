"""pre-install / pre-upgrade hook: refuse, before anything is applied, a cluster that cannot serve
the release: the LeaderWorkerSet API must be served, and Volcano's PodGroup API when the service is
gang-scheduled.

    python check_prerequisites.py [--gang]

Uses API discovery only, which every authenticated account may read.
"""

from __future__ import annotations

import argparse
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gang", action="store_true", help="the service is gang-scheduled")
    args = parser.parse_args(argv)
    kube = Kube()
    try:
        missing = [message for path, message in {**REQUIRED, **(GANG if args.gang else {})}.items()
                   if not kube.exists(path)]
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
