"""Fetch one model source at one revision onto the cache volume: the fetch Job's program.

    python3 fetch.py --source hf://ORG/NAME --revision COMMIT --root /cache --into hf/ORG/NAME/COMMIT
    python3 fetch.py ... --adapters-in lora/SERVICE/hf/ORG/BASE/COMMIT        (a model with adapters)
    python3 fetch.py ... --adapter-of /models/hf/ORG/BASE/COMMIT --place lora/SERVICE/.../NAME

It runs in the serving image (Python 3.9 or later, the standard library and the source's own client:
huggingface_hub for hf://, boto3 for s3://). Files go into a folder of their own under ROOT/.partial,
WORKERS at a time, largest first (a model's weights are a few large shards: one stream each keeps the
link full, as the hub's own snapshot_download does; boto3 splits each object into ranged parts besides).
Each is verified against what the source says it is (the hub's sha256 of a large file, the git blob hash
of a small one; an object's MD5 where its ETag is one) as soon as it is complete, while the others still
come, and the folder is renamed to ROOT/INTO only when all are: a folder at INTO is always whole, and the
serving pods wait for it. A retry (the Job's next pod) keeps the files already complete and verifies them
again, and the hub's client resumes a file it had begun. Two Jobs fetching the same revision onto one volume take turns
(a lock beside the folder). Progress is one line per file on stdout; a failure is one line saying why
(auth, not found, disk full, a file that does not match), also the pod's termination message.

A LoRA adapter is then placed where its engine finds it by name (ROOT/PLACE, named as clients ask for
it): its files linked, and its adapter_config.json naming its base model as the engine names it (vLLM's
filesystem resolver loads only an adapter whose base_model_name_or_path is the engine's --model, which
is the base's path on the cache, not the hub name the adapter was trained on).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import sys
import threading
import time
import warnings
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

ADAPTER_CONFIG = "adapter_config.json"
PARTIAL = ".partial"
"""Under ROOT: folders being fetched, and their locks."""
ETAGS = ".fusioninfer-etags.json"
"""In an s3:// folder being fetched: the ETag of each object already complete, so a retry skips it."""
TERMINATION_LOG = "/dev/termination-log"
CHUNK = 8 * 2**20
GB = 10**9
WORKERS = 8
"""Files fetched at once: the hub's snapshot_download's default."""


class FetchFailed(Exception):
    """Why the fetch cannot complete, said for a person (one line)."""


class File:
    """One file of the source: where it goes and what it must be."""

    def __init__(self, name: str, size: int, sha256: str | None = None, git_blob: str | None = None,
                 md5: str | None = None, key: str | None = None, etag: str | None = None) -> None:
        self.name, self.size, self.sha256, self.git_blob, self.md5 = name, size, sha256, git_blob, md5
        self.key, self.etag = key, etag


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fetch a model source onto the cache volume.")
    parser.add_argument("--source", required=True)
    parser.add_argument("--revision", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--into", required=True)
    parser.add_argument("--adapters-in", help="the folder, under ROOT, where this model's adapters are placed")
    parser.add_argument("--adapter-of", help="the base model's path as its engine names it (--model)")
    parser.add_argument("--place", help="where, under ROOT, the adapter is placed for its engine")
    parser.add_argument("--workers", type=int, default=WORKERS, help=f"files fetched at once (default {WORKERS})")
    args = parser.parse_args(argv)
    if (args.adapter_of is None) != (args.place is None):
        parser.error("--adapter-of and --place go together")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    # A client's warnings (the hub's "not enough free disk space") are progress, on stdout: stderr is the
    # one line that says why the fetch failed.
    warnings.showwarning = lambda message, category, *_: _say(f"{category.__name__}: {message}")
    started = time.monotonic()
    try:
        files, total = fetch(args.source, args.revision, args.root, args.into, args.workers)
    except FetchFailed as failure:
        return _fail(f"cannot fetch {args.source} at {args.revision}: {failure}")
    except OSError as error:
        return _fail(f"cannot fetch {args.source} at {args.revision}: {_os_reason(error, args.root)}")
    except Exception as error:  # a client's own failure we have no words for: still one line, not a traceback
        return _fail(f"cannot fetch {args.source} at {args.revision}: {type(error).__name__}: {_first_line(error)}")
    if files is None:
        _say(f"{args.source} at {args.revision} is already complete in {args.into}")
    else:
        _say(f"fetched {args.source} at {args.revision}: {files} files, {total / GB:.2f} GB, each verified, "
             f"in {time.monotonic() - started:.0f} s, into {args.into}")
    try:
        arranged = arrange_adapters(args.root, args.into, args.adapters_in, args.place, args.adapter_of)
    except FetchFailed as failure:
        return _fail(f"cannot place the adapters of {args.source} at {args.revision}: {failure}")
    except OSError as error:
        return _fail(f"cannot place the adapters of {args.source} at {args.revision}: "
                     f"{_os_reason(error, args.root)}")
    if arranged is not None:
        _say(arranged)
    return 0


def fetch(source: str, revision: str, root: str, into: str, workers: int = WORKERS) -> tuple[int | None, int]:
    """Fetch SOURCE at REVISION to ROOT/INTO, WORKERS files at once; (files, bytes), or (None, 0) where it was
    already there."""
    final = _inside(root, into)
    if os.path.isdir(final):
        return None, 0
    partial = _inside(root, f"{PARTIAL}/{into}")
    os.makedirs(os.path.dirname(partial), exist_ok=True)
    with _locked(partial + ".lock"):
        if os.path.isdir(final):  # another Job finished it while this one waited
            return None, 0
        os.makedirs(partial, exist_ok=True)
        scheme, _, location = source.partition("://")
        if scheme == "hf":
            files = _fetch_hub(location, revision, partial, workers)
        elif scheme == "s3":
            files = _fetch_bucket(location, partial, workers)
        else:
            raise FetchFailed(f"no fetcher for {scheme}://")
        shutil.rmtree(os.path.join(partial, ".cache"), ignore_errors=True)  # the hub client's bookkeeping
        _remove_if_present(os.path.join(partial, ETAGS))
        os.makedirs(os.path.dirname(final), exist_ok=True)
        os.rename(partial, final)
    return len(files), sum(file.size for file in files)


def arrange_adapters(root: str, into: str, adapters_in: str | None, place: str | None, adapter_of: str | None
                     ) -> str | None:
    """For LoRA, after the fetch: a model's adapters' folder made (ADAPTERS_IN, which its serving pods wait
    for), or the adapter fetched to INTO placed (PLACE, for the engines serving ADAPTER_OF); what was done,
    said for a person."""
    if adapters_in is not None:
        os.makedirs(_inside(root, adapters_in), exist_ok=True)
        return f"its adapters are placed in {adapters_in}"
    if place is None or adapter_of is None:
        return None
    if place_adapter(root, into, place, adapter_of):
        return f"placed the adapter in {place}, for {adapter_of}"
    return f"the adapter is already placed in {place}"


def place_adapter(root: str, into: str, place: str, base: str) -> bool:
    """The adapter fetched to ROOT/INTO placed at ROOT/PLACE for an engine serving BASE: its files linked
    (copied where the volume links none), its config naming BASE; False where it was already placed. Like
    a fetch, it is built aside and renamed into place whole."""
    final = _inside(root, place)
    if os.path.isdir(final):
        return False
    fetched = _inside(root, into)
    config = _read_json(os.path.join(fetched, ADAPTER_CONFIG))
    if config.get("peft_type") != "LORA":
        said = "is missing or unreadable" if not config else f"says peft_type {config.get('peft_type')!r}"
        raise FetchFailed(f"it is not a LoRA adapter: its {ADAPTER_CONFIG} {said}")
    partial = _inside(root, f"{PARTIAL}/{place}")
    os.makedirs(os.path.dirname(partial), exist_ok=True)
    with _locked(partial + ".lock"):
        if os.path.isdir(final):
            return False
        shutil.rmtree(partial, ignore_errors=True)
        for folder, _, names in os.walk(fetched):
            target = os.path.join(partial, os.path.relpath(folder, fetched))
            os.makedirs(target, exist_ok=True)
            for name in names:
                if folder != fetched or name != ADAPTER_CONFIG:
                    _link(os.path.join(folder, name), os.path.join(target, name))
        _write_json(os.path.join(partial, ADAPTER_CONFIG), {**config, "base_model_name_or_path": base})
        os.makedirs(os.path.dirname(final), exist_ok=True)
        os.rename(partial, final)
    return True


def _link(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _fetch_hub(repo: str, revision: str, into: str, workers: int) -> list[File]:
    try:
        import huggingface_hub
        from huggingface_hub import errors
    except ImportError:
        raise FetchFailed("the image has no huggingface_hub (the hub's client): set modelCache.fetch.image to "
                          "one that has it, such as the serving engine's") from None
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    try:
        def fetch_one(file: File) -> None:
            # In a folder, the hub's client skips a file it completed before (its metadata says so).
            huggingface_hub.hf_hub_download(repo, file.name, revision=revision, local_dir=into)
            _verify(into, file)

        return _each(_hub_files(huggingface_hub.HfApi(), repo, revision), fetch_one, workers)
    except errors.GatedRepoError:
        raise FetchFailed(f"{repo} is gated on {endpoint}: the token (HF_TOKEN, from model.credentials) has not "
                          "been granted access; accept its terms on the model's page with the token's account"
                          ) from None
    except errors.RevisionNotFoundError:
        raise FetchFailed(f"{repo} has no revision {revision} on {endpoint}") from None
    except errors.RepositoryNotFoundError:
        raise FetchFailed(f"no repository {repo} on {endpoint} (or it is private and the token, HF_TOKEN from "
                          "model.credentials, gives no access to it)") from None
    except errors.HfHubHTTPError as error:
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status in (401, 403):
            raise FetchFailed(f"{endpoint} refused the token (HTTP {status}): check the Secret named by "
                              "model.credentials, key token") from None
        if status == 404:
            raise FetchFailed(f"not found on {endpoint}: neither the repository nor that revision of it "
                              f"({_first_line(error)})") from None
        raise FetchFailed(f"{endpoint} answered HTTP {status}: {_first_line(error)}") from None
    except (errors.LocalEntryNotFoundError, errors.OfflineModeIsEnabled) as error:
        raise FetchFailed(f"cannot reach {endpoint}: {_first_line(error)}") from None


def _hub_files(api: Any, repo: str, revision: str) -> list[File]:
    files = []
    for entry in api.list_repo_tree(repo, revision=revision, recursive=True):
        if not hasattr(entry, "blob_id"):  # a folder
            continue
        lfs = getattr(entry, "lfs", None)
        sha256 = (lfs.get("sha256") if isinstance(lfs, dict) else getattr(lfs, "sha256", None)) if lfs else None
        files.append(File(entry.path, entry.size, sha256=sha256, git_blob=None if sha256 else entry.blob_id))
    if not files:
        raise FetchFailed(f"{repo} at {revision} has no files")
    return sorted(files, key=lambda file: file.name)


def _fetch_bucket(location: str, into: str, workers: int) -> list[File]:
    try:
        import boto3
        from botocore import exceptions
    except ImportError:
        raise FetchFailed("the image has no boto3 (the S3 client): set modelCache.fetch.image to one that has it"
                          ) from None
    bucket, _, prefix = location.partition("/")
    prefix = prefix.strip("/")
    client = boto3.client("s3")
    endpoint = client.meta.endpoint_url
    etags_path = os.path.join(into, ETAGS)
    complete: dict[str, str] = _read_json(etags_path)
    recording = threading.Lock()
    try:
        def fetch_one(file: File) -> None:
            target = _inside(into, file.name)
            if complete.get(file.name) != file.etag or not os.path.isfile(target):
                os.makedirs(os.path.dirname(target), exist_ok=True)
                # boto3's transfer manager: an object of more than 8 MB in ranged parts, 10 at once.
                client.download_file(bucket, file.key, target + ".part")
                os.replace(target + ".part", target)
            _verify(into, file)
            with recording:
                complete[file.name] = file.etag or ""
                _write_json(etags_path, complete)

        return _each(_bucket_files(client, bucket, prefix), fetch_one, workers)
    except exceptions.NoCredentialsError:
        raise FetchFailed(f"no credentials for s3://{bucket}: name a Secret in model.credentials (keys "
                          "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)") from None
    except exceptions.EndpointConnectionError as error:
        raise FetchFailed(f"cannot reach {endpoint}: {_first_line(error)}") from None
    except exceptions.ClientError as error:
        code = str(error.response.get("Error", {}).get("Code", ""))
        if code in ("NoSuchBucket", "404"):
            raise FetchFailed(f"no bucket {bucket} at {endpoint}") from None
        if code in ("AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "403", "401"):
            raise FetchFailed(f"{endpoint} refused the credentials for s3://{bucket} ({code}): check the Secret "
                              "named by model.credentials") from None
        raise FetchFailed(f"{endpoint} answered {code}: {_first_line(error)}") from None


def _bucket_files(client: Any, bucket: str, prefix: str) -> list[File]:
    files = []
    start = f"{prefix}/" if prefix else ""
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=start):
        for item in page.get("Contents", ()):
            key: str = item["Key"]
            if key.endswith("/"):  # a folder marker
                continue
            etag = item.get("ETag", "").strip('"')
            # A single-part upload's ETag is its MD5; a multipart one's (with a dash) is not: its size is checked.
            md5 = etag if len(etag) == 32 and all(char in "0123456789abcdef" for char in etag) else None
            files.append(File(key[len(start):], int(item["Size"]), md5=md5, key=key, etag=etag))
    if not files:
        raise FetchFailed(f"nothing under s3://{bucket}/{start}")
    return sorted(files, key=lambda file: file.name)


def _each(files: list[File], fetch_one: Callable[[File], None], workers: int) -> list[File]:
    """FILES, each fetched and verified by FETCH_ONE, WORKERS at once and the largest first; a line each, as
    each completes, saying how far the fetch is. The first failure is raised once the files under way end
    (each complete one is kept for a retry); no file starts after it."""
    total, done = sum(file.size for file in files), 0
    with ThreadPoolExecutor(max_workers=min(workers, len(files))) as pool:
        pending = {pool.submit(fetch_one, file): file for file in sorted(files, key=lambda file: -file.size)}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_EXCEPTION)
            for future in finished:
                file = pending.pop(future)
                error = future.exception()
                if error is not None:
                    for waiting in pending:
                        waiting.cancel()
                    raise error
                done += file.size
                _say(f"[{len(files) - len(pending)}/{len(files)}] {file.name}: {file.size / GB:.2f} GB, verified "
                     f"({done / GB:.2f} of {total / GB:.2f} GB)")
    return files


def _verify(folder: str, file: File) -> None:
    """FILE as fetched into FOLDER is what the source says it is; else it is removed (a retry fetches it
    again) and the fetch fails."""
    path = _inside(folder, file.name)
    size = os.path.getsize(path)
    problem = None
    if size != file.size:
        problem = f"has {size} bytes, the source says {file.size}"
    else:
        for algorithm, expected, prefix in (("sha256", file.sha256, b""),
                                            ("sha1", file.git_blob, f"blob {size}\0".encode()),
                                            ("md5", file.md5, b"")):
            if expected is not None:
                actual = _digest(path, algorithm, prefix)
                if actual != expected:
                    problem = f"has {algorithm} {actual}, the source says {expected}"
                break
    if problem is not None:
        os.remove(path)
        raise FetchFailed(f"{file.name} {problem} (removed: a retry fetches it again)")


def _digest(path: str, algorithm: str, prefix: bytes) -> str:
    digest = hashlib.new(algorithm, prefix)
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _inside(root: str, relative: str) -> str:
    """ROOT/RELATIVE, refused where it would lie outside ROOT (a source's file named ``../x``)."""
    base = os.path.realpath(root)
    path = os.path.realpath(os.path.join(base, relative))
    if path != base and not path.startswith(base + os.sep):
        raise FetchFailed(f"{relative!r} would lie outside {root}")
    return path


class _locked:
    """An exclusive lock on PATH for the block: another Job fetching the same revision waits."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.handle: Any = None

    def __enter__(self) -> None:
        self.handle = open(self.path, "a")
        try:
            fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _say(f"another fetch holds {self.path}: waiting for it")
            fcntl.flock(self.handle, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        self.handle.close()


def _os_reason(error: OSError, root: str) -> str:
    if error.errno == errno.ENOSPC or "os error 28" in str(error):
        free = shutil.disk_usage(root).free if os.path.isdir(root) else 0
        return (f"no space left on the cache volume ({free / GB:.2f} GB free): make modelCache.size larger, or "
                "remove revisions no service serves")
    if error.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
        return f"cannot write the cache volume: {error}"
    return _first_line(error)


def _read_json(path: str) -> dict[str, Any]:
    try:
        with open(path) as handle:
            found = json.load(handle)
        return found if isinstance(found, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_json(path: str, value: dict[str, Any]) -> None:
    with open(path + ".tmp", "w") as handle:
        json.dump(value, handle)
    os.replace(path + ".tmp", path)


def _remove_if_present(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _say(line: str) -> None:
    print(line, flush=True)


def _fail(reason: str) -> int:
    print(reason, file=sys.stderr, flush=True)
    try:  # the file the kubelet mounts for it; made by no one else (outside a pod there is none)
        descriptor = os.open(TERMINATION_LOG, os.O_WRONLY | os.O_TRUNC)
    except OSError:
        return 1
    with os.fdopen(descriptor, "w") as handle:
        handle.write(reason)
    return 1


if __name__ == "__main__":
    sys.exit(main())
