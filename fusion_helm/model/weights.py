"""Where a role's weights come from (``spec.model``, ``roles[].model``) and the volume that keeps them
(``spec.modelCache``), read from the spec and checked field by field."""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType

from fusion_helm.base import needs
from fusion_helm.errors import InvalidSpec, show
from fusion_helm.model.metadata import check_annotation_map
from fusion_helm.records import EMPTY, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

COMMIT = re.compile(r"[0-9a-f]{40}")
"""A hub revision that cannot move: a commit's full hash."""
DEFAULT_S3_REVISION = "current"
DEFAULT_S3_REGION = "us-east-1"
DEFAULT_FETCH_RETRIES = 6
DEFAULT_FETCH_RESOURCES: Mapping[str, Any] = MappingProxyType({"requests": {"cpu": "500m", "memory": "1Gi"},
                                                               "limits": {"memory": "4Gi"}})
"""A fetch streams files to disk and hashes them: half a core and a little memory; the limit keeps a
runaway off the node's memory (no CPU limit: it would only slow the fetch)."""


class Scheme(StrEnum):
    HF = "hf"
    """The Hugging Face hub (or a mirror of it): ORG/NAME at a commit."""
    PVC = "pvc"
    """A claim of the namespace that already holds the weights: CLAIM/PATH."""
    S3 = "s3"
    """An S3-compatible object store: BUCKET/PREFIX."""


@record
class WeightsSource:
    """``model``: one role's weights."""

    scheme: Scheme
    location: str
    """hf: ORG/NAME; pvc: the claim; s3: the bucket."""
    path: str = ""
    """pvc: the folder inside the claim; s3: the key prefix; hf: none. Without leading or trailing ``/``."""
    revision: str | None = None
    credentials_secret: str | None = None
    endpoint: str | None = None
    region: str | None = None
    load_format: str | None = None
    """The engine's --load-format (runai_streamer), or None: its own default."""

    @property
    def fetched(self) -> bool:
        """Copied onto the cache volume by a fetch Job (a claim is read where it is)."""
        return self.scheme.value in needs.FETCHED_SCHEMES

    @property
    def cache_folder(self) -> str:
        """Where a complete copy lies on the cache volume, relative to its root: one folder per source and
        revision, so a new revision is fetched beside the old one."""
        assert self.fetched and self.revision is not None
        return "/".join(part for part in (self.scheme.value, self.location, self.path, self.revision) if part)

    @property
    def uri(self) -> str:
        return f"{self.scheme.value}://" + "/".join(part for part in (self.location, self.path) if part)


@record
class Adapter:
    """``model.adapters[]``: a LoRA adapter of the model, fetched beside it, served under NAME."""

    name: str
    source: WeightsSource
    field: str = ""
    """Where its name is given (``...model.adapters[i].name``)."""


@record
class ModelCache:
    """``modelCache``: the volume hf:// and s3:// weights are fetched onto."""

    claim_name: str | None = None
    """An existing claim; None: the service makes one."""
    size: str | int | None = None
    storage_class: str | None = None
    access_mode: str = "ReadWriteMany"
    keep: bool = True
    compile_cache: bool = True
    fetch_image: str | None = None
    fetch_resources: Mapping[str, Any] = DEFAULT_FETCH_RESOURCES
    fetch_retries: int = DEFAULT_FETCH_RETRIES
    fetch_pod_annotations: Mapping[str, str] = EMPTY


def parse_source(raw: Mapping[str, Any], path: str, where: str) -> WeightsSource:
    """``model`` at PATH, checked beyond its schema: a hub revision is a commit, each field is its
    scheme's, and no path climbs out of its folder."""
    uri: str = raw["source"]
    scheme_name, _, rest = uri.partition("://")
    scheme = Scheme(scheme_name)
    parts = [part for part in rest.split("/") if part]
    for part in parts:
        if part in (".", ".."):
            raise InvalidSpec(where, f"{path}.source", f"names no folder {show(part)}: give the path itself, "
                                                         f"got {show(uri)}")
    location, inner = ("/".join(parts[:2]), "/".join(parts[2:])) if scheme is Scheme.HF else (parts[0],
                                                                                              "/".join(parts[1:]))
    revision = raw.get("revision")
    if scheme is Scheme.HF and (revision is None or not COMMIT.fullmatch(revision)):
        raise InvalidSpec(where, f"{path}.revision",
                          "must be the commit to serve, its 40 hexadecimal digits (a branch or tag would move "
                          "under a running service; the hub's model page lists the commits)"
                          + ("" if revision is None else f", got {show(revision)}"))
    if scheme is Scheme.PVC:
        for field in ("revision", "credentials", "endpoint"):
            if field in raw:
                raise InvalidSpec(where, f"{path}.{field}",
                                  "is for a source that is fetched (hf://, s3://); a pvc:// source is read where it is")
    if scheme is not Scheme.S3 and "region" in raw:
        raise InvalidSpec(where, f"{path}.region", "is an s3:// source's")
    if scheme is Scheme.S3:
        revision = revision or DEFAULT_S3_REVISION
    return WeightsSource(scheme=scheme, location=location, path=inner, revision=revision,
                         credentials_secret=(raw.get("credentials") or {}).get("secretName"),
                         endpoint=raw.get("endpoint"),
                         region=raw.get("region", DEFAULT_S3_REGION) if scheme is Scheme.S3 else None,
                         load_format=raw.get("loadFormat"))


def parse_cache(raw: Mapping[str, Any] | None, path: str, where: str) -> ModelCache | None:
    if raw is None:
        return None
    claim = raw.get("claimName")
    if claim is not None:
        for field in ("size", "storageClassName", "keep", "accessMode"):
            if field in raw:
                raise InvalidSpec(where, f"{path}.{field}",
                                  "is for the claim the service makes; claimName names one that exists "
                                  f"({show(claim)})")
    elif "size" not in raw:
        raise InvalidSpec(where, f"{path}.size",
                          "is required to make the service's claim (the weights of every revision kept, and the "
                          "compile caches), or name an existing one with claimName")
    fetch = raw.get("fetch") or {}
    _check_resources(fetch.get("resources") or {}, f"{path}.fetch.resources", where)
    check_annotation_map(where, f"{path}.fetch.podAnnotations", fetch.get("podAnnotations"))
    return ModelCache(claim_name=claim, size=raw.get("size"), storage_class=raw.get("storageClassName"),
                      access_mode=raw.get("accessMode", "ReadWriteMany"), keep=raw.get("keep", True),
                      compile_cache=raw.get("compileCache", True), fetch_image=fetch.get("image"),
                      fetch_resources=fetch.get("resources") or DEFAULT_FETCH_RESOURCES,
                      fetch_retries=fetch.get("backoffLimit", DEFAULT_FETCH_RETRIES),
                      fetch_pod_annotations=fetch.get("podAnnotations") or EMPTY)


def parse_adapters(raw: Mapping[str, Any], path: str, where: str) -> tuple[Adapter, ...]:
    """``model.adapters`` at PATH: each fetched (hf://, s3://), each name once."""
    adapters: list[Adapter] = []
    for index, item in enumerate(raw.get("adapters") or ()):
        source = parse_source(item, f"{path}.adapters[{index}]", where)
        if not source.fetched:
            raise InvalidSpec(where, f"{path}.adapters[{index}].source",
                              "an adapter is fetched onto spec.modelCache beside its model: give an hf:// or s3:// "
                              "source (an adapter already on a claim: name it in the engine's own command)")
        if any(adapter.name == item["name"] for adapter in adapters):
            raise InvalidSpec(where, f"{path}.adapters[{index}].name", f"{show(item['name'])} is named twice")
        adapters.append(Adapter(item["name"], source, f"{path}.adapters[{index}].name"))
    return tuple(adapters)


def _check_resources(resources: Mapping[str, Any], path: str, where: str) -> None:
    """A ResourceRequirements' shape (its quantities are checked where it is written): limits and requests,
    each of resource names to quantities."""
    for field, value in resources.items():
        if field not in ("limits", "requests"):
            raise InvalidSpec(where, f"{path}.{field}", "is not a field of a container's resources (limits, requests)")
        if not isinstance(value, Mapping) or not all(isinstance(name, str) and isinstance(amount, (str, int))
                                                     and not isinstance(amount, bool)
                                                     for name, amount in value.items()):
            raise InvalidSpec(where, f"{path}.{field}", f"must map resource names to quantities, got {show(value)}")


def check_fetchable(source: WeightsSource | None, adapters: tuple[Adapter, ...], cache: ModelCache | None,
                    path: str, where: str) -> None:
    """An s3:// source and any adapter are served from the cache volume only (no engine we start reads a
    bucket itself); a pvc:// model's volume is its own claim, where no fetched adapter lands."""
    if source is not None and source.scheme is Scheme.S3 and cache is None:
        raise InvalidSpec(where, f"{path}.source",
                          f"{show(source.uri)} is fetched onto the service's cache volume: add spec.modelCache "
                          "(claimName, or size for a claim the service makes)")
    if adapters and cache is None:
        raise InvalidSpec(where, f"{path}.adapters",
                          "are fetched onto the service's cache volume: add spec.modelCache (claimName, or size for "
                          "a claim the service makes)")
    if adapters and source is not None and source.scheme is Scheme.PVC:
        raise InvalidSpec(where, f"{path}.adapters",
                          f"are fetched onto the cache volume, and the model is read from its own claim "
                          f"({show(source.uri)}): fetch the model too (hf://, s3://), or name adapters on its claim "
                          "in the engine's own command")
