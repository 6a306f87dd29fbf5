"""The ports of what a router runs, each in one place: the expansion writes them into the picker and the
engines, the network policies open them and the pod monitors scrape them, without loading the router."""

PICKER_GRPC_PORT = 9002
"""The picker's ext-proc service, which the gateway calls for every request."""
GRPC_HEALTH_PORT = 9003
METRICS_PORT = 9090
METRICS_PORT_NAME = "metrics"
EVENTS_PORT = 5557
"""Where a precise picker hears the engines' KV-cache events (ZMQ)."""
EVENTS_PORT_NAME = "kv-events"
REPLAY_PORT = 5558
"""Where an engine replays the events a picker missed."""
REPLAY_PORT_NAME = "kv-replay"
