"""For llm-d's simulator, what vLLM does with its KV-cache events, so that the pickers meet the simulator as
they meet vLLM: vLLM binds its publisher on its events' endpoint (``tcp://*:PORT``) and its replay socket on
``replay_endpoint``, and numbers its event batches from 0. The simulator dials the endpoint it is given, and
numbers from 1 (its live stream and its replay alike), which llm-d-router's subscriber takes for a stream it
joined late: it asks a replay from 0 and drops every batch until one answers.

So the pod runner gives a publishing simulator this relay, in the pod's network:

- **live**: a subscriber side bound where the simulator dials (IN), a publisher side bound where vLLM binds
  (OUT); each batch passed on numbered one lower, each subscriber's topic filter passed up;
- **replay**: a router bound where vLLM binds its replay socket (REPLAY_OUT), each request (from sequence
  N) asked of the simulator's own (REPLAY_IN) from N+1, its batches passed back numbered one lower, then
  the end marker.

    python kv_relay.py IN OUT REPLAY_IN REPLAY_OUT      (the suite's python: pyzmq is in its dev group)
"""

from __future__ import annotations

import sys
import threading

import zmq

SENTINEL = b"\xff" * 8
"""A replay's end marker's sequence."""
REPLAY_PATIENCE_MS = 5000


def _shifted(sequence: bytes, by: int) -> bytes:
    return sequence if sequence == SENTINEL else (int.from_bytes(sequence, "big") + by).to_bytes(8, "big")


def live(context: zmq.Context[zmq.Socket[bytes]], inward: str, outward: str) -> None:
    events_in = context.socket(zmq.XSUB)
    events_in.bind(inward)
    events_out = context.socket(zmq.XPUB)
    events_out.bind(outward)
    poller = zmq.Poller()
    poller.register(events_in, zmq.POLLIN)
    poller.register(events_out, zmq.POLLIN)
    while True:
        for socket, _ in poller.poll():
            if socket is events_in:
                frames = events_in.recv_multipart()
                if len(frames) == 3:  # topic, sequence, batch
                    frames[1] = _shifted(frames[1], -1)
                events_out.send_multipart(frames)
            else:
                events_in.send(events_out.recv())  # a subscription, or its end


def replay(context: zmq.Context[zmq.Socket[bytes]], inward: str, outward: str) -> None:
    asked = context.socket(zmq.ROUTER)
    asked.bind(outward)
    while True:
        identity, *request = asked.recv_multipart()
        start = request[-1]
        simulator = context.socket(zmq.DEALER)
        simulator.setsockopt(zmq.RCVTIMEO, REPLAY_PATIENCE_MS)
        simulator.setsockopt(zmq.LINGER, 0)
        simulator.connect(inward)
        simulator.send_multipart([b"", _shifted(start, 1)])
        try:
            while True:
                frames = simulator.recv_multipart()  # empty, topic, sequence, batch
                frames[2] = _shifted(frames[2], -1)
                asked.send_multipart([identity, *frames])
                if frames[2] == SENTINEL:
                    break
        except zmq.Again:
            pass  # the simulator did not answer: the picker's own timeout says so
        simulator.close()


def main(inward: str, outward: str, replay_in: str, replay_out: str) -> None:
    """REPLAY_OUT empty: the engine has no replay socket."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    if replay_out:
        threading.Thread(target=replay, args=(context, replay_in, replay_out), daemon=True).start()
    live(context, inward, outward)


if __name__ == "__main__":
    main(*sys.argv[1:5])
