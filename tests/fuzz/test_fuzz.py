"""A short, fixed-seed run of the fuzz campaign (`make fuzz` runs the long one), and what earlier
campaigns found, each as a named regression test."""

from __future__ import annotations

import pytest
import yaml

from fusion_helm import InvalidSpec, render
from fusion_helm.errors import MAX_PATH
from tests.fuzz.__main__ import campaign
from tests.fuzz.cases import case, seeds
from tests.fuzz.oracle import judge

IMAGE = "vllm/vllm-openai:v0.11.0"


def test_a_short_campaign_breaks_no_invariant(capsys: pytest.CaptureFixture[str]) -> None:
    assert campaign(400, first_seed=900_000, jobs=1, failures=None, go_check=False) == 0, capsys.readouterr().out


def test_every_seed_renders_and_keeps_every_invariant() -> None:
    """The seeds themselves, unmutated: each story in each layout and each take-over renders (not
    refused), deterministic, idempotent, valid against the upstream schemas, the KRM function agreeing."""
    from tests.fuzz.cases import Case

    layouts = set()
    for index, obj in enumerate(seeds()):
        verdict = judge(Case(index, yaml.safe_dump(obj), False, ()))
        assert verdict.outcome == "rendered", (obj["metadata"]["name"], verdict.outcome, verdict.detail)
        layouts.add(obj["spec"].get("layout", "replica") if obj["kind"] == "InferenceService" else None)
    assert layouts == {"replica", "role", "disaggregated", None}


def test_null_in_every_position_of_every_seed_is_rendered_or_refused() -> None:
    """What an unset Helm value leaves anywhere in a service or a taken-over LeaderWorkerSet: the
    oracle's verdict, never a traceback (a Ray-bootstrapped one's `ports: null` was one). Judged by two
    processes, as the campaign judges (each its own alarm for a hang)."""
    from concurrent.futures import ProcessPoolExecutor

    from tests.fuzz.cases import Case, paths, with_null_at

    where = [(obj["metadata"]["name"], path) for obj in seeds() for path in list(paths(obj))[1:]]
    cases = [Case(index, yaml.safe_dump(with_null_at(obj, path)), False, ())
             for index, obj in enumerate(seeds()) for path in list(paths(obj))[1:]]
    judged: dict[str, int] = {}
    with ProcessPoolExecutor(2) as pool:
        for (name, path), verdict in zip(where, pool.map(judge, cases, chunksize=64), strict=True):
            assert not verdict.failed, (name, path, verdict.outcome, verdict.detail)
            judged[verdict.outcome] = judged.get(verdict.outcome, 0) + 1
    assert judged["rendered"] > 300 and judged["refused"] > 300, judged


def test_every_case_is_reproducible_from_its_seed() -> None:
    assert case(42, seeds()) == case(42, seeds())
    assert judge(case(42, seeds())).outcome == judge(case(42, seeds())).outcome


def test_the_oracle_can_fail() -> None:
    """A stream whose only document we do not own, changed on the way, is caught."""
    from tests.fuzz.cases import Case
    from tests.fuzz.oracle import _judge_output

    stream = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
    verdict = _judge_output(Case(0, stream, False, ()), stream.replace("name: a", "name: b"), 0.0)
    assert verdict.failed


# Found by campaigns:

def test_a_self_referential_anchor_gives_a_short_message() -> None:
    """seed 549: an anchor whose mapping holds an alias of itself made a path of 200 levels."""
    text = ("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n  name: x\n"
            "  annotations: {fusioninfer.io/take-over: 'true'}\nspec:\n  leaderWorkerTemplate: &t\n"
            "    leaderTemplate:\n      metadata: *t\n")
    with pytest.raises(InvalidSpec) as error:
        render(text)
    assert len(str(error.value)) < MAX_PATH + 200
    assert "…" in str(error.value)


def test_a_kind_written_in_disguise_is_still_expanded() -> None:
    service = {"apiVersion": "fusioninfer.io/v1alpha1", "kind": "KIND", "metadata": {"name": "s"},
               "spec": {"roles": [{"name": "w", "componentType": "worker", "replicas": 2, "multinode": {"nodeCount": 2},
                                   "template": {"spec": {"containers": [{"name": "c", "image": IMAGE}]}}}]}}
    for disguise in ('"Inference\\x53ervice"', "!!binary SW5mZXJlbmNlU2VydmljZQ==", '"Infer\\\n  enceService"'):
        out = render(yaml.safe_dump(service).replace("KIND", disguise))
        assert out.count("kind: LeaderWorkerSet") == 2, disguise
