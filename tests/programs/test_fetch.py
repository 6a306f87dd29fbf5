"""The fetch Job's program (fusion_helm/programs/fetch.py) against a real hub (olah) and a real S3 store (moto's
server) on loopback, run as the Job runs it: what it fetches is whole and verified, a new revision lands
beside the old, a retry keeps the files already complete, and each failure says why in one line."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import model_sources
from tests.engines import SOURCES, built
from tests.model_sources import Hub

pytestmark = pytest.mark.engines

MB = 2**20
SMALL = {"config.json": b'{"architectures": ["LlamaForCausalLM"]}\n', "README.md": b"# tiny\n",
         "sub/notes.txt": b"notes\n"}


def weights(size: int, seed: int) -> bytes:
    return hashlib.sha256(str(seed).encode()).digest() * (size // 32)


LARGE = {"model-00001-of-00002.safetensors": weights(8 * MB, 1), "model-00002-of-00002.safetensors":
         weights(96 * MB, 2)}


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    with model_sources.hub(tmp_path / "hub") as served:
        yield served


def fetched(root: Path, into: str) -> dict[str, bytes]:
    return model_sources.files_of(root / into)


def test_a_hub_revision_is_fetched_whole_verified_and_once(hub: Hub, tmp_path: Path) -> None:
    commit = hub.repository("org/tiny", SMALL, LARGE)
    root, into = tmp_path / "cache", f"hf/org/tiny/{commit}"
    first = model_sources.fetch("hf://org/tiny", commit, root, into, {"HF_ENDPOINT": hub.endpoint})
    assert first.returncode == 0, first.stderr
    assert fetched(root, into) == {**SMALL, **LARGE}  # the hub client's bookkeeping left out
    progress = [line for line in first.stdout.splitlines() if line.startswith("[")]
    assert sorted(line.split("] ")[1].split(":")[0] for line in progress) == sorted({**SMALL, **LARGE})
    assert "model-00002-of-00002.safetensors: 0.10 GB, verified" in first.stdout
    assert progress[-1].startswith("[5/5] ") and progress[-1].endswith("(0.11 of 0.11 GB)"), progress
    assert "each verified" in first.stdout.splitlines()[-1]
    assert not any((root / ".partial").rglob("*.safetensors"))
    again = model_sources.fetch("hf://org/tiny", commit, root, into, {"HF_ENDPOINT": hub.endpoint})
    assert again.returncode == 0 and "already complete" in again.stdout, again


def test_a_new_revision_is_fetched_beside_the_old_one(hub: Hub, tmp_path: Path) -> None:
    first = hub.repository("org/tiny", SMALL, {"model.safetensors": weights(MB, 1)})
    second = hub.commit("org/tiny", {"config.json": b'{"changed": true}\n'})
    root = tmp_path / "cache"
    for commit in (first, second):
        result = model_sources.fetch("hf://org/tiny", commit, root, f"hf/org/tiny/{commit}",
                                     {"HF_ENDPOINT": hub.endpoint})
        assert result.returncode == 0, result.stderr
    assert fetched(root, f"hf/org/tiny/{first}")["config.json"] == SMALL["config.json"]
    assert fetched(root, f"hf/org/tiny/{second}")["config.json"] == b'{"changed": true}\n'


def test_an_adapter_is_placed_by_name_naming_its_base_as_the_engine_does(hub: Hub, tmp_path: Path) -> None:
    """The model's Job makes its adapters' folder; an adapter's Job places it there under its name, its files
    linked and its config naming the base's path on the cache (vLLM's resolver loads no other)."""
    base = hub.repository("org/tiny", SMALL, {"model.safetensors": weights(MB, 1)})
    config = {"peft_type": "LORA", "base_model_name_or_path": "org/tiny", "r": 8}
    adapter = hub.repository("org/tiny-sql", {"adapter_config.json": json.dumps(config).encode()},
                             {"adapter_model.safetensors": weights(MB, 2)})
    root, env = tmp_path / "cache", {"HF_ENDPOINT": hub.endpoint}
    folder, served_as = f"lora/svc/hf/org/tiny/{base}", f"/models/hf/org/tiny/{base}"
    made = model_sources.fetch("hf://org/tiny", base, root, f"hf/org/tiny/{base}", env, "--adapters-in", folder)
    assert made.returncode == 0 and made.stdout.splitlines()[-1] == f"its adapters are placed in {folder}", made
    assert (root / folder).is_dir() and not any((root / folder).iterdir())

    into, placing = f"hf/org/tiny-sql/{adapter}", ["--adapter-of", served_as, "--place", f"{folder}/sql"]
    placed = model_sources.fetch("hf://org/tiny-sql", adapter, root, into, env, *placing)
    assert placed.returncode == 0, placed.stderr
    assert placed.stdout.splitlines()[-1] == f"placed the adapter in {folder}/sql, for {served_as}"
    files = fetched(root, f"{folder}/sql")
    assert json.loads(files.pop("adapter_config.json")) == {**config, "base_model_name_or_path": served_as}
    assert files == {"adapter_model.safetensors": weights(MB, 2)}
    assert os.path.samefile(root / folder / "sql" / "adapter_model.safetensors",
                            root / into / "adapter_model.safetensors")  # linked, not a second copy
    assert json.loads(fetched(root, into)["adapter_config.json"]) == config  # the fetched copy as fetched
    again = model_sources.fetch("hf://org/tiny-sql", adapter, root, into, env, *placing)
    assert again.returncode == 0 and again.stdout.splitlines()[-1] == f"the adapter is already placed in {folder}/sql"

    # A repository that is no LoRA adapter is fetched, and not placed: one line says why.
    refused = model_sources.fetch("hf://org/tiny", base, root, f"hf/org/tiny/{base}", env,
                                  "--adapter-of", served_as, "--place", f"{folder}/tiny")
    assert refused.returncode == 1 and refused.stderr.strip() == (
        f"cannot place the adapters of hf://org/tiny at {base}: it is not a LoRA adapter: its adapter_config.json "
        "is missing or unreadable"), refused
    assert not (root / folder / "tiny").exists()


def test_an_interrupted_fetch_keeps_the_files_already_complete(hub: Hub, tmp_path: Path) -> None:
    """Killed while the second weights file comes, the next try (the Job's next pod) keeps the first one —
    the same file, never fetched again, and verified again — and completes."""
    commit = hub.repository("org/tiny", SMALL, LARGE)
    root, into = tmp_path / "cache", f"hf/org/tiny/{commit}"
    command = [str(built(SOURCES) / "bin" / "python"), str(model_sources.PROGRAM), "--source", "hf://org/tiny",
               "--revision", commit, "--root", str(root), "--into", into]
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "HF_ENDPOINT": hub.endpoint}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    assert process.stdout is not None
    for line in process.stdout:
        if "model-00001-of-00002.safetensors" in line:
            process.send_signal(signal.SIGKILL)
            break
    process.wait()
    partial = root / ".partial" / into
    kept = partial / "model-00001-of-00002.safetensors"
    assert not (root / into).exists() and kept.is_file()
    inode = kept.stat().st_ino
    result = model_sources.fetch("hf://org/tiny", commit, root, into, {"HF_ENDPOINT": hub.endpoint})
    assert result.returncode == 0, result.stderr
    assert fetched(root, into) == {**SMALL, **LARGE}
    assert (root / into / "model-00001-of-00002.safetensors").stat().st_ino == inode
    assert "model-00001-of-00002.safetensors: 0.01 GB, verified" in result.stdout


def test_a_file_that_is_not_what_the_hub_says_is_refused(hub: Hub, tmp_path: Path) -> None:
    """The hub lists a large file by its sha256; what it serves under it differs (a corrupt object): the
    fetch fails naming the file, leaves no revision folder, and removes the file for a retry."""
    commit = hub.repository("org/tiny", SMALL, {"model.safetensors": weights(MB, 1)})
    oid = hashlib.sha256(weights(MB, 1)).hexdigest()
    stored = hub.mirrors / "models" / "org" / "tiny" / ".git" / "lfs" / "objects" / oid[:2] / oid[2:4] / oid
    stored.write_bytes(weights(MB, 3))  # same size, other bytes
    root, into = tmp_path / "cache", f"hf/org/tiny/{commit}"
    result = model_sources.fetch("hf://org/tiny", commit, root, into, {"HF_ENDPOINT": hub.endpoint})
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert f"model.safetensors has sha256 {hashlib.sha256(weights(MB, 3)).hexdigest()}, the source says {oid}" in line
    assert not (root / into).exists() and not (root / ".partial" / into / "model.safetensors").exists()


@pytest.mark.parametrize(("source", "revision", "reason"), [
    ("hf://org/missing", "main-is-not-used", "no repository org/missing on http://127.0.0.1:"),
    ("hf://org/tiny", "0" * 40, "org/tiny at 0000000000000000000000000000000000000000: not found on"),
])
def test_a_hub_that_has_no_such_model_says_so(hub: Hub, tmp_path: Path, source: str, revision: str,
                                              reason: str) -> None:
    hub.repository("org/tiny", SMALL, {})
    result = model_sources.fetch(source, revision, tmp_path / "cache", "hf/x", {"HF_ENDPOINT": hub.endpoint})
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"cannot fetch {source} at {revision}: ") and reason in line, line


def test_a_full_volume_says_so(hub: Hub, tmp_path: Path) -> None:
    """A cache volume of 16 MiB (a tmpfs of the suite's mount namespace) for 104 MiB of weights."""
    commit = hub.repository("org/tiny", SMALL, LARGE)
    root = tmp_path / "cache"
    root.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(root)], check=True)
    try:
        result = model_sources.fetch("hf://org/tiny", commit, root, f"hf/org/tiny/{commit}",
                                     {"HF_ENDPOINT": hub.endpoint})
    finally:
        subprocess.run(["umount", str(root)], check=True)
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert "no space left on the cache volume" in line and "make modelCache.size larger" in line, line


# s3:// — moto's S3 server; objects put over its REST API.

OBJECTS = {"config.json": SMALL["config.json"], "model.safetensors": weights(4 * MB, 1),
           "tokenizer/tokenizer.json": b"{}"}
KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}


def bucket(endpoint: str) -> None:
    model_sources.put(endpoint, "weights")
    for name, data in OBJECTS.items():
        model_sources.put(endpoint, f"weights/models/tiny/{name}", data)
    model_sources.put(endpoint, "weights/models/other/config.json", b"{}")


def test_an_s3_prefix_is_fetched_whole_and_verified(tmp_path: Path) -> None:
    with model_sources.store(tmp_path) as endpoint:
        bucket(endpoint)
        root = tmp_path / "cache"
        result = model_sources.fetch("s3://weights/models/tiny", "current", root, "s3/weights/models/tiny/current",
                                     {**KEYS, "AWS_ENDPOINT_URL": endpoint})
        assert result.returncode == 0, result.stderr
        assert fetched(root, "s3/weights/models/tiny/current") == OBJECTS
        for source, reason in (("s3://nobucket/models", "no bucket nobucket at http://127.0.0.1:"),
                               ("s3://weights/models/none", "nothing under s3://weights/models/none/")):
            failed = model_sources.fetch(source, "current", root, "s3/x", {**KEYS, "AWS_ENDPOINT_URL": endpoint})
            [line] = failed.stderr.strip().splitlines()
            assert failed.returncode == 1 and reason in line, line


def test_credentials_the_store_refuses_say_so(tmp_path: Path) -> None:
    """moto checking every request's signature once the bucket is filled (its first 5 requests are free)."""
    with model_sources.store(tmp_path, {"INITIAL_NO_AUTH_ACTION_COUNT": "5"}) as endpoint:
        bucket(endpoint)
        result = model_sources.fetch("s3://weights/models/tiny", "current", tmp_path / "cache", "s3/x",
                                     {**KEYS, "AWS_ENDPOINT_URL": endpoint})
    [line] = result.stderr.strip().splitlines()
    assert result.returncode == 1 and "refused the credentials for s3://weights (InvalidAccessKeyId)" in line, line


def test_an_s3_retry_keeps_each_object_already_verified_multipart_ones_too(tmp_path: Path) -> None:
    """A retry finds an object complete and verified by the try before (the folder's record of ETags): it is
    verified again, not fetched again — also one uploaded in parts, whose ETag is no MD5."""
    parted = weights(12 * MB, 4)
    with model_sources.store(tmp_path) as endpoint:
        bucket(endpoint)
        upload = ("import sys, boto3; from boto3.s3.transfer import TransferConfig; boto3.client('s3').upload_file("
                  "sys.argv[1], 'weights', 'models/tiny/big.safetensors', Config=TransferConfig("
                  "multipart_threshold=5 * 2**20, multipart_chunksize=5 * 2**20))")
        source = tmp_path / "big.safetensors"
        source.write_bytes(parted)
        env = {**KEYS, "AWS_ENDPOINT_URL": endpoint, "PATH": os.environ["PATH"], "HOME": str(tmp_path)}
        subprocess.run([str(built(SOURCES) / "bin" / "python"), "-c", upload, str(source)], check=True, env=env)
        root, into = tmp_path / "cache", "s3/weights/models/tiny/current"
        partial = root / ".partial" / into
        partial.mkdir(parents=True)
        kept = partial / "big.safetensors"
        kept.write_bytes(parted)
        etag = json.loads(subprocess.run(
            [str(built(SOURCES) / "bin" / "python"), "-c", "import sys, json, boto3; print(json.dumps(boto3.client("
             "'s3').head_object(Bucket='weights', Key='models/tiny/big.safetensors')['ETag'].strip('\"')))"],
            check=True, env=env, capture_output=True, text=True).stdout)
        assert "-" in etag  # uploaded in parts: its ETag is not its MD5
        (partial / ".fusioninfer-etags.json").write_text(json.dumps({"big.safetensors": etag}))
        inode = kept.stat().st_ino
        result = model_sources.fetch("s3://weights/models/tiny", "current", root, into,
                                     {**KEYS, "AWS_ENDPOINT_URL": endpoint})
        assert result.returncode == 0, result.stderr
        assert (root / into / "big.safetensors").stat().st_ino == inode
        assert fetched(root, into) == {**OBJECTS, "big.safetensors": parted}
