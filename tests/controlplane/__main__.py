"""`python -m tests.controlplane up|down [DIR]`: the test control plane for a person to poke at."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from tests.controlplane import ControlPlane, ControlPlaneError, set_gpu_nodes, start
from tests.controlplane.builds import MissingBuild, MissingCRDs, shared_crd


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.controlplane", description=__doc__)
    parser.add_argument("action", choices=["up", "down"])
    parser.add_argument("workdir", type=Path, nargs="?", default=Path(".cluster"))
    parser.add_argument("--gpu-nodes", type=int, default=10, help="kwok nodes with 8 GPUs each (up)")
    args = parser.parse_args(argv)
    workdir: Path = args.workdir.resolve()
    if args.action == "down":
        ControlPlane(workdir).stop()
        print(f"stopped the control plane in {workdir}")
        return 0
    if ControlPlane(workdir).pid_file.exists():
        print(f"a control plane is already recorded in {workdir}: `make cluster-down` first", file=sys.stderr)
        return 1
    if workdir.exists() and any(workdir.iterdir()):
        if not (workdir / "kubeconfig").exists() or not (workdir / "etcd").is_dir():
            print(f"{workdir} is not empty and holds no earlier control plane: choose another", file=sys.stderr)
            return 1
        shutil.rmtree(workdir)  # an earlier, stopped control plane: start afresh
    try:
        shared_crd("leaderworkerset.x-k8s.io_leaderworkersets.yaml")  # before anything starts
        cp = start(workdir)
        set_gpu_nodes(cp, args.gpu_nodes)
    except (ControlPlaneError, MissingBuild, MissingCRDs) as error:
        print(error, file=sys.stderr)
        return 1
    print(f"export KUBECONFIG={cp.kubeconfig}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
