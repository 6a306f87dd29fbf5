"""An open-loop client for the benchmarks that replay a trace: each request sent at its moment, whatever the
service's state (a closed loop would wait for a slow service and hide its queue), its time to first token
read from the stream."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor

from tests.traces import Request

POOL = 512
"""Requests one service may have under way: past it, the client itself would queue them."""


def first_token(address: str, model: str, prompt: str, tokens: int) -> float | None:
    """Seconds to the first streamed chunk of a completion of TOKENS tokens from ADDRESS (host:port), read to
    the end; None if it failed (anything but a 200, or the connection)."""
    host, _, port = address.rpartition(":")
    started = time.monotonic()
    try:
        connection = http.client.HTTPConnection(host, int(port), timeout=600)
        connection.request("POST", "/v1/completions", json.dumps({
            "model": model, "prompt": prompt, "max_tokens": tokens, "ignore_eos": True, "stream": True}),
            {"Content-Type": "application/json"})
        answer = connection.getresponse()
        if answer.status != 200:
            return None
        first = None
        for line in answer:
            if first is None and line.startswith(b"data:"):
                first = time.monotonic() - started
        connection.close()
        return first
    except OSError:
        return None


def percentile(values: list[float], share: float) -> float:
    """The value SHARE of VALUES lie below (nan for none)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def replay(requests: Iterable[Request], senders: dict[str, Callable[[int, Request], float | None]]
           ) -> dict[str, list[float | None]]:
    """REQUESTS at their moments (``at`` seconds after the first is sent), each to every sender at once: the
    outcome of each (its time to first token, or None), by sender, in the order sent."""
    outcomes: dict[str, list[float | None]] = {}
    pools = {name: ThreadPoolExecutor(POOL) for name in senders}  # a service that queues holds only its own
    futures: dict[str, list[Future[float | None]]] = {name: [] for name in senders}
    start = time.monotonic()
    try:
        for number, request in enumerate(requests):
            time.sleep(max(0.0, start + request.at - time.monotonic()))
            for name, send in senders.items():
                futures[name].append(pools[name].submit(send, number, request))
        for name in senders:
            outcomes[name] = [future.result() for future in futures[name]]
    finally:
        for pool in pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
    return outcomes
