"""Routing proxies a pod template may already run in front of its engine, and the ports a pod's containers
take: what the expansion must know before it puts a proxy of its own there or moves the engine.

llm-d's guides and many users' values carry llm-d's prefill/decode proxy in their decode pods: before
llm-d v0.10 ``ghcr.io/llm-d/llm-d-routing-sidecar`` (flags ``--port``, ``--vllm-port``), since then
``ghcr.io/llm-d/llm-d-router-disagg-sidecar`` (``--port``, ``--model-server-port``, ``--vllm-port`` kept as
its deprecated name). Both are Go programs: a flag is ``-name`` or ``--name``, its value after ``=`` or
in the next word (a switch only after ``=``).

What each speaks, by release (their sources, cmd/ and internal/proxy/): llm-d-routing-sidecar 0.0.x reads
the prefill pod from ``x-prefiller-url`` alone and serves plain HTTP; from v0.2.0 it reads
``x-prefiller-host-port`` too (what llm-d-router's picker sends), serves HTTPS unless ``--secure-proxy=false``
and dials the engines in TLS with ``--prefiller-use-tls``/``--decoder-use-tls``; its ``--connector``
defaults to ``nixl`` (llm-d's early vLLM fork's protocol) before v0.3.0, ``nixlv2`` since.
llm-d-router-disagg-sidecar reads ``x-prefiller-host-port``, serves HTTPS unless ``--secure-proxy=false``,
dials the engines in TLS for the stages ``--enable-tls`` names, and speaks ``--kv-connector`` (default
``nixlv2``)."""

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
    connector_flag: str
    """The flag naming the KV-transfer protocol it drives the prefill and decode by."""
    default_connectors: tuple[tuple[Version, str], ...]
    """That flag's default, by the first release that has it (oldest first)."""
    host_port_header_since: Version
    """The first release that reads the prefill pod from ``x-prefiller-host-port``, what the picker sends."""
    tls_since: Version
    """The first release that serves HTTPS (by default) and can dial its engines in TLS."""
    engine_tls_flags: tuple[str, ...]
    """Its switches for TLS to the prefill and the decode engine; empty: one list flag, ``--enable-tls``."""
    listen_flag: str = "port"
    default_listen_port: int = 8000


Version = tuple[int, ...]
ANY: Version = (0,)
ROUTING_PROXIES = (
    ProxyKind("llm-d-router-disagg-sidecar", ("model-server-port", "vllm-port"), 8200, ("inference-pool",),
              "kv-connector", ((ANY, "nixlv2"),), ANY, ANY, ()),
    ProxyKind("llm-d-routing-sidecar", ("vllm-port",), 8001, ("inference-pool-name",),
              "connector", ((ANY, "nixl"), ((0, 3, 0), "nixlv2")), (0, 2, 0), (0, 2, 0),
              ("prefiller-use-tls", "decoder-use-tls")),
)
"""llm-d's prefill/decode proxies, newest first: each listens where the pool routes and forwards to the
engine."""
SSRF_FLAG = "enable-ssrf-protection"
PREFILL_HEADER = "x-prefiller-host-port"
"""The header llm-d-router's picker names the prefill pod it chose in (its pkg/common/routing)."""
SECURE_FLAG = "secure-proxy"
ENABLE_TLS_FLAG = "enable-tls"
TLS_STAGES = ("prefiller", "decoder")
"""The hops a proxy dials in TLS under spec.tls: the prefill engine, and its own decode engine."""


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
        return go_switch(self.words, SSRF_FLAG) is True

    @property
    def version(self) -> Version | None:
        return image_version(str(self.container.get("image") or ""))

    def _since(self, first: Version) -> bool | None:
        """Whether its release is FIRST or later; None where its image names no release."""
        if first == ANY:
            return True
        version = self.version
        return None if version is None else version >= first

    @property
    def reads_host_port_header(self) -> bool | None:
        return self._since(self.kind.host_port_header_since)

    @property
    def connector(self) -> str | None:
        """The KV-transfer protocol it drives (its flag, else its release's default); None: unknown."""
        given = go_flag(self.words, self.kind.connector_flag)
        if given is not None:
            return given
        version = self.version
        defaults = [mode for first, mode in self.kind.default_connectors
                    if first == ANY or (version is not None and version >= first)]
        unsure = version is None and len(self.kind.default_connectors) > 1
        return None if unsure or not defaults else defaults[-1]

    @property
    def serves_tls(self) -> bool | None:
        """It serves HTTPS (None: its release unknown and the flag not given)."""
        tls = self._since(self.kind.tls_since)
        if tls is False:
            return False
        given = go_switch(self.words, SECURE_FLAG)
        return given if given is not None else tls

    @property
    def dials_tls(self) -> tuple[bool, bool] | None:
        """Whether it dials the prefill engine and its decode engine in TLS (None: its release unknown)."""
        if not self._since(self.kind.tls_since):
            return None if self.version is None else (False, False)
        if self.kind.engine_tls_flags:
            prefill, decode = (go_switch(self.words, flag) is True for flag in self.kind.engine_tls_flags)
            return prefill, decode
        stages = {stage.strip() for value in go_flags(self.words, ENABLE_TLS_FLAG) for stage in value.split(",")}
        return TLS_STAGES[0] in stages, TLS_STAGES[1] in stages

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


def image_version(image: str) -> Version | None:
    """The release an image's tag names (``v0.3.0``, ``0.0.6``, ``v0.2.0-RC1``); None: a digest, latest."""
    tag = image.partition("@")[0].rpartition("/")[2].partition(":")[2]
    parts = tag.removeprefix("v").partition("-")[0].split(".")
    if len(parts) < 2 or not all(part.isdigit() and len(part) <= 6 for part in parts):
        return None
    return tuple(int(part) for part in parts)


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
    values = go_flags(words, name)
    return values[-1] if values else None


def go_flags(words: Sequence[str], name: str) -> list[str]:
    """Every value WORDS give flag NAME, in order (a list flag's, such as ``--enable-tls``, add up)."""
    values = []
    for index, word in enumerate(words):
        flag, equals, given = _go_flag_word(word)
        if flag != name:
            continue
        if equals:
            values.append(given)
        elif index + 1 < len(words) and not words[index + 1].startswith("-"):
            values.append(words[index + 1])
        else:
            values.append("true")
    return values


def go_switch(words: Sequence[str], name: str) -> bool | None:
    """The last setting WORDS give switch NAME, as Go's flag packages read a boolean flag: alone it is on
    (a word after it is no value of it), ``=false``/``=0``/``=f`` off; None where not given."""
    setting = None
    for word in words:
        flag, equals, given = _go_flag_word(word)
        if flag == name:
            setting = not equals or given.lower() in ("true", "1", "t")
    return setting


def _go_flag_word(word: str) -> tuple[str, str, str]:
    """A word as Go's flag packages read it: (the flag's name, "=" where its value follows, that value);
    ("", "", "") for a word that is no flag (no leading dash, or three)."""
    if not word.startswith("-") or word.startswith("---"):
        return "", "", ""
    return word.lstrip("-").partition("=")


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
