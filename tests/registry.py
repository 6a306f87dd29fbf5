"""A CNCF distribution registry (built by ci/cluster/build.sh) run as a process on localhost: the OCI
registry the release tests push the chart packages to and install them from."""

from __future__ import annotations

import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

import yaml

from tests.controlplane.builds import binary
from tests.controlplane.processes import free_port

START_SECONDS = 30


class Registry:
    """``with Registry(workdir) as address``: serving at ADDRESS (host:port, plain HTTP) inside."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.address = f"127.0.0.1:{free_port()}"
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> str:
        config = self.workdir / "config.yml"
        config.write_text(yaml.safe_dump({
            "version": 0.1,
            "log": {"level": "warn"},
            "storage": {"filesystem": {"rootdirectory": str(self.workdir / "data")}},
            "http": {"addr": self.address},
        }))
        log = (self.workdir / "registry.log").open("wb")
        self.process = subprocess.Popen([str(binary("registry")), "serve", str(config)], stdout=log,
                                        stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the registry exited: {(self.workdir / 'registry.log').read_text()}")
            try:
                with urllib.request.urlopen(f"http://{self.address}/v2/", timeout=2) as response:
                    if response.status == 200:
                        return self.address
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.2)
        raise RuntimeError(f"the registry did not answer at {self.address} within {START_SECONDS}s")

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
