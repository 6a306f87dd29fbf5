"""How a multi-node replica's nodes join (``multinode.bootstrap``), and the default an image implies.

Each bootstrap is one engine's way of launching over several nodes; what it appends to the server's
command and which of a replica's pods serve follow from it (``fusion_helm/expand/bootstrap.py``)."""

from __future__ import annotations

from enum import StrEnum

from fusion_helm.errors import InvalidSpec, show
from fusion_helm.limits import count
from fusion_helm.model.engine import server_command
from fusion_helm.model.engine_flags import DATA_PARALLEL_SIZE_LOCAL, Engine
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


class Bootstrap(StrEnum):
    RAY = "ray"
    """A Ray cluster per replica, the server on its head (the design's vLLM v0.11 images)."""
    VLLM = "vllm"
    """vLLM's own multi-node launch: --nnodes/--node-rank/--master-addr, workers --headless."""
    VLLM_DATA_PARALLEL = "vllm-data-parallel"
    """One vLLM data-parallel engine per node (wide expert parallelism)."""
    SGLANG = "sglang"
    """SGLang's: --dist-init-addr/--nnodes/--node-rank."""
    CUSTOM = "custom"
    """The leader's and the workers' own templates, run as written."""

    @property
    def default_port(self) -> int:
        return _DEFAULT_PORTS[self]

    @property
    def default_serving_command(self) -> tuple[str, ...]:
        return SGLANG_SERVING_COMMAND if self is Bootstrap.SGLANG else VLLM_SERVING_COMMAND

    @property
    def engine(self) -> Engine | None:
        """The engine it launches (custom: whatever its templates run)."""
        return _ENGINES.get(self)


_DEFAULT_PORTS = {Bootstrap.RAY: 6379, Bootstrap.VLLM: 29501, Bootstrap.VLLM_DATA_PARALLEL: 29550,
                  Bootstrap.SGLANG: 20000, Bootstrap.CUSTOM: 0}
"""vLLM's --master-port and --data-parallel-rpc-port defaults; SGLang's examples' dist-init port."""
_ENGINES = {Bootstrap.RAY: Engine.VLLM, Bootstrap.VLLM: Engine.VLLM, Bootstrap.VLLM_DATA_PARALLEL: Engine.VLLM,
            Bootstrap.SGLANG: Engine.SGLANG}
VLLM_SERVING_COMMAND = ("vllm", "serve")
"""The vllm/vllm-openai image's entrypoint."""
SGLANG_SERVING_COMMAND = ("python3", "-m", "sglang.launch_server")
"""The lmsysorg/sglang image has no entrypoint: its examples run the server module."""
RAY_REMOVED = (0, 19)
"""The first vLLM release whose image has no Ray (vLLM 0.19 dropped it from its dependencies)."""
VLLM_IMAGE = "vllm-openai"


@record
class DataParallel:
    ranks_per_node: int
    hybrid_load_balancing: bool = False
    """Every node serves its own ranks; else the leader serves them all and the workers run headless."""


@record
class MultiNode:
    """A role's ``multinode`` beyond its nodeCount, defaults applied."""

    bootstrap: Bootstrap
    port: int
    """The rendezvous port on the leader (0 for custom: the templates name their own)."""
    data_parallel: DataParallel | None = None
    worker_template: Mapping[str, Any] | None = None
    """Custom: the workers' own template (else they run the leader's)."""
    leader_args: tuple[str, ...] = ()
    """Server flags the leader's server gets and the workers' do not."""
    worker_args: tuple[str, ...] = ()
    """Server flags the workers' servers get and the leader's does not."""


SINGLE_NODE_FIELDS = ("dataParallel", "workerTemplate", "leaderArgs", "workerArgs")
"""What a replica of one node would never use."""


def parse_multinode(raw: Mapping[str, Any], node_count: int, template: Mapping[str, Any], path: str, where: str
                    ) -> MultiNode | None:
    """RAW (a role's ``multinode``, NODE_COUNT nodes a replica) with its bootstrap decided: as given, else from
    what TEMPLATE's serving container runs, refused by field where neither says; None for a single node."""
    if node_count < 2:
        for field in SINGLE_NODE_FIELDS:
            if field in raw:
                raise InvalidSpec(where, f"{path}.{field}", "only applies to nodeCount 2 or more")
        return None
    given = raw.get("bootstrap")
    bootstrap = Bootstrap(given) if given is not None else implied_bootstrap(raw, template, path, where)
    for field, wanted in (("dataParallel", Bootstrap.VLLM_DATA_PARALLEL), ("workerTemplate", Bootstrap.CUSTOM)):
        if field in raw and bootstrap is not wanted:
            raise InvalidSpec(where, f"{path}.{field}", f"only applies to bootstrap {wanted}, not {bootstrap}")
    if "workerTemplate" not in raw and bootstrap is Bootstrap.CUSTOM:
        raise InvalidSpec(where, f"{path}.workerTemplate", f"is required with bootstrap {Bootstrap.CUSTOM}")
    if bootstrap is Bootstrap.CUSTOM:
        for field in ("servingCommand", "rendezvousPort", "leaderArgs", "workerArgs"):
            if field in raw:
                raise InvalidSpec(where, f"{path}.{field}",
                                  "does not apply to bootstrap custom: its templates run as written")
    if bootstrap is Bootstrap.RAY and "workerArgs" in raw:
        raise InvalidSpec(where, f"{path}.workerArgs",
                          "does not apply to bootstrap ray: its workers run Ray, not the server (the leader's server "
                          "runs on every node through Ray)")
    return MultiNode(
        bootstrap=bootstrap,
        port=raw.get("rendezvousPort", bootstrap.default_port),
        data_parallel=_data_parallel(raw, template, path, where) if bootstrap is Bootstrap.VLLM_DATA_PARALLEL
        else None,
        worker_template=raw.get("workerTemplate"),
        leader_args=tuple(raw.get("leaderArgs") or ()),
        worker_args=tuple(raw.get("workerArgs") or ()),
    )


def _data_parallel(raw: Mapping[str, Any], template: Mapping[str, Any], path: str, where: str) -> DataParallel:
    """``dataParallel``, its ranks a node read off the engine's own --data-parallel-size-local where it gives it
    (as llm-d's wide-EP manifests do): it must agree with ranksPerNode, or stand for it."""
    given = raw.get("dataParallel")
    server = server_command(template["spec"]["containers"][0], raw.get("servingCommand") or VLLM_SERVING_COMMAND,
                            where, f"{path.rpartition('.')[0]}.template.spec.containers[0]").as_engine(Engine.VLLM)
    value, occurrence = server.value(DATA_PARALLEL_SIZE_LOCAL)
    if occurrence is None:
        if given is None or "ranksPerNode" not in given:
            field = "dataParallel" if given is None else "dataParallel.ranksPerNode"
            raise InvalidSpec(where, f"{path}.{field}",
                              f"is required with bootstrap {Bootstrap.VLLM_DATA_PARALLEL} (the ranks a node), unless "
                              f"the engine gives {DATA_PARALLEL_SIZE_LOCAL.name(Engine.VLLM)}")
        return DataParallel(given["ranksPerNode"], given.get("hybridLoadBalancing", False))
    ranks = None if value is None else count(value)
    if ranks is None or ranks < 1:
        raise InvalidSpec(where, server.field(occurrence),
                          f"must give a number of data-parallel ranks a node, which bootstrap "
                          f"{Bootstrap.VLLM_DATA_PARALLEL} reads as dataParallel.ranksPerNode, got {show(value)}")
    if given is not None and "ranksPerNode" in given and given["ranksPerNode"] != ranks:
        raise InvalidSpec(where, server.field(occurrence),
                          f"{occurrence.written} {value} and {path}.dataParallel.ranksPerNode "
                          f"{given['ranksPerNode']} disagree; give the ranks a node once")
    return DataParallel(ranks, (given or {}).get("hybridLoadBalancing", False))


def implied_bootstrap(raw: Mapping[str, Any], template: Mapping[str, Any], path: str, where: str) -> Bootstrap:
    """What the serving container says of its engine: an SGLang server or image is SGLang's; a
    vllm/vllm-openai image is Ray's before v0.19 (its images have Ray), vLLM's own launch after."""
    container = template["spec"]["containers"][0]
    engine = server_command(container, raw.get("servingCommand") or (), where, f"{path}.servingCommand").engine
    image = str(container.get("image") or "")
    repository, tag = image_name(image)
    if engine is Engine.SGLANG or "sglang" in repository:
        return Bootstrap.SGLANG
    if repository.rsplit("/", 1)[-1] == VLLM_IMAGE and (release := version(tag)) is not None:
        return Bootstrap.RAY if release < RAY_REMOVED else Bootstrap.VLLM
    raise InvalidSpec(
        where, f"{path}.bootstrap",
        f"is required: the image {show(image)} does not say how its nodes join (a vllm/vllm-openai image with "
        "a release tag or an SGLang image would); choose ray (the image has Ray: vLLM before 0.19), vllm "
        "(vLLM's own multi-node launch), vllm-data-parallel, sglang or custom (docs/expansion.md)")


def image_name(image: str) -> tuple[str, str]:
    """IMAGE's repository and tag ("" without one; a digest alone names no release)."""
    name = image.split("@", 1)[0]
    repository, _, tag = name.rpartition(":") if ":" in name.rsplit("/", 1)[-1] else (name, "", "")
    return repository, tag


def version(tag: str) -> tuple[int, ...] | None:
    """A release tag's (major, minor), as v0.11.0, 0.11.0 or v0.19.1-cu128 write it; None for latest,
    nightly and the like."""
    numbers = tag.removeprefix("v").split("-", 1)[0].split(".")
    major, minor = (count(numbers[0]), count(numbers[1])) if len(numbers) >= 2 else (None, None)
    return None if major is None or minor is None else (major, minor)

