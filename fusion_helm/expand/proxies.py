"""Routing proxies a pod template may already run in front of its engine, and the ports a pod's containers
take: what the expansion must know before it puts a proxy of its own there or moves the engine.

llm-d's guides and many users' values carry llm-d's prefill/decode proxy in their decode pods: before
llm-d v0.10 ``ghcr.io/llm-d/llm-d-routing-sidecar`` (flags ``--port``, ``--vllm-port``), since then
``ghcr.io/llm-d/llm-d-router-disagg-sidecar`` (``--port``, ``--model-server-port``, ``--vllm-port`` kept as
its deprecated name). Both are Go programs: a flag is ``-name`` or ``--name``, its value after ``=`` or
in the next word (a switch only after ``=``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from fusion_helm.limits import count
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@record
class ProxyKind:
    """A routing proxy's image and flags."""

    repository: str
    """The image's repository name (its last path segment): a mirror's copy is the same proxy."""
    engine_port_flags: tuple[str, ...]
    """The flags naming the engine's port, the one it reads first ahead."""
    default_engine_port: int
    pool_flags: tuple[str, ...]
    """The flags naming the InferencePool its SSRF protection allows (``namespace/name`` or ``name``)."""
    listen_flag: str = "port"
    default_listen_port: int = 8000


ROUTING_PROXIES = (
    ProxyKind("llm-d-router-disagg-sidecar", ("model-server-port", "vllm-port"), 8200, ("inference-pool",)),
    ProxyKind("llm-d-routing-sidecar", ("vllm-port",), 8001, ("inference-pool-name",)),
)
"""llm-d's prefill/decode proxies, newest first: each listens where the pool routes and forwards to the
engine."""
SSRF_FLAG = "enable-ssrf-protection"


@record
class Proxy:
    """A routing proxy a pod template runs."""

    kind: ProxyKind
    container: Mapping[str, Any]
    field: str
    """``initContainers[i]`` or ``containers[i]``, under the template's spec."""

    @property
    def words(self) -> list[str]:
        return words_of(self.container)

    @property
    def listen_port(self) -> str:
        return go_flag(self.words, self.kind.listen_flag) or str(self.kind.default_listen_port)

    @property
    def engine_port(self) -> str:
        for flag in self.kind.engine_port_flags:
            value = go_flag(self.words, flag)
            if value is not None:
                return value
        return str(self.kind.default_engine_port)

    @property
    def ssrf_protection(self) -> bool:
        return (go_flag(self.words, SSRF_FLAG) or "false").lower() in ("true", "1", "t")

    @property
    def pool(self) -> str | None:
        """The pool its SSRF protection allows, as the flag names it."""
        for flag in self.kind.pool_flags:
            value = go_flag(self.words, flag)
            if value is not None:
                return value
        return None

    def port_name(self, port: str) -> str | None:
        """The name the proxy's container declares PORT under, if any."""
        for given in entries(self.container.get("ports")):
            if str(given.get("containerPort")) == port and given.get("name"):
                return str(given["name"])
        return None


def routing_proxy(template: Mapping[str, Any]) -> Proxy | None:
    """The routing proxy TEMPLATE runs, if any: one of llm-d's, from any registry or mirror."""
    for field, container in _containers(template["spec"]):
        repository = image_repository(str(container.get("image") or ""))
        for kind in ROUTING_PROXIES:
            if repository == kind.repository:
                return Proxy(kind, container, field)
    return None


def image_repository(image: str) -> str:
    """An image's repository name, its last path segment: ``llm-d-routing-sidecar`` of
    ``ghcr.io/llm-d/llm-d-routing-sidecar:v0.3.0``."""
    return image.partition("@")[0].rpartition("/")[2].partition(":")[0]


def _containers(spec: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for field in ("initContainers", "containers"):
        for index, container in enumerate(spec.get(field) or []):
            yield f"{field}[{index}]", container


def entries(value: Any) -> list[Mapping[str, Any]]:
    """The objects of a list field of a template, as read: a malformed field or entry reads as none (the
    schema check of the object written refuses it by field)."""
    return [entry for entry in value if isinstance(entry, Mapping)] if isinstance(value, list) else []


def words_of(container: Mapping[str, Any]) -> list[str]:
    """A container's command and args, as read (a malformed one reads as none)."""
    return [str(word) for field in ("command", "args") if isinstance(container.get(field), list)
            for word in container[field]]


def go_flag(words: Sequence[str], name: str) -> str | None:
    """The last value WORDS give flag NAME, as Go's flag packages read it (``-name v``, ``--name=v``; a
    flag alone is a switch turned on)."""
    value = None
    for index, word in enumerate(words):
        flag, equals, given = word.lstrip("-").partition("=") if word.startswith("-") else ("", "", "")
        if flag != name or word.startswith("---"):
            continue
        if equals:
            value = given
        elif index + 1 < len(words) and not words[index + 1].startswith("-"):
            value = words[index + 1]
        else:
            value = "true"
    return value


def taken_ports(spec: Mapping[str, Any]) -> dict[int, str]:
    """The ports the pod's containers take, each with the field that takes it: every declared container
    port, and every port a container's flags name (any ``--…port`` flag, in either engine's spelling)."""
    taken: dict[int, str] = {}
    for field, container in _containers(spec):
        ports = container.get("ports")
        for index, given in enumerate(ports if isinstance(ports, list) else []):
            port = given.get("containerPort") if isinstance(given, Mapping) else None
            if isinstance(port, int):
                taken.setdefault(port, f"{field}.ports[{index}]")
        words = words_of(container)
        for index, word in enumerate(words):
            flag, equals, value = word.partition("=")
            if not (flag.startswith("-") and flag.replace("_", "-").endswith("port")):
                continue
            if not equals:
                value = words[index + 1] if index + 1 < len(words) else ""
            if (port := count(value)) is not None:
                taken.setdefault(port, f"{field}.{_word_field(container, index)}")
    return taken


def _word_field(container: Mapping[str, Any], index: int) -> str:
    command = len(container["command"]) if isinstance(container.get("command"), list) else 0
    return f"command[{index}]" if index < command else f"args[{index - command}]"
