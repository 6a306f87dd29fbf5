"""Go's YAML reader — sigs.k8s.io/yaml, what Helm and kubectl read manifests with — as a test oracle.

tests/goyaml is a tiny Go program over that library, built once per source version into the cache
by `make test-setup` (Go and its module proxy are already needed by `make test`)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.helm import CACHE, ROOT

SOURCE = ROOT / "tests" / "goyaml"


def binary() -> Path:
    """Where the build of this source version is."""
    digest = hashlib.sha256(b"".join((SOURCE / name).read_bytes() for name in ("main.go", "go.mod", "go.sum")))
    return CACHE / "goyaml" / digest.hexdigest()[:16] / "goyaml"


def build() -> Path:
    """Build it unless built (`make test-setup`: Go's module proxy is out of the suite's reach)."""
    path = binary()
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["go", "build", "-o", str(path), "."], cwd=SOURCE, check=True,
                       env={**os.environ, "GOFLAGS": "-mod=mod"})
    return path


def built() -> Path:
    path = binary()
    if not path.is_file():
        raise RuntimeError(f"Go's YAML reader is not built at {path}: `make test-setup` builds it")
    return path


class GoYAML:
    """YAML documents in, what Go reads out: the data as JSON, or Go's error."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary

    def read(self, documents: list[str]) -> list[dict[str, Any]]:
        result = subprocess.run([str(self.binary)], input=json.dumps(documents), text=True, capture_output=True,
                                check=True)
        return [{"json": item.get("json"),
                 "error": item.get("error")} for item in json.loads(result.stdout)]


if __name__ == "__main__":
    print(build())
