"""The serving pods that read a role's weights: from the model cache (``cache``) or a pvc:// claim, mounted
read-only, or from the hub at its revision.

A serving pod that reads the cache (every node of a multi-node replica) waits for its folders in an init
container, mounts the volume read-only, and its engine is given the local path with hub access off. The
model name clients ask for stays what the command names. A pvc:// source is mounted where it is.

vLLM loads a role's LoRA adapters, placed on the cache by their Jobs, when a request first names them (its
filesystem resolver, runtime LoRA on), so adding an adapter runs a Job and restarts no replica; SGLang,
which has no resolver, is given the placed adapters at start.

The engines' compile caches go on the same volume, read-write, one folder per engine image (a compiled
kernel is only valid for the versions that made it).
"""

from __future__ import annotations

import hashlib
import re

from fusion_helm.errors import InvalidSpec, show
from fusion_helm.expand.cache import (
    HUB_TOKEN_KEY,
    MODELS_DIR,
    RESTRICTED_CONTAINER,
    WEIGHTS_VOLUME,
    FetchJob,
    adapters_folder,
    fetches_of,
    on_cache,
    serving_image,
)
from fusion_helm.expand.names import cache_claim_name
from fusion_helm.expand.proxies import entries
from fusion_helm.model import InferenceService, Role
from fusion_helm.model.engine import ServerCommand
from fusion_helm.model.engine_flags import (
    ENABLE_LORA,
    LOAD_FORMAT,
    LORA_MODULES,
    LORA_PATHS,
    REVISION,
    SERVED_MODEL_NAME,
    Engine,
)
from fusion_helm.model.weights import Scheme, WeightsSource

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from fusion_helm.expand.pods import Change, Pod

HUB_REPOSITORY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+")
"""A model named as the hub names it (ORG/NAME): in a command line beside model.source, a claim on which
weights are served, not a local path."""
HUB_TOKEN_VOLUME = "hub-token"
HUB_TOKEN_DIR = "/var/run/secrets/fusioninfer.io/hub"
"""Where an engine that downloads its weights reads the hub's token (huggingface_hub's HF_TOKEN_PATH): a file of
the serving container's alone, never an environment variable, which every process of the pod may read and
crash reports and debug endpoints print."""
COMPILE_DIR = "/compile-cache"
"""Where a serving container keeps its engine's compile caches: its image's folder on the cache volume."""
COMPILE_FOLDER = "compile"
"""The compile caches' folder on the cache volume, beside the sources' (hf, s3)."""
RUNTIME_LORA_ENV = {"VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true"}
"""vLLM resolves a model name it does not serve through its LoRA resolvers only with this on."""
RESOLVER_DIR_ENV = "VLLM_LORA_RESOLVER_CACHE_DIR"
"""vLLM's filesystem resolver's folder: an adapter named NAME is loaded from its NAME folder. (The resolver
is one of vLLM's general plugins, all loaded while VLLM_PLUGINS is unset.)"""
PLUGINS_ENV, FILESYSTEM_RESOLVER = "VLLM_PLUGINS", "lora_filesystem_resolver"
WAIT_RESOURCES = {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"cpu": "100m", "memory": "64Mi"}}
"""A shell polling for folders: stated, so that a namespace whose ResourceQuota asks every container for its
requests and limits takes the serving pods."""
WAIT_SECONDS = 5
WAIT_SCRIPT = ('pause=$1; shift; while [ "$#" -gt 0 ]; do until [ -d "$1" ]; do '
               'echo "waiting for $1, which Job $2 fetches"; sleep "$pause"; done; shift 2; done')
"""The serving pods' init container: waits for each folder (its arguments: the pause, then each folder and
the Job that fetches it), never splicing a value into the script."""
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
"""A serving pod reading the cache never asks the hub (a cached model that is incomplete fails to start,
rather than downloading on its own)."""
COMPILE_ENV: Mapping[Engine | None, Mapping[str, str]] = {
    Engine.VLLM: {"VLLM_CACHE_ROOT": "vllm", "TRITON_CACHE_DIR": "triton", "TORCHINDUCTOR_CACHE_DIR": "inductor"},
    Engine.SGLANG: {"TRITON_CACHE_DIR": "triton", "TORCHINDUCTOR_CACHE_DIR": "inductor",
                    "SGLANG_DG_CACHE_DIR": "deep_gemm", "FLASHINFER_WORKSPACE_BASE": "flashinfer"},
    None: {"TRITON_CACHE_DIR": "triton", "TORCHINDUCTOR_CACHE_DIR": "inductor"},
}
"""Per engine, where its compilers keep what they compiled, under COMPILE_DIR: vLLM's torch.compile cache
(VLLM_CACHE_ROOT/torch_compile_cache), Triton's and TorchInductor's kernels, SGLang's DeepGEMM and
FlashInfer JIT builds."""


def reading(service: InferenceService, role: Role, jobs: tuple[FetchJob, ...]) -> Change | None:
    """How each pod of ROLE reads its weights, JOBS fetching those on the cache; None: the role names no
    source (its engine's command names the model, and the engine fetches it)."""
    if role.weights is None:
        return None
    return _Reading(service, role, role.weights, jobs).pod


class _Reading:
    """How ROLE's pods read SOURCE (and its adapters)."""

    def __init__(self, service: InferenceService, role: Role, source: WeightsSource, jobs: tuple[FetchJob, ...]
                 ) -> None:
        self.service, self.role, self.source = service, role, source
        names = {job.fetch: job.name for job in jobs}
        self.fetches = {fetch: names[fetch] for fetch in fetches_of(service, role) if fetch in names}
        self.cached = bool(self.fetches)
        self.on_volume = self.cached or source.scheme is Scheme.PVC
        self.resolving = bool(role.adapters) and role.server(service.where).engine is Engine.VLLM
        """vLLM loads the adapters when first asked for them, from their folder; SGLang at start."""

    @property
    def adapters_dir(self) -> str:
        """Where the serving containers find this role's adapters, placed by name."""
        return on_cache(adapters_folder(self.service, self.source))

    @property
    def resolver_env(self) -> dict[str, str]:
        """What turns vLLM's filesystem resolver on over the adapters' folder."""
        return {**RUNTIME_LORA_ENV, RESOLVER_DIR_ENV: self.adapters_dir}

    @property
    def local_path(self) -> str:
        if self.source.scheme is Scheme.PVC:
            return "/".join(part for part in (MODELS_DIR, self.source.path) if part)
        return on_cache(self.source.cache_folder)

    @property
    def default_name(self) -> str:
        """The name clients ask for when the command names no model: hf's ORG/NAME, else the source's path
        (or its bucket or claim)."""
        return self.source.location if self.source.scheme is Scheme.HF else (self.source.path
                                                                              or self.source.location)

    def pod(self, pod: Pod) -> Pod:
        """POD reading the weights, its engine (where it runs one: a Ray worker's does not) told where they
        are."""
        spec = dict(pod.spec)
        serving, *others = spec["containers"]
        server = pod.server
        path = f"{self.role.template_path}.spec"
        for field, value in (("volumes", spec.get("volumes")), ("containers[0].volumeMounts",
                                                                 serving.get("volumeMounts")),
                             ("containers[0].env", serving.get("env")), ("initContainers", spec.get("initContainers"))):
            if value is not None and not isinstance(value, list):
                raise InvalidSpec(self.service.where, f"{path}.{field}",
                                  f"must be a list, to which reading the weights of {self.source.uri} adds")
        served = None if server is None else self._server(server)
        if served is not None:
            serving = pod.running(served)
        if self.on_volume:
            self._check_free(spec.get("volumes") or (), WEIGHTS_VOLUME, path)
            spec["volumes"] = [*(spec.get("volumes") or ()), self._volume()]
            serving = {**serving, "volumeMounts": [*(serving.get("volumeMounts") or ()), *self._mounts(server)]}
        elif self.source.credentials_secret is not None:
            self._check_free(spec.get("volumes") or (), HUB_TOKEN_VOLUME, path)
            token = {"key": HUB_TOKEN_KEY, "path": HUB_TOKEN_KEY}
            spec["volumes"] = [*(spec.get("volumes") or ()), {"name": HUB_TOKEN_VOLUME, "secret": {
                "secretName": self.source.credentials_secret, "items": [token]}}]
            serving = {**serving, "volumeMounts": [*(serving.get("volumeMounts") or ()), {
                "name": HUB_TOKEN_VOLUME, "mountPath": HUB_TOKEN_DIR, "readOnly": True}]}
        if self.resolving:
            self._check_resolver_env(serving.get("env") or (), f"{path}.containers[0].env")
        serving = {**serving, "env": _merged_env(serving.get("env") or (), self._env(server))}
        if self.cached:
            spec["initContainers"] = [*(spec.get("initContainers") or ()),
                                      self._wait(serving_image(self.service, self.role))]
        spec["containers"] = [serving, *others]
        return pod.with_spec(spec, served)

    def _check_free(self, volumes: Any, name: str, path: str) -> None:
        if any(volume.get("name") == name for volume in entries(volumes)):
            raise InvalidSpec(self.service.where, f"{path}.volumes",
                              f"has a volume named {name}, the name of the one reading the weights of "
                              f"{self.source.uri} adds: rename it")

    def _volume(self) -> dict[str, Any]:
        if self.source.scheme is Scheme.PVC:
            return {"name": WEIGHTS_VOLUME,
                    "persistentVolumeClaim": {"claimName": self.source.location, "readOnly": True}}
        return {"name": WEIGHTS_VOLUME, "persistentVolumeClaim": {"claimName": cache_claim_name(self.service)}}

    def _mounts(self, server: ServerCommand | None) -> list[dict[str, Any]]:
        mounts: list[dict[str, Any]] = [{"name": WEIGHTS_VOLUME, "mountPath": MODELS_DIR, "readOnly": True}]
        cache = self.service.model_cache
        if self.cached and cache is not None and cache.compile_cache:
            mounts.append({"name": WEIGHTS_VOLUME, "mountPath": COMPILE_DIR,
                           "subPath": f"{COMPILE_FOLDER}/{self._image_folder(server)}"})
        return mounts

    def _image_folder(self, server: ServerCommand | None) -> str:
        """The serving image's own folder: its name, made a folder name, and a hash of it (two images may
        read alike once made so)."""
        image = serving_image(self.service, self.role)
        readable = "".join(char if char.isalnum() or char in "._-" else "_" for char in image)[:80]
        engine = server.engine.value if server is not None and server.engine is not None else "other"
        return f"{engine}/{readable}-{hashlib.sha256(image.encode()).hexdigest()[:8]}"

    def _env(self, server: ServerCommand | None) -> list[dict[str, Any]]:
        if not self.on_volume:
            env: list[dict[str, Any]] = []
            if self.source.endpoint is not None:
                env.append({"name": "HF_ENDPOINT", "value": self.source.endpoint})
            if self.source.credentials_secret is not None:
                env.append({"name": "HF_TOKEN_PATH", "value": f"{HUB_TOKEN_DIR}/{HUB_TOKEN_KEY}"})
            return env
        env = [{"name": name, "value": value} for name, value in OFFLINE_ENV.items()]
        if self.resolving:
            env += [{"name": name, "value": value} for name, value in self.resolver_env.items()]
        cache = self.service.model_cache
        if self.cached and cache is not None and cache.compile_cache:
            engine = server.engine if server is not None else None
            env += [{"name": name, "value": f"{COMPILE_DIR}/{folder}"} for name, folder in COMPILE_ENV[engine].items()]
        return env

    def _check_resolver_env(self, env: Any, path: str) -> None:
        """The container's own env leaves vLLM's filesystem resolver on."""
        wanted = self.resolver_env
        for index, entry in enumerate(env):
            name, value = entry.get("name"), entry.get("value")
            if (name in wanted and value != wanted[name]) or (name == PLUGINS_ENV and FILESYSTEM_RESOLVER not in [
                    plugin.strip() for plugin in str(value or "").split(",")]):
                raise InvalidSpec(self.service.where, f"{path}[{index}]",
                                  f"sets {name}, and model.adapters has vLLM load its adapters by name through its "
                                  f"filesystem resolver, which needs {_resolver_needs(name, wanted)}: remove it")

    def _wait(self, image: str) -> dict[str, Any]:
        """Waits for the model's folder, then for its adapters: vLLM for their folder (made by the model's
        Job, so that adding one changes no pod), SGLang for each adapter, placed."""
        folders: list[tuple[str, str]] = []
        for fetch, job in self.fetches.items():
            if fetch.place is None:
                folders.append((self.local_path, job))
                if self.resolving and fetch.adapters_in is not None:
                    folders.append((on_cache(fetch.adapters_in), job))
            elif not self.resolving:
                folders.append((on_cache(fetch.place), job))
        return {"name": "wait-for-weights", "image": image,
                "command": ["sh", "-c", WAIT_SCRIPT, "wait-for-weights", str(WAIT_SECONDS),
                            *(word for folder in folders for word in folder)],
                "volumeMounts": [{"name": WEIGHTS_VOLUME, "mountPath": MODELS_DIR, "readOnly": True}],
                "resources": {kind: dict(amounts) for kind, amounts in WAIT_RESOURCES.items()},
                "securityContext": dict(RESTRICTED_CONTAINER)}

    def _server(self, server: ServerCommand) -> ServerCommand:
        """The engine told where the weights are, under the name clients ask for."""
        if server.engine is None:
            raise InvalidSpec(self.service.where, f"{server.path}.command",
                              "runs neither vllm nor sglang, so it cannot be told where the weights of "
                              f"{self.source.uri} are; run one of them, or leave model out and give the engine its "
                              "weights in its own command")
        named, named_at = server.model()
        if named is not None and named_at is not None and self.source.scheme is Scheme.HF \
                and HUB_REPOSITORY.fullmatch(named) and named.lower() != self.source.location.lower():
            raise InvalidSpec(self.service.where, named_at,
                              f"names the model {named}, and model.source serves the weights of {self.source.uri}: "
                              f"clients asking for {named} would be answered by {self.source.location}; name one "
                              "model in both, or leave the model out of the command (model.source says which "
                              "weights) and name what clients ask for with --served-model-name")
        why = f"the weights come from {self.source.uri}"
        if self.on_volume:
            server = server.without([REVISION], why).with_model(self.local_path, why)
        else:
            server = server.with_model(self.source.location, why).with_value(REVISION, str(self.source.revision),
                                                                             why)
        if not server.given(SERVED_MODEL_NAME):
            server = server.with_value(SERVED_MODEL_NAME, named or self.default_name, why)
        served = {occurrence.value for occurrence in server.occurrences(SERVED_MODEL_NAME)}
        for adapter in self.role.adapters:
            if adapter.name in served:
                raise InvalidSpec(self.service.where, adapter.field,
                                  f"{show(adapter.name)} is a name the model itself is served under: a request for it "
                                  "reaches the model, never the adapter; give the adapter a name of its own")
        if self.source.load_format is not None:
            server = server.with_value(LOAD_FORMAT, self.source.load_format, "model.loadFormat streams the weights")
        return self._adapters(server) if self.role.adapters else server

    def _adapters(self, server: ServerCommand) -> ServerCommand:
        """The engine with LoRA on, serving each adapter under its name: vLLM loading it when first asked
        (its resolver, from the environment), SGLang at start (--lora-paths NAME=PATH…)."""
        assert server.engine is not None
        option = LORA_MODULES if server.engine is Engine.VLLM else LORA_PATHS
        for occurrence in server.occurrences(option):
            raise InvalidSpec(self.service.where, server.field(occurrence),
                              f"{occurrence.written} names adapters, and so does model.adapters: name each in one "
                              "place (model.adapters fetches them onto the cache)")
        why = "model.adapters loads its adapters"
        for occurrence in server.occurrences(ENABLE_LORA):
            if occurrence.written.startswith("--no-"):
                raise InvalidSpec(self.service.where, server.field(occurrence),
                                  f"{occurrence.written} turns LoRA off, and model.adapters loads adapters: remove it")
        if not server.given(ENABLE_LORA):
            server = server.appended([ENABLE_LORA.name(server.engine)], why)
        if server.engine is Engine.VLLM:
            return server
        return server.appended([option.name(server.engine), *(f"{adapter.name}={self.adapters_dir}/{adapter.name}"
                                                              for adapter in self.role.adapters)], why)


def _resolver_needs(name: str, wanted: Mapping[str, str]) -> str:
    return f"{PLUGINS_ENV} to include {FILESYSTEM_RESOLVER} (or to be unset)" if name == PLUGINS_ENV else \
        f"{name}={wanted[name]}"


def _merged_env(given: Any, added: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The container's env with ADDED after it, but for names it sets itself (its own value stands)."""
    own = {entry.get("name") for entry in given}
    return [*given, *(entry for entry in added if entry["name"] not in own)]
