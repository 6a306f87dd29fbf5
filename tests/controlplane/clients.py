"""What a test asks of served pods: their metrics, a completion through a gateway, and the gateway stand-ins
(``picker-probe gateway`` in front of pickers, ``picker-probe routes-gateway`` routing as a shared Gateway)."""

from __future__ import annotations

import contextlib
import json
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.controlplane.builds import picker_probe

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tests.controlplane.watch import GatewayView

UNVERIFIED = ssl._create_unverified_context()
"""How the runner asks HTTPS probes and metrics: as the kubelet, verifying no certificate."""

def metrics(address: str, port: int, scheme: str = "http") -> dict[str, float]:
    """A pod's Prometheus metrics: each sample's name with labels → its value."""
    with urllib.request.urlopen(f"{scheme}://{address}:{port}/metrics", timeout=5, context=UNVERIFIED) as answer:
        text = answer.read().decode()
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples

def total(samples: dict[str, float], metric: str) -> float:
    """The sum of METRIC's samples over their labels."""
    return sum(value for name, value in samples.items() if name == metric or name.startswith(metric + "{"))

def completion(gateway: str, body: dict[str, Any], headers: dict[str, str] | None = None,
               timeout: float = 60, path: str = "/v1/completions") -> tuple[int, dict[str, str], dict[str, Any]]:
    """POST PATH (/v1/completions) through the gateway: status, response headers (names in lower case), JSON
    answer."""
    request = urllib.request.Request(f"http://{gateway}{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, _lower(answer.headers), json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, _lower(error.headers), {"error": error.read().decode(errors="replace")}

def _lower(headers: Any) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}

@contextlib.contextmanager
def gateway(grpc: str, workdir: Path, backends: str = "http") -> Iterator[str]:
    """The gateway stand-in (``picker-probe gateway``) in front of the picker at GRPC (or those listed in
    the file @FILE), calling the pods in BACKENDS' scheme (https: as a gateway's backend TLS, not verified):
    its HTTP address."""
    log = (workdir / "gateway.log").open("w")
    process = subprocess.Popen([str(picker_probe()), "gateway", grpc, "127.0.0.1:0", backends],
                               stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        assert process.stdout is not None
        address = process.stdout.readline().strip()
        assert address, (workdir / "gateway.log").read_text()
        yield address
    finally:
        process.terminate()
        process.wait(10)

@contextlib.contextmanager
def routes_gateway(view: GatewayView) -> Iterator[str]:
    """The gateway stand-in routing as VIEW's Gateway does (``picker-probe routes-gateway``): its address."""
    log = (view.workdir / "gateway.log").open("w")
    process = subprocess.Popen([str(picker_probe()), "routes-gateway", str(view.path), "127.0.0.1:0"],
                               stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        assert process.stdout is not None
        address = process.stdout.readline().strip()
        assert address, (view.workdir / "gateway.log").read_text()
        yield address
    finally:
        process.terminate()
        process.wait(10)

def label_selector(labels: dict[str, str]) -> str:
    """LABELS as a label selector's text (``key=value,…``), as the API and kubectl take it."""
    return ",".join(f"{key}={value}" for key, value in labels.items())
