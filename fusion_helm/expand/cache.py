"""The model cache: the volume a service's weights are fetched onto once, and the Jobs that fetch them.

A source that is fetched (hf://, s3://) is copied once per service and revision onto the cache volume by a
Job running the fetch program (``fusion_helm/programs/fetch.py``) in the serving image, which has the hub's
client. It downloads into a folder of its own and renames it into place when every file is verified, so a
folder at the revision's path is always whole. A LoRA adapter is fetched the same way, then placed, under
the name clients ask for, in its service's adapter folder for its base model (ADAPTERS_FOLDER), which the
base's Job makes. How the serving pods read the cache: ``weights``.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

from fusion_helm.base.kinds import CONFIG_MAP, JOB, PERSISTENT_VOLUME_CLAIM
from fusion_helm.base.labels import LABEL_FETCHES_FOR, LABEL_SERVICE
from fusion_helm.errors import InvalidSpec, format_path, show
from fusion_helm.expand import resources
from fusion_helm.expand.labelling import object_metadata
from fusion_helm.expand.names import FETCH_DIGEST_LENGTH, cache_claim_name, fetch_job_name, fetch_program_name
from fusion_helm.expand.quantity import parse_quantity
from fusion_helm.model import InferenceService, Role
from fusion_helm.model.weights import ModelCache, Scheme, WeightsSource
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

MODELS_DIR = "/models"
"""Where a serving container finds the cache volume (or a pvc:// claim), read-only."""
ADAPTERS_FOLDER = "lora"
"""The placed adapters' folder on the cache volume: ``lora/SERVICE/BASE'S FOLDER/NAME``."""
WEIGHTS_VOLUME = "fusioninfer-weights"
PROGRAM_DIR = "/opt/fusioninfer"
PROGRAM = "fetch.py"
PROGRAM_SOURCE = Path(__file__).resolve().parent.parent / "programs" / PROGRAM
FETCH_DIR = "/cache"
"""Where the fetch Job mounts the cache volume, read-write."""
SCRATCH_DIR = "/tmp"
FETCH_USER = 65532
"""The fetch Job's and the wait's user: no root needed to write the volume (fsGroup makes it theirs)."""
HUB_TOKEN_KEY = "token"
S3_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
RESTRICTED_CONTAINER: Mapping[str, Any] = {
    "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True,
    "runAsNonRoot": True, "runAsUser": FETCH_USER, "runAsGroup": FETCH_USER,
    "seccompProfile": {"type": "RuntimeDefault"}}
"""The Pod Security Standard "restricted" for the containers we add (the wait, the fetch)."""


def on_cache(folder: str) -> str:
    """A folder of the cache volume, as the serving containers see it."""
    return f"{MODELS_DIR}/{folder}"


def adapters_folder(service: InferenceService, base: WeightsSource) -> str:
    """Where, on the cache volume, SERVICE's adapters of BASE are placed for the engines."""
    return f"{ADAPTERS_FOLDER}/{service.name}/{base.cache_folder}"


@record
class Fetch:
    """One fetch Job's work: SOURCE onto the cache; for a base model with adapters, the folder they are
    placed in made (ADAPTERS_IN); for an adapter, placed (PLACE) for the engines serving ADAPTER_OF."""

    source: WeightsSource
    adapters_in: str | None = None
    place: str | None = None
    adapter_of: str | None = None


@record
class FetchJob:
    """A fetch, and the Job that does it."""

    fetch: Fetch
    job: Mapping[str, Any]

    @property
    def name(self) -> str:
        return str(self.job["metadata"]["name"])


def fetch_jobs(service: InferenceService) -> tuple[FetchJob, ...]:
    """The Jobs that fill SERVICE's cache: one per distinct fetch, in role order (none without a cache)."""
    cache = service.model_cache
    if cache is None:
        return ()
    found: dict[Fetch, FetchJob] = {}
    for role in service.roles:
        for fetch in fetches_of(service, role):
            if fetch.source.fetched and fetch not in found:
                found[fetch] = FetchJob(fetch, _fetch_job(service, cache, role, fetch))
    return tuple(found.values())


def fetches_of(service: InferenceService, role: Role) -> list[Fetch]:
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


def cache_objects(service: InferenceService, jobs: tuple[FetchJob, ...]) -> list[dict[str, Any]]:
    """The claim the service makes, the fetch program and the fetch JOBS."""
    cache = service.model_cache
    if cache is None:
        return []
    objects = [] if cache.claim_name is not None else [_claim(service, cache)]
    if jobs:
        objects.append(_program(service))
        objects += [dict(job.job) for job in jobs]
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
            "metadata": object_metadata(service, fetch_program_name(service.name), {LABEL_SERVICE: service.name}),
            "data": {PROGRAM: PROGRAM_SOURCE.read_text()}}


def _fetch_job(service: InferenceService, cache: ModelCache, role: Role, fetch: Fetch) -> dict[str, Any]:
    """The Job that does FETCH, first read by ROLE. Its name ends in a hash of what it runs: a Job's pod
    template cannot change, so any change (a new revision, a new image) is a new Job, which finds a complete
    revision already there and ends at once."""
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
                        {"name": "program", "configMap": {"name": fetch_program_name(service.name)}},
                        {"name": "scratch", "emptyDir": {}}],
        },
    }
    spec = {"backoffLimit": cache.fetch_retries, "template": pod}
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:FETCH_DIGEST_LENGTH]
    return {"apiVersion": JOB.api_version, "kind": JOB.kind,
            "metadata": object_metadata(service, fetch_job_name(service.name, digest),
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


def _fetch_env(source: WeightsSource) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = [{"name": "HOME", "value": SCRATCH_DIR}]
    if source.scheme is Scheme.HF:
        # Plain HTTP downloads, resumable file by file: hf-xet's chunk store lives outside the folder we
        # verify, and many pods at once are what the hub rate-limits.
        env += [{"name": "HF_HUB_DISABLE_XET", "value": "1"}, {"name": "HF_HOME", "value": f"{SCRATCH_DIR}/hf"}]
        if source.endpoint is not None:
            env.append({"name": "HF_ENDPOINT", "value": source.endpoint})
        if source.credentials_secret is not None:
            env.append(secret_env("HF_TOKEN", source.credentials_secret, HUB_TOKEN_KEY))
    else:
        env += [{"name": "AWS_REGION", "value": str(source.region)}, {"name": "AWS_EC2_METADATA_DISABLED",
                                                                       "value": "true"}]
        if source.endpoint is not None:
            env.append({"name": "AWS_ENDPOINT_URL", "value": source.endpoint})
        if source.credentials_secret is not None:
            env += [secret_env(key, source.credentials_secret, key) for key in S3_KEYS]
    return env


def secret_env(name: str, secret: str, key: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}
