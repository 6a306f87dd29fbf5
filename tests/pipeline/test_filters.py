"""Each filter on its own, at the pipeline's seam: what it claims from a document's text, and a list of
Documents in, a list out — the ones it does not transform passed through as the same objects."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from fusion_helm.filters.expand_services import ExpandServices
from fusion_helm.filters.take_over import TakeOver
from fusion_helm.kio.document import Document, Origin, read_documents
from fusion_helm.kio.stream import split
from fusion_helm.options import Options
from tests.builders import role, service

CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}


def lws(name: str = "w", annotated: bool = True, size: int = 2) -> dict[str, Any]:
    container = {"name": "vllm", "image": "vllm/vllm-openai:v0.11.0", "resources": {"limits": {"nvidia.com/gpu": "8"}}}
    obj: dict[str, Any] = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                           "metadata": {"name": name}, "spec": {"replicas": 2, "leaderWorkerTemplate": {
                               "size": size, "workerTemplate": {"spec": {"containers": [container]}}}}}
    if annotated:
        obj["metadata"]["annotations"] = {"fusioninfer.io/take-over": "true"}
    return obj


def stream(*objects: dict[str, Any]) -> list[Document]:
    return read_documents("".join(f"---\n{yaml.safe_dump(obj)}" for obj in objects))


def kinds_and_names(documents: list[Document]) -> list[tuple[str | None, str, Origin]]:
    return [(d.kind, d.metadata.get("name"), d.origin) for d in documents]


def claimed(step: ExpandServices | TakeOver, obj: dict[str, Any]) -> bool:
    [chunk] = split(f"---\n{yaml.safe_dump(obj)}")
    return step.claims(chunk)


def test_expand_services_claims_only_what_could_be_an_inference_service() -> None:
    step = ExpandServices()
    assert claimed(step, service(role("p", "worker")))
    assert not claimed(step, CONFIG_MAP)
    assert not claimed(step, lws())


def test_expand_services_follows_each_service_with_what_serves_it() -> None:
    documents = stream(CONFIG_MAP, service(role("p", "prefiller"), role("d", "decoder", 2)), CONFIG_MAP)
    out = ExpandServices()(documents)
    assert out[0] is documents[0] and out[1] is documents[1] and out[-1] is documents[2]
    assert kinds_and_names(out[2:-1]) == [
        ("PodGroup", "svc", Origin.GENERATED), ("LeaderWorkerSet", "svc-p-0", Origin.GENERATED),
        ("LeaderWorkerSet", "svc-d-0", Origin.GENERATED), ("LeaderWorkerSet", "svc-d-1", Origin.GENERATED),
        ("NetworkPolicy", "svc-p", Origin.GENERATED), ("NetworkPolicy", "svc-d", Origin.GENERATED)]


def test_expand_services_leaves_a_stream_without_services_as_it_is() -> None:
    documents = stream(CONFIG_MAP, lws())
    assert ExpandServices()(documents) == documents


@pytest.mark.parametrize(("options", "annotated", "taken"), [
    (Options(), True, True), (Options(), False, False),
    (Options(take_over_every_leader_worker_set=True), False, True)])
def test_take_over_claims_and_takes_what_the_options_say(options: Options, annotated: bool, taken: bool) -> None:
    step = TakeOver(options)
    assert claimed(step, lws(annotated=annotated)) is taken
    out = step(stream(lws(annotated=annotated)))
    names = [name for _, name, _ in kinds_and_names(out)]
    assert names == (["w", "w-group-0", "w-group-1"] if taken else ["w"])


@pytest.mark.parametrize("layout", ["replica", "role"])
def test_what_a_filter_makes_no_later_filter_claims(layout: str) -> None:
    """Why the pipeline runs only the filters that claim a document of Helm's stream: what taking over
    makes, expanding services never claims."""
    out = TakeOver(Options(take_over_layout=layout))(stream(lws(size=3)))
    made = [document.obj for document in out if document.generated]
    assert made and not any(claimed(ExpandServices(), obj) for obj in made)


def test_take_over_keeps_one_whole_in_the_role_layout() -> None:
    out = TakeOver(Options(take_over_layout="role"))(stream(lws()))
    assert kinds_and_names(out) == [("PodGroup", "w", Origin.GENERATED), ("LeaderWorkerSet", "w", Origin.GENERATED)]


def test_take_over_carries_a_service_selecting_what_it_renames() -> None:
    selecting = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                 "spec": {"selector": {"leaderworkerset.sigs.k8s.io/name": "w"}}}
    out = TakeOver(Options())(stream(lws(), selecting))
    [service] = [document for document in out if document.kind == "Service"]
    assert service.generated and service.obj["spec"]["selector"] == {"fusioninfer.io/service": "w"}
    assert [d.kind for d in out][-1] == "Service"  # where the stream had it


def test_documents_of_data_are_filtered_as_documents_of_text() -> None:
    """A ResourceList's items: read as data, never parsed again, transformed alike."""
    obj = service(role("w", "worker"))
    of_text = ExpandServices()(stream(obj))
    of_data = ExpandServices()([Document.of_data(obj, 1)])
    assert of_data[0].origin is Origin.DATA
    assert [d.obj for d in of_data[1:]] == [d.obj for d in of_text[1:]]
