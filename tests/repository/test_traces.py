"""The public traces the benchmarks replay (tests/traces.py), and bench-elastic's model of a reactive
autoscaler, whose figures the README quotes."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from tests import bench_elastic, traces


def test_the_azure_code_trace_replays_compressed_and_thinned() -> None:
    requests = traces.azure()
    assert len(requests) == 8819 and requests[0].at == 0
    assert all(earlier.at <= later.at for earlier, later in itertools.pairwise(requests))
    sent = traces.replayed(requests, compression=6, every=3)
    assert len(sent) == 2940
    assert sent[-1].at == pytest.approx(requests[2939 * 3].at / 6)
    assert [request.output_tokens for request in sent[:3]] == [requests[index].output_tokens for index in (0, 3, 6)]


def test_a_trace_that_is_not_the_published_one_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / traces.AZURE_CODE
    shutil.copy(traces.TRACES / traces.AZURE_CODE, copy)
    with copy.open("a") as stream:
        stream.write("2023-11-16 19:20:00.0000000,10,10\n")
    monkeypatch.setattr(traces, "TRACES", tmp_path)
    with pytest.raises(ValueError, match="is not the published trace"):
        traces.azure()


def test_the_modelled_autoscaler_misses_what_arrives_before_its_replicas() -> None:
    """Two requests a second of about a second each: one replica serves them all within the SLO; none for the
    first ten seconds misses the twenty sent then. A burst of 40 a second after half a minute: the bound
    with no delay meets it, one 25 s late (a cold start and a poll) does not."""
    requests = [traces.Request(at=index / 2, prompt_tokens=10, output_tokens=9) for index in range(120)]
    moments = int(70 / bench_elastic.STEP)
    seconds, attained = bench_elastic.queued(requests, [1] * moments)
    assert attained == 1.0 and seconds == pytest.approx(70)
    _, late = bench_elastic.queued(requests, [0] * 100 + [1] * (moments - 100))
    assert late <= (120 - 20) / 120
    burst = [traces.Request(at=30 + index / 40, prompt_tokens=10, output_tokens=9) for index in range(400)]
    quiet = [traces.Request(at=index * 2.0, prompt_tokens=10, output_tokens=9) for index in range(15)]
    assert bench_elastic.reactive_bound(quiet + burst, 8, 0, 5)[1] == 1.0
    assert bench_elastic.reactive_bound(quiet + burst, 8, 25, 5)[1] < 0.5
