"""Model sources on loopback for the fetch Job's tests: a Hugging Face hub (olah, a self-hosted hub mirror,
serving git repositories from a folder, offline) and an S3-compatible store (moto's server), each a real
server speaking its protocol to the real clients (huggingface_hub, boto3).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.controlplane import kubelet
from tests.controlplane.processes import free_port
from tests.engines import SOURCES, built

PROGRAM = Path(__file__).resolve().parent.parent / "fusion_helm" / "programs" / "fetch.py"
LFS_POINTER = "version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {size}\n"


@dataclass
class Hub:
    endpoint: str
    mirrors: Path

    def repository(self, name: str, files: Mapping[str, bytes], large: Mapping[str, bytes]) -> str:
        """A model repository NAME (ORG/REPO) of FILES in git and LARGE ones in git-lfs, committed; its commit."""
        self._created(name)
        return self.commit(name, files, large)

    def repository_moved(self, name: str, model: Path) -> str:
        """A model repository NAME of the files under MODEL, committed, its .safetensors moved into git-lfs:
        weights of many gigabytes are neither held in memory nor copied. Its commit."""
        folder = self._created(name)
        small: dict[str, bytes] = {}
        for source in sorted(path for path in model.rglob("*") if path.is_file()):
            path = str(source.relative_to(model))
            if path.endswith(".safetensors"):
                with source.open("rb") as content:
                    oid = hashlib.file_digest(content, "sha256").hexdigest()
                source.replace(self._in_lfs(folder, path, oid, source.stat().st_size))
            else:
                small[path] = source.read_bytes()
        return self.commit(name, small)

    def commit(self, name: str, files: Mapping[str, bytes], large: Mapping[str, bytes] | None = None) -> str:
        """FILES (and LARGE ones, in git-lfs) written into repository NAME and committed; the commit."""
        folder = self.mirrors / "models" / name
        for path, content in files.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_bytes(content)
        for path, content in (large or {}).items():
            self._in_lfs(folder, path, hashlib.sha256(content).hexdigest(), len(content)).write_bytes(content)
        return self._committed(folder)

    def _created(self, name: str) -> Path:
        folder = self.mirrors / "models" / name
        folder.mkdir(parents=True)
        subprocess.run(["git", "-C", str(folder), "init", "-q", "-b", "main"], check=True)
        return folder

    @staticmethod
    def _in_lfs(folder: Path, path: str, oid: str, size: int) -> Path:
        """PATH in FOLDER's work tree written as the git-lfs pointer to OID; where the object itself goes."""
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(LFS_POINTER.format(oid=oid, size=size))
        store = folder / ".git" / "lfs" / "objects" / oid[:2] / oid[2:4]
        store.mkdir(parents=True, exist_ok=True)
        return store / oid

    @staticmethod
    def _committed(folder: Path) -> str:
        git = ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@localhost"]
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "weights"], check=True)
        return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


def unserved_hub(workdir: Path) -> Hub:
    """A hub's repositories under WORKDIR/mirrors and the address it will serve them at (`serve`)."""
    mirrors = workdir / "mirrors"
    mirrors.mkdir(parents=True)
    return Hub(f"http://127.0.0.1:{free_port()}", mirrors)


@contextlib.contextmanager
def serve(hub: Hub) -> Iterator[Hub]:
    """olah on 127.0.0.1 serving HUB's repositories, asking no upstream."""
    workdir, netloc = hub.mirrors.parent, hub.endpoint.removeprefix("http://")
    config = workdir / "olah.toml"
    config.write_text(f'[basic]\nhost = "127.0.0.1"\nport = {netloc.partition(":")[2]}\n'
                      f'repos-path = "{workdir / "olah-cache"}"\nmirror-scheme = "http"\nmirror-netloc = "{netloc}"\n'
                      f'mirror-lfs-netloc = "{netloc}"\nmirrors-path = ["{hub.mirrors}"]\n'
                      "[accessibility]\noffline = true\n")
    with _serving([str(built(SOURCES) / "bin" / "olah-cli"), "-c", str(config), "--log-path", str(workdir / "logs")],
                  workdir / "olah.log", f"{hub.endpoint}/api/models/none/none/revision/main"):
        yield hub


@contextlib.contextmanager
def hub(workdir: Path) -> Iterator[Hub]:
    """A hub served on 127.0.0.1 from the repositories under WORKDIR/mirrors."""
    with serve(unserved_hub(workdir)) as served:
        yield served


def files_of(folder: Path) -> dict[str, bytes]:
    """Each file under FOLDER (its path relative to it) → its bytes."""
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def put(endpoint: str, path: str, data: bytes = b"") -> None:
    """An object (or, at a bucket's path, the bucket) put over the S3 store's REST API at ENDPOINT."""
    request = urllib.request.Request(f"{endpoint}/{path}", data=data, method="PUT",
                                     headers={"Content-Type": "application/octet-stream"})
    with urllib.request.urlopen(request, timeout=30):
        pass


@contextlib.contextmanager
def store(workdir: Path, env: Mapping[str, str] | None = None) -> Iterator[str]:
    """moto's S3 server on 127.0.0.1; its endpoint."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    with _serving([str(built(SOURCES) / "bin" / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
                  workdir / "moto.log", f"{endpoint}/moto-api/", env):
        yield endpoint


def fetch(source: str, revision: str, root: Path, into: str, env: Mapping[str, str], *placing: str,
          timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The fetch Job's program run as its Job runs it (PLACING: its adapter arguments), by an interpreter
    with the clients a serving image has (the vllm venv's huggingface_hub) and boto3, its termination
    message into ROOT's folder's termination-log (tests/controlplane/kubelet.py)."""
    argv = kubelet.in_mounts({}, {}, root.parent / "termination-log", [
        str(built(SOURCES) / "bin" / "python"), str(PROGRAM), "--source", source, "--revision", revision, "--root",
        str(root), "--into", into, *placing])
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                          env={"PATH": os.environ["PATH"], "HOME": str(root.parent), **env})


@contextlib.contextmanager
def _serving(command: list[str], log: Path, probe: str, env: Mapping[str, str] | None = None) -> Iterator[None]:
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(probe, timeout=2)
                break
            except urllib.error.HTTPError:
                break  # it answers
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{command[0]} did not start: {log.read_text()[-2000:]}") from None
                time.sleep(0.2)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
