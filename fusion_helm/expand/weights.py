"""Weights ready when a replica starts: the cache volume, the Jobs that fill it, and the serving pods that
read it.

A source that is fetched (hf://, s3://) is copied once per service and revision onto the cache volume by a
Job running ``hooks/fetch.py`` in the serving image (which has the hub's client). It downloads into a
folder of its own and renames it into place when every file is verified, so a folder at the revision's
path is always whole: a serving pod (every node of a multi-node replica) waits for it in an init
container, mounts the volume read-only, and its engine is given the local path with hub access off. The
model name clients ask for stays what the command names. A pvc:// source is mounted where it is.

A LoRA adapter is fetched the same way, then placed, under the name clients ask for, in its service's
adapter folder for its base model (ADAPTERS_FOLDER), which the base's Job makes. vLLM loads it from there
when a request first names it (its filesystem resolver, runtime LoRA on), so adding an adapter runs a Job
and restarts no replica; SGLang, which has no resolver, is given the placed adapters at start.

The engines' compile caches go on the same volume, read-write, one folder per engine image (a compiled
kernel is only valid for the versions that made it).
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import NamedTuple

from fusion_helm.errors import InvalidSpec, format_path, show
from fusion_helm.expand import resources
from fusion_helm.expand.labelling import object_metadata
from fusion_helm.expand.quantity import parse_quantity
from fusion_helm.model import InferenceService, Role
from fusion_helm.model.engine import (
    ENABLE_LORA,
    LOAD_FORMAT,
    LORA_MODULES,
    LORA_PATHS,
    REVISION,
    SERVED_MODEL_NAME,
    Engine,
    ServerCommand,
)
from fusion_helm.model.weights import ModelCache, Scheme, WeightsSource
from fusion_helm.spec.kinds import CONFIG_MAP, JOB, PERSISTENT_VOLUME_CLAIM
from fusion_helm.spec.labels import LABEL_FETCHES_FOR, LABEL_SERVICE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from fusion_helm.expand.pods import RoleTemplates

MODELS_DIR = "/models"
"""Where a serving container finds the cache volume (or a pvc:// claim), read-only."""
COMPILE_DIR = "/compile-cache"
"""Where a serving container keeps its engine's compile caches: its image's folder on the cache volume."""
COMPILE_FOLDER = "compile"
"""The compile caches' folder on the cache volume, beside the sources' (hf, s3)."""
ADAPTERS_FOLDER = "lora"
"""The placed adapters' folder on the cache volume: ``lora/SERVICE/BASE'S FOLDER/NAME``."""
RUNTIME_LORA_ENV = {"VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true"}
"""vLLM resolves a model name it does not serve through its LoRA resolvers only with this on."""
RESOLVER_DIR_ENV = "VLLM_LORA_RESOLVER_CACHE_DIR"
"""vLLM's filesystem resolver's folder: an adapter named NAME is loaded from its NAME folder. (The resolver
is one of vLLM's general plugins, all loaded while VLLM_PLUGINS is unset.)"""
PLUGINS_ENV, FILESYSTEM_RESOLVER = "VLLM_PLUGINS", "lora_filesystem_resolver"
WEIGHTS_VOLUME = "fusioninfer-weights"
PROGRAM_DIR = "/opt/fusioninfer"
PROGRAM = "fetch.py"
PROGRAM_SOURCE = Path(__file__).resolve().parent.parent / "hooks" / PROGRAM
FETCH_DIR = "/cache"
"""Where the fetch Job mounts the cache volume, read-write."""
SCRATCH_DIR = "/tmp"
FETCH_USER = 65532
"""The fetch Job's and the wait's user: no root needed to write the volume (fsGroup makes it theirs)."""
WAIT_SECONDS = 5
WAIT_SCRIPT = ('pause=$1; shift; while [ "$#" -gt 0 ]; do until [ -d "$1" ]; do '
               'echo "waiting for $1, which Job $2 fetches"; sleep "$pause"; done; shift 2; done')
"""The serving pods' init container: waits for each folder (its arguments: the pause, then each folder and
the Job that fetches it), never splicing a value into the script."""
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
"""A serving pod reading the cache never asks the hub (a cached model that is incomplete fails to start,
rather than downloading on its own)."""
HUB_TOKEN_KEY = "token"
S3_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
COMPILE_ENV: Mapping[Engine | None, Mapping[str, str]] = {
    Engine.VLLM: {"VLLM_CACHE_ROOT": "vllm", "TRITON_CACHE_DIR": "triton", "TORCHINDUCTOR_CACHE_DIR": "inductor"},
    Engine.SGLANG: {"TRITON_CACHE_DIR": "triton", "TORCHINDUCTOR_CACHE_DIR": "inductor",
                    "SGLANG_DG_CACHE_DIR": "deep_gemm", "FLASHINFER_WORKSPACE_BASE": "flashinfer"},
    None: {"TRITON_CACHE_DIR": "triton", "TORCHINDUCTOR_CACHE_DIR": "inductor"},
}
"""Per engine, where its compilers keep what they compiled, under COMPILE_DIR: vLLM's torch.compile cache
(VLLM_CACHE_ROOT/torch_compile_cache), Triton's and TorchInductor's kernels, SGLang's DeepGEMM and
FlashInfer JIT builds."""
RESTRICTED_CONTAINER: Mapping[str, Any] = {
    "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True,
    "runAsNonRoot": True, "runAsUser": FETCH_USER, "runAsGroup": FETCH_USER,
    "seccompProfile": {"type": "RuntimeDefault"}}
"""The Pod Security Standard "restricted" for the containers we add (the wait, the fetch)."""


def cache_claim_name(service: InferenceService) -> str:
    cache = service.model_cache
    assert cache is not None
    return cache.claim_name or f"{service.name}-model-cache"


def program_name(service: InferenceService) -> str:
    """The ConfigMap holding the fetch program."""
    return f"{service.name}-fetch"


def on_cache(folder: str) -> str:
    """A folder of the cache volume, as the serving containers see it."""
    return f"{MODELS_DIR}/{folder}"


def adapters_folder(service: InferenceService, base: WeightsSource) -> str:
    """Where, on the cache volume, SERVICE's adapters of BASE are placed for the engines."""
    return f"{ADAPTERS_FOLDER}/{service.name}/{base.cache_folder}"


class Fetch(NamedTuple):
    """One fetch Job's work: SOURCE onto the cache; for a base model with adapters, the folder they are
    placed in made (ADAPTERS_IN); for an adapter, placed (PLACE) for the engines serving ADAPTER_OF."""

    source: WeightsSource
    adapters_in: str | None = None
    place: str | None = None
    adapter_of: str | None = None


def fetches(service: InferenceService) -> list[Fetch]:
    """The distinct fetches of SERVICE's cache, in role order."""
    if service.model_cache is None:
        return []
    found: list[Fetch] = []
    for role in service.roles:
        for fetch in _fetches_of(service, role):
            if fetch.source.fetched and fetch not in found:
                found.append(fetch)
    return found


def _fetches_of(service: InferenceService, role: Role) -> list[Fetch]:
    """What ROLE's pods read: its model, then its adapters, each placed beside the model."""
    base = role.weights
    if base is None:
        return []
    if not role.adapters:
        return [Fetch(base)]
    folder = adapters_folder(service, base)
    return [Fetch(base, adapters_in=folder),
            *(Fetch(adapter.source, place=f"{folder}/{adapter.name}", adapter_of=on_cache(base.cache_folder))
              for adapter in role.adapters)]


def weight_objects(service: InferenceService) -> list[dict[str, Any]]:
    """The claim the service makes, the fetch program and one fetch Job per source and revision (and, for
    an adapter, its base)."""
    cache = service.model_cache
    if cache is None:
        return []
    objects = [] if cache.claim_name is not None else [_claim(service, cache)]
    if found := fetches(service):
        objects.append(_program(service))
        objects += [_fetch_job(service, cache, fetch) for fetch in found]
    return objects


def _claim(service: InferenceService, cache: ModelCache) -> dict[str, Any]:
    assert cache.size is not None
    try:
        size = parse_quantity(cache.size)
    except ValueError:
        raise InvalidSpec(service.where, "spec.modelCache.size",
                          f"must be a quantity such as 200Gi, got {show(cache.size)}") from None
    if size.nanos <= 0:
        raise InvalidSpec(service.where, "spec.modelCache.size", f"must be more than 0, got {show(cache.size)}")
    metadata = object_metadata(service, cache_claim_name(service), {LABEL_SERVICE: service.name})
    if cache.keep:
        # Weights take hours to fetch again: an uninstall leaves them (helm deletes the claim only if told).
        metadata["annotations"] = {**metadata.get("annotations", {}), "helm.sh/resource-policy": "keep"}
    spec: dict[str, Any] = {"accessModes": [cache.access_mode], "resources": {"requests": {"storage": cache.size}}}
    if cache.storage_class is not None:
        spec["storageClassName"] = cache.storage_class
    return {"apiVersion": PERSISTENT_VOLUME_CLAIM.api_version, "kind": PERSISTENT_VOLUME_CLAIM.kind,
            "metadata": metadata, "spec": spec}


def _program(service: InferenceService) -> dict[str, Any]:
    return {"apiVersion": CONFIG_MAP.api_version, "kind": CONFIG_MAP.kind,
            "metadata": object_metadata(service, program_name(service), {LABEL_SERVICE: service.name}),
            "data": {PROGRAM: PROGRAM_SOURCE.read_text()}}


def _fetch_job(service: InferenceService, cache: ModelCache, fetch: Fetch) -> dict[str, Any]:
    """The Job that does FETCH. Its name ends in a hash of what it runs: a Job's pod template cannot
    change, so any change (a new revision, a new image) is a new Job, which finds a complete revision
    already there and ends at once."""
    role = next(role for role in service.roles if fetch in _fetches_of(service, role))
    source = fetch.source
    placing = ([] if fetch.adapters_in is None else ["--adapters-in", fetch.adapters_in]) + (
        [] if fetch.place is None else ["--adapter-of", str(fetch.adapter_of), "--place", fetch.place])
    container: dict[str, Any] = {
        "name": "fetch",
        "image": cache.fetch_image or serving_image(service, role),
        "command": ["python3", f"{PROGRAM_DIR}/{PROGRAM}"],
        "args": ["--source", source.uri, "--revision", str(source.revision), "--root", FETCH_DIR,
                 "--into", source.cache_folder, *placing],
        "env": _fetch_env(source),
        "volumeMounts": [{"name": WEIGHTS_VOLUME, "mountPath": FETCH_DIR},
                         {"name": "program", "mountPath": PROGRAM_DIR, "readOnly": True},
                         {"name": "scratch", "mountPath": SCRATCH_DIR}],
        "securityContext": dict(RESTRICTED_CONTAINER),
        # Its last words are why it failed (auth, not found, disk full): kubectl describe shows them.
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }
    try:
        resources.container_requests({"resources": cache.fetch_resources})
    except resources.QuantityError as error:
        raise InvalidSpec(service.where, format_path(["spec.modelCache.fetch", *error.path]), str(error)) from None
    container["resources"] = copy.deepcopy(dict(cache.fetch_resources))
    pod = {
        "metadata": {"labels": {LABEL_FETCHES_FOR: service.name},
                     **({"annotations": dict(cache.fetch_pod_annotations)} if cache.fetch_pod_annotations else {})},
        "spec": {
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,  # it reads a source, never the API server
            "securityContext": {"runAsNonRoot": True, "runAsUser": FETCH_USER, "runAsGroup": FETCH_USER,
                                "fsGroup": FETCH_USER, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [container],
            "volumes": [{"name": WEIGHTS_VOLUME, "persistentVolumeClaim": {"claimName": cache_claim_name(service)}},
                        {"name": "program", "configMap": {"name": program_name(service)}},
                        {"name": "scratch", "emptyDir": {}}],
        },
    }
    spec = {"backoffLimit": cache.fetch_retries, "template": pod}
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:10]
    return {"apiVersion": JOB.api_version, "kind": JOB.kind,
            "metadata": object_metadata(service, fetch_job_name(service, digest),
                                        {LABEL_SERVICE: service.name, LABEL_FETCHES_FOR: service.name}),
            "spec": spec}


def serving_image(service: InferenceService, role: Role) -> str:
    """ROLE's serving image, which the fetch Job and the wait run and the compile cache's folder is named
    for: refused by field where it is not a name."""
    image = role.template["spec"]["containers"][0].get("image")
    if not isinstance(image, str) or not image:
        raise InvalidSpec(service.where, f"{role.template_path}.spec.containers[0].image",
                          f"must be the serving image's name, got {show(image)}")
    return image


def fetch_job_name(service: InferenceService, digest: str) -> str:
    return f"{service.name}-fetch-{digest}"


def _fetch_env(source: WeightsSource) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = [{"name": "HOME", "value": SCRATCH_DIR}]
    if source.scheme is Scheme.HF:
        # Plain HTTP downloads, resumable file by file: hf-xet's chunk store lives outside the folder we
        # verify, and many pods at once are what the hub rate-limits.
        env += [{"name": "HF_HUB_DISABLE_XET", "value": "1"}, {"name": "HF_HOME", "value": f"{SCRATCH_DIR}/hf"}]
        if source.endpoint is not None:
            env.append({"name": "HF_ENDPOINT", "value": source.endpoint})
        if source.credentials_secret is not None:
            env.append(_secret_env("HF_TOKEN", source.credentials_secret, HUB_TOKEN_KEY))
    else:
        env += [{"name": "AWS_REGION", "value": str(source.region)}, {"name": "AWS_EC2_METADATA_DISABLED",
                                                                       "value": "true"}]
        if source.endpoint is not None:
            env.append({"name": "AWS_ENDPOINT_URL", "value": source.endpoint})
        if source.credentials_secret is not None:
            env += [_secret_env(key, source.credentials_secret, key) for key in S3_KEYS]
    return env


def _secret_env(name: str, secret: str, key: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


def with_weights(service: InferenceService, templates: Mapping[str, RoleTemplates]) -> dict[str, RoleTemplates]:
    """TEMPLATES with each role that names a source reading it: from the cache (or its claim) where it is
    on a volume, else from the hub at its revision."""
    result = dict(templates)
    cache = service.model_cache
    fetch_jobs = {} if cache is None else {fetch: _fetch_job(service, cache, fetch)["metadata"]["name"]
                                           for fetch in fetches(service)}
    for role in service.roles:
        if role.weights is None:
            continue
        current = templates[role.name]
        reading = _Reading(service, role, role.weights, fetch_jobs, current.leading[1])
        leader = None if current.leader is None else reading.pod(current.leader, current.leader_server,
                                                                  current.launched)
        worker = reading.pod(current.worker, current.worker_server, current.launched)
        result[role.name] = current.with_servers(
            None if leader is None else leader[0], None if leader is None else leader[1], worker[0], worker[1])
    return result


class _Reading:
    """How ROLE's pods read SOURCE (and its adapters, LEADING being the command line of a replica's
    leader)."""

    def __init__(self, service: InferenceService, role: Role, source: WeightsSource,
                 fetch_jobs: Mapping[Fetch, str], leading: ServerCommand | None) -> None:
        self.service, self.role, self.source = service, role, source
        self.fetches = {fetch: fetch_jobs[fetch] for fetch in _fetches_of(service, role) if fetch in fetch_jobs}
        self.cached = bool(self.fetches)
        self.on_volume = self.cached or source.scheme is Scheme.PVC
        self.resolving = bool(role.adapters) and leading is not None and leading.engine is Engine.VLLM
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

    def pod(self, template: Mapping[str, Any], server: ServerCommand | None, launched: bool
            ) -> tuple[dict[str, Any], ServerCommand | None]:
        """TEMPLATE reading the weights, and its engine's command line (SERVER, None: no engine of its own,
        as a Ray worker's) told where they are; LAUNCHED: a bootstrap runs the command line as its args."""
        spec = dict(template["spec"])
        serving, *others = spec["containers"]
        path = f"{self.role.template_path}.spec"
        for field, value in (("volumes", spec.get("volumes")), ("containers[0].volumeMounts",
                                                                 serving.get("volumeMounts")),
                             ("containers[0].env", serving.get("env")), ("initContainers", spec.get("initContainers"))):
            if value is not None and not isinstance(value, list):
                raise InvalidSpec(self.service.where, f"{path}.{field}",
                                  f"must be a list, to which reading the weights of {self.source.uri} adds")
        served = None if server is None else self._server(server)
        if served is not None:
            serving = {**serving, "args": list(served.words)} if launched else served.write(serving)
        if self.on_volume:
            for volume in spec.get("volumes") or ():
                if volume.get("name") == WEIGHTS_VOLUME:
                    raise InvalidSpec(self.service.where, f"{path}.volumes",
                                      f"has a volume named {WEIGHTS_VOLUME}, the name of the one the weights are "
                                      "read from: rename it")
            spec["volumes"] = [*(spec.get("volumes") or ()), self._volume()]
            serving = {**serving, "volumeMounts": [*(serving.get("volumeMounts") or ()), *self._mounts(server)]}
        if self.resolving:
            self._check_resolver_env(serving.get("env") or (), f"{path}.containers[0].env")
        serving = {**serving, "env": _merged_env(serving.get("env") or (), self._env(server))}
        if self.cached:
            spec["initContainers"] = [*(spec.get("initContainers") or ()),
                                      self._wait(serving_image(self.service, self.role))]
        spec["containers"] = [serving, *others]
        return {**template, "spec": spec}, served

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
                env.append(_secret_env("HF_TOKEN", self.source.credentials_secret, HUB_TOKEN_KEY))
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
                "securityContext": dict(RESTRICTED_CONTAINER)}

    def _server(self, server: ServerCommand) -> ServerCommand:
        """The engine told where the weights are, under the name clients ask for."""
        if server.engine is None:
            raise InvalidSpec(self.service.where, f"{server.path}.command",
                              "runs neither vllm nor sglang, so it cannot be told where the weights of "
                              f"{self.source.uri} are; run one of them, or leave model out and give the engine its "
                              "weights in its own command")
        named, _ = server.model()
        why = f"the weights come from {self.source.uri}"
        if self.on_volume:
            server = server.without([REVISION], why).with_model(self.local_path, why)
        else:
            server = server.with_model(self.source.location, why).with_value(REVISION, str(self.source.revision),
                                                                             why)
        if not server.given(SERVED_MODEL_NAME):
            server = server.with_value(SERVED_MODEL_NAME, named or self.default_name, why)
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
