"""``python -m tests.fuzz [--cases N] [--seed S] [--jobs J]``: a fuzz campaign over the post-renderer.

Prints cases per second and a summary by outcome; writes every failing case to --failures (one file
per case, its seed in the name) and exits 1 if there was one. Generated documents of every 25th
rendered case are read back by Go's YAML reader (tests/goyaml) and must read as PyYAML reads them.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import yaml

from tests.fuzz.cases import case, seeds
from tests.fuzz.oracle import Verdict, judge

_SEEDS = seeds()


CHUNK = 50


def _run(seeds: range) -> list[tuple[int, Verdict]]:
    return [(seed, judge(case(seed, _SEEDS))) for seed in seeds]


def _verdicts(seeds: range, jobs: int) -> Iterator[tuple[int, Verdict]]:
    """Every seed's verdict; a case that kills its process (a crash in C code) is found by running
    its chunk's cases one process each, and judged "crash"."""
    chunks = [range(start, min(start + CHUNK, seeds.stop)) for start in range(seeds.start, seeds.stop, CHUNK)]
    while chunks:
        broken: list[range] = []
        with ProcessPoolExecutor(jobs) as pool:
            futures = {pool.submit(_run, chunk): chunk for chunk in chunks}
            for future in as_completed(futures):
                try:
                    yield from future.result()
                except BrokenProcessPool:
                    broken.append(futures[future])
        chunks = []
        for chunk in broken:
            for seed in chunk:
                alone = subprocess.run([sys.executable, "-m", "tests.fuzz", "--cases", "1", "--seed", str(seed),
                                        "--jobs", "1", "--no-go"], capture_output=True, text=True)
                if alone.returncode < 0:
                    yield seed, Verdict("crash", f"the process died of signal {-alone.returncode}")
                else:
                    chunks.append(range(seed, seed + 1))


def campaign(cases: int, first_seed: int, jobs: int, failures: Path | None, go_check: bool = True) -> int:
    start = time.perf_counter()
    outcomes: collections.Counter[str] = collections.Counter()
    slowest = (0.0, -1)
    sampled: list[str] = []
    failed = 0
    seeds = range(first_seed, first_seed + cases)
    if jobs == 1:
        verdicts: Iterator[tuple[int, Verdict]] = ((seed, judge(case(seed, _SEEDS))) for seed in seeds)
    else:
        verdicts = _verdicts(seeds, jobs)
    for done, (seed, verdict) in enumerate(verdicts, start=1):
        outcomes[verdict.outcome] += 1
        slowest = max(slowest, (verdict.seconds, seed))
        if verdict.failed:
            failed += 1
            print(f"seed {seed}: {verdict.outcome}: {verdict.detail}", flush=True)
            if failures is not None:
                failures.mkdir(parents=True, exist_ok=True)
                bad = case(seed, _SEEDS)
                (failures / f"{verdict.outcome}-{seed}.yaml").write_text(
                    f"# take_over: {bad.take_over}; mutations: {list(bad.mutations)}\n{bad.stream}")
        elif verdict.generated and seed % 25 == 0:
            sampled += verdict.generated
        if done % 5000 == 0:
            print(f"{done} cases, {done / (time.perf_counter() - start):.0f}/s", flush=True)
    seconds = time.perf_counter() - start
    go_mismatches = _go_check(sampled) if go_check and sampled else 0
    print(f"\n{cases} cases in {seconds:.0f}s ({cases / seconds:.0f} cases/s, {jobs} jobs), seeds "
          f"{first_seed}..{first_seed + cases - 1}")
    for outcome, count in outcomes.most_common():
        print(f"  {outcome:<18}{count:>8}  {100 * count / cases:5.1f} %")
    print(f"  slowest case: {slowest[0] * 1000:.0f} ms (seed {slowest[1]})")
    print(f"  generated documents read back by Go: {len(sampled)}, read otherwise: {go_mismatches}")
    return 1 if failed or go_mismatches else 0


def _go_check(documents: list[str]) -> int:
    from tests.goyaml import GoYAML, build

    mismatches = 0
    go = GoYAML(build())
    for start in range(0, len(documents), 500):
        batch = documents[start:start + 500]
        for text, read in zip(batch, go.read(batch), strict=True):
            if read["error"] is not None or read["json"] != yaml.load(text, Loader=yaml.CSafeLoader):
                mismatches += 1
                print(f"Go reads otherwise: {text[:300]!r}: {read}", flush=True)
    return mismatches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0, help="the first case's seed")
    parser.add_argument("--jobs", type=int, default=multiprocessing.cpu_count())
    parser.add_argument("--failures", type=Path, default=Path(".fuzz"), help="where failing cases are written")
    parser.add_argument("--no-go", action="store_true", help="do not read generated documents back with Go")
    args = parser.parse_args(argv)
    return campaign(args.cases, args.seed, args.jobs, args.failures, go_check=not args.no_go)


if __name__ == "__main__":
    sys.exit(main())
