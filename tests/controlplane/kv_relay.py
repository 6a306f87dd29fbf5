"""For llm-d's simulator, what vLLM does with its KV-cache events, so that the pickers meet the simulator as
they meet vLLM. vLLM binds its publisher on its events' endpoint (``tcp://*:PORT``) and its replay socket on
``replay_endpoint``, numbers its event batches from 0, and announces a block once, when it is cached (until
it is evicted). The simulator dials the endpoint it is given, numbers from 1 — which llm-d-router's
subscriber takes for a stream it joined late: it asks a replay from 0 and drops every batch until one
answers — and announces a request's cached blocks again with every request that reuses them, which the
subscriber counts as references: one eviction then no longer takes a block out of its index.

So the pod runner gives a publishing simulator this relay, in the pod's network: a subscriber bound where
the simulator dials (IN), a publisher bound where vLLM binds (OUT), each batch passed on numbered from 0
without the events that announce only blocks announced before (a block removed, or all cleared, may be
announced again), each
subscriber's topic filter passed up; and, where vLLM has one (REPLAY_OUT), a replay socket that answers a
request from sequence N with the batches it passed on since N, then the end marker.

    python kv_relay.py IN OUT [REPLAY_OUT]      (the suite's python: pyzmq and msgpack in its dev group)
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import msgpack
import zmq

SENTINEL = b"\xff" * 8
"""A replay's end marker's sequence."""
KEPT = 4096
"""Batches kept for replays."""


class Announced:
    """The blocks the engine holds, as announced to the subscribers."""

    def __init__(self) -> None:
        self.blocks: set[int] = set()

    def batch(self, payload: bytes) -> bytes:
        """PAYLOAD (a msgpack event batch: timestamp, events, ...) without the events that announce only
        blocks announced before. The events kept are passed on byte for byte: the subscriber reads a
        block's hash only as the engines encode it (an unsigned 64-bit integer)."""
        unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        unpacker.feed(payload)
        unpacker.read_array_header()
        unpacker.skip()  # the timestamp
        head = payload[:unpacker.tell()]
        kept = []
        for _ in range(unpacker.read_array_header()):
            start = unpacker.tell()
            event = unpacker.unpack()
            if self.news(event):
                kept.append(payload[start:unpacker.tell()])
        packer = msgpack.Packer()
        return b"".join([head, packer.pack_array_header(len(kept)), *kept, payload[unpacker.tell():]])

    def news(self, event: list[Any]) -> bool:
        """Whether EVENT says anything new of the blocks held (and note it)."""
        kind = event[0]
        if kind == "BlockRemoved":
            self.blocks.difference_update(event[1])
        elif kind == "AllBlocksCleared":
            self.blocks.clear()
        elif kind == "BlockStored":
            if self.blocks.issuperset(event[1]):
                return False
            self.blocks.update(event[1])
        return True


def main(inward: str, outward: str, replay_out: str = "") -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    events_in = context.socket(zmq.XSUB)
    events_in.bind(inward)
    events_out = context.socket(zmq.XPUB)
    events_out.bind(outward)
    passed: list[list[bytes]] = []
    lock = threading.Lock()
    if replay_out:
        threading.Thread(target=replay, args=(context, replay_out, passed, lock), daemon=True).start()
    announced = Announced()
    poller = zmq.Poller()
    poller.register(events_in, zmq.POLLIN)
    poller.register(events_out, zmq.POLLIN)
    sequence = 0
    while True:
        for socket, _ in poller.poll():
            if socket is events_out:
                events_in.send(events_out.recv())  # a subscription, or its end
                continue
            frames = events_in.recv_multipart()
            if len(frames) != 3:  # topic, sequence, batch
                continue
            out = [frames[0], sequence.to_bytes(8, "big"), announced.batch(frames[2])]
            sequence += 1
            with lock:
                passed.append(out)
                del passed[:-KEPT]
            events_out.send_multipart(out)


def replay(context: zmq.Context[zmq.Socket[bytes]], outward: str, passed: list[list[bytes]],
           lock: threading.Lock) -> None:
    asked = context.socket(zmq.ROUTER)
    asked.bind(outward)
    while True:
        identity, *request = asked.recv_multipart()
        start = int.from_bytes(request[-1], "big")
        with lock:
            since = [frames for frames in passed if int.from_bytes(frames[1], "big") >= start]
        for frames in since:
            asked.send_multipart([identity, b"", *frames])
        asked.send_multipart([identity, b"", b"", SENTINEL, b""])


if __name__ == "__main__":
    main(*sys.argv[1:4])
