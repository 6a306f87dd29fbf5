"""How many GPUs a replica's engine asks for, against how many the replica has: its tensor x pipeline
parallel size (x data-parallel ranks a node, where the engine runs several) and the GPUs its pods request.

An engine that asks for more GPUs than its replica has cannot start (vLLM and SGLang wait for, then fail
on, the devices or Ray bundles that are not there): refused by the field that asks. One that asks for fewer
leaves GPUs idle that the replica pays for: ``fusion-helm validate`` warns (the user may know better — a
second engine in the pod). Nothing is said where a count cannot be read: a value the shell expands, an
engine not known, a pod that requests no GPU, a custom bootstrap's own programs, SGLang's data parallelism
(whose ranks may share its tensor-parallel GPUs)."""

from __future__ import annotations

from fusion_helm.errors import InvalidSpec, show
from fusion_helm.limits import MAX_COUNT_DIGITS, count
from fusion_helm.model.bootstrap import Bootstrap
from fusion_helm.model.engine import Occurrence, ServerCommand
from fusion_helm.model.engine_flags import (
    DATA_PARALLEL_SIZE,
    PIPELINE_PARALLEL_SIZE,
    SGLANG_DATA_PARALLEL_SIZE,
    TENSOR_PARALLEL_SIZE,
    Engine,
    Option,
)
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from fusion_helm.model.inference_service import Role

GPU = "nvidia.com/gpu"


@record
class GpuFit:
    """What a replica's engine asks for and what the replica has, as errors and warnings say them."""

    asked: int
    """GPUs the engine's parallelism needs (a node's, for one engine per node)."""
    has: int
    """GPUs the same scope has."""
    asks_by: str
    """How it asks: "--tensor-parallel-size 32 x --pipeline-parallel-size 1"."""
    has_by: str
    """How it has them: "1 pod x 8 nvidia.com/gpu"."""
    field: str
    """The field that asks (its tensor-parallel size's word, else the container's args)."""


def gpu_fit(role: Role, where: str) -> GpuFit | None:
    """ROLE's fit, or None where something cannot be read."""
    pod_gpus = gpus(role.template)
    multinode = role.multinode
    if pod_gpus is None or (multinode is not None and multinode.bootstrap is Bootstrap.CUSTOM):
        return None
    server = role.server(where)
    if server.engine is None:
        return None
    sizes = [_size(server, option) for option in (TENSOR_PARALLEL_SIZE, PIPELINE_PARALLEL_SIZE)]
    if any(size is None for size in sizes) or (server.engine is Engine.SGLANG
                                               and server.given(SGLANG_DATA_PARALLEL_SIZE)):
        return None
    (tensor, at), (pipeline, pipeline_at) = [size for size in sizes if size is not None]
    asks_by = f"{_spelled(server, TENSOR_PARALLEL_SIZE, at)} {tensor} x " \
              f"{_spelled(server, PIPELINE_PARALLEL_SIZE, pipeline_at)} {pipeline}"
    field = server.field(at) if at is not None else f"{role.template_path}.spec.containers[0].args"
    if multinode is not None and multinode.data_parallel is not None:  # one engine a node, its ranks local
        ranks = multinode.data_parallel.ranks_per_node
        return GpuFit(tensor * pipeline * ranks, pod_gpus, f"{asks_by} x {ranks} data-parallel ranks a node",
                      f"{pod_gpus} {GPU} a node", field)
    engines = _size(server, DATA_PARALLEL_SIZE) if server.engine is Engine.VLLM else (1, None)
    if engines is None:
        return None
    if engines[1] is not None:  # vLLM's data-parallel engines in one replica
        asks_by += f" x {_spelled(server, DATA_PARALLEL_SIZE, engines[1])} {engines[0]}"
    nodes = role.node_count
    return GpuFit(tensor * pipeline * engines[0], nodes * pod_gpus, asks_by,
                  f"{nodes} pod{'s' if nodes > 1 else ''} x {pod_gpus} {GPU}", field)


def check_gpu_fit(role: Role, where: str) -> None:
    """Refuse an engine that asks for more GPUs than its replica has."""
    fit = gpu_fit(role, where)
    if fit is not None and fit.asked > fit.has:
        raise InvalidSpec(where, fit.field,
                          f"{fit.asks_by} asks for {fit.asked} GPUs, and a replica has {fit.has} ({fit.has_by}): the "
                          "engine cannot start; lower its parallelism, or give the replica more GPUs (the pods' "
                          f"{GPU} limit, or multinode.nodeCount)")


def gpus(template: Mapping[str, Any]) -> int | None:
    """The GPUs a pod of TEMPLATE requests (its containers' limits, else requests); None where none or
    unreadable."""
    total, found = 0, False
    for container in template["spec"].get("containers") or []:
        resources = container.get("resources") if isinstance(container, dict) else None
        amounts = [(resources or {}).get(kind) or {} for kind in ("limits", "requests")] \
            if isinstance(resources, dict) else []
        value = next((amount.get(GPU) for amount in amounts if isinstance(amount, dict) and GPU in amount), None)
        if value is None:
            continue
        amount = count(str(value))
        if amount is None:
            return None
        total, found = total + amount, True
    return total if found else None


def _spelled(server: ServerCommand, option: Option, occurrence: Occurrence | None) -> str:
    """OPTION as the command line spells it, else as its engine's first spelling."""
    return occurrence.written if occurrence is not None else option.name(server.engine)


def _size(server: ServerCommand, option: Option) -> tuple[int, Occurrence | None] | None:
    """OPTION's value as a count, 1 where not given; None where it is no count (a shell expansion)."""
    value, occurrence = server.value(option)
    if occurrence is None:
        return 1, None
    size = None if value is None else count(value)
    if size is None and value is not None and value.isascii() and value.isdigit():
        raise InvalidSpec(server.where, server.field(occurrence), f"must be a size of at most {MAX_COUNT_DIGITS} "
                          f"digits, got {show(value)}")
    if size is None or size < 1:
        return None
    return size, occurrence
