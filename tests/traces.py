"""The public request traces beside the repository (``../shared/traces``, FUSION_SHARED_TRACES), read for the
benchmarks that replay them: when each request arrives and its shape, time-compressed and thinned as a
benchmark on two cores can carry."""

from __future__ import annotations

import csv
import hashlib
import json
import os
from datetime import datetime
from pathlib import Path

from ci.tools import ROOT
from fusion_helm.records import record

TRACES = Path(os.environ.get("FUSION_SHARED_TRACES", ROOT.parent / "shared" / "traces"))
AZURE_CODE = "azure-llm-inference-2023-code.csv"
MOONCAKE = "mooncake-fast25-conversation.jsonl"
SHA256 = {AZURE_CODE: "54e9a6d2a4bd06ba1e060304b900abbc74cbea53de96506e60fe5bb4f2277fb6",
          MOONCAKE: "b8cbb061a85206d729d91cdc2981f43c9e0d99209dce588d3af5f7934408b9df"}
"""As the traces' SOURCES.md gives them: a replay is of the published trace, or refused."""


@record
class Request:
    at: float
    """Seconds after the trace's first request."""
    prompt_tokens: int
    output_tokens: int
    blocks: tuple[int, ...] = ()
    """The prompt's blocks of MOONCAKE_BLOCK_TOKENS, by id: equal ids are the same text (a shared prefix)."""


MOONCAKE_BLOCK_TOKENS = 512
def _path(name: str) -> Path:
    path = TRACES / name
    if not path.is_file():
        raise FileNotFoundError(f"the trace {path} is missing: set FUSION_SHARED_TRACES to the shared/traces "
                                f"directory")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SHA256[name]:
        raise ValueError(f"{path} is not the published trace (sha256 {digest}, expected {SHA256[name]})")
    return path


def azure(name: str = AZURE_CODE) -> list[Request]:
    """An Azure LLM inference trace (2023): TIMESTAMP (to the 100 ns), ContextTokens, GeneratedTokens."""
    with _path(name).open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    times = [datetime.strptime(row["TIMESTAMP"].strip()[:26], "%Y-%m-%d %H:%M:%S.%f").timestamp() for row in rows]
    start = min(times)
    return sorted((Request(at=time - start, prompt_tokens=int(row["ContextTokens"]),
                           output_tokens=int(row["GeneratedTokens"])) for time, row in zip(times, rows, strict=True)),
                  key=lambda request: request.at)


def mooncake() -> list[Request]:
    """Mooncake's FAST'25 conversation trace: timestamp (ms), input_length, output_length, hash_ids."""
    with _path(MOONCAKE).open() as stream:
        rows = [json.loads(line) for line in stream if line.strip()]
    return sorted((Request(at=row["timestamp"] / 1000, prompt_tokens=row["input_length"],
                           output_tokens=row["output_length"], blocks=tuple(row["hash_ids"])) for row in rows),
                  key=lambda request: request.at)


def replayed(requests: list[Request], compression: float, every: int, minutes: float | None = None
             ) -> list[Request]:
    """REQUESTS as a benchmark sends them: the first MINUTES of the trace (all of it: None), one request in
    EVERY (the same shape at a fraction of the rate), arriving COMPRESSION times sooner."""
    kept = [request for index, request in enumerate(requests)
            if index % every == 0 and (minutes is None or request.at < minutes * 60)]
    return [Request(at=request.at / compression, prompt_tokens=request.prompt_tokens,
                    output_tokens=request.output_tokens, blocks=request.blocks) for request in kept]
