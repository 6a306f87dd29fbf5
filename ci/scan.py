"""checkov's Kubernetes checks over the objects each example renders (`helm template` with the
post-renderer, hooks included) and the body-based router's chart renders: every finding must be in
ci/scan-baseline.yaml, by check and kind, with the reason it stays, and every entry there must still be
found (`make lint`).

    ci/scan.py CHECKOV HELM     # the checkov executable (`make lint` builds it into the cache) and a
                                # helm 3 binary (`make lint` gives the one ci/tools.env pins)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "ci" / "scan-baseline.yaml"
OFFLINE = {"BC_SKIP_MAPPING": "TRUE"}
"""checkov fetches check guidelines from its vendor's API unless told not to: nothing leaves the machine."""


def render(helm: str, values: Path, into: Path) -> None:
    done = subprocess.run([helm, "template", "release", str(ROOT / "charts" / "fusioninfer"), "-f", str(values),
                           "--post-renderer", "fusion-postrender"], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"scan: rendering {values.name} failed: {done.stderr.strip()}")
    (into / values.name).write_text(done.stdout)


def render_body_router(helm: str, into: Path) -> None:
    """charts/fusioninfer-bbr with its defaults: a shared Gateway's body-based router."""
    done = subprocess.run([helm, "template", "gateway", str(ROOT / "charts" / "fusioninfer-bbr")], capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise SystemExit(f"scan: rendering charts/fusioninfer-bbr failed: {done.stderr.strip()}")
    (into / "fusioninfer-bbr.yaml").write_text(done.stdout)


def findings(checkov: str, directory: Path) -> dict[tuple[str, str], list[str]]:
    """(check id, kind) → the objects it fails for, as file: resource."""
    done = subprocess.run([checkov, "--directory", str(directory), "--framework", "kubernetes", "--skip-download",
                           "--quiet", "--output", "json"], capture_output=True, text=True,
                          env={**os.environ, **OFFLINE})
    if done.returncode not in (0, 1):  # 1: some check failed
        raise SystemExit(f"scan: checkov failed: {done.stderr.strip()[-2000:]}")
    reports = json.loads(done.stdout) if done.stdout.strip() else []
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for report in reports if isinstance(reports, list) else [reports]:
        for failed in report.get("results", {}).get("failed_checks", []):
            found[failed["check_id"], failed["resource"].split(".")[0]].append(
                f"{Path(failed['file_path']).name}: {failed['resource']}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkov")
    parser.add_argument("helm")
    args = parser.parse_args(argv)
    baseline = yaml.safe_load(BASELINE.read_text())
    allowed = {(check, kind) for check, entry in baseline.items() for kind in entry["kinds"]}
    with tempfile.TemporaryDirectory() as directory:
        for values in sorted((ROOT / "values").glob("*.yaml")):
            render(args.helm, values, Path(directory))
        render_body_router(args.helm, Path(directory))
        found = findings(args.checkov, Path(directory))
    new = {key: objects for key, objects in found.items() if key not in allowed}
    stale = sorted(allowed - found.keys())
    for (check, kind), objects in sorted(new.items()):
        print(f"scan: {check} on {kind}, not in {BASELINE.name}: {', '.join(objects[:3])}", file=sys.stderr)
    for check, kind in stale:
        print(f"scan: {BASELINE.name} lists {check} on {kind}, which no longer fails: remove it", file=sys.stderr)
    if not new and not stale:
        print(f"scan: {sum(map(len, found.values()))} findings, each in {BASELINE.name}")
    return 1 if new or stale else 0


if __name__ == "__main__":
    sys.exit(main())
