"""The bounds every input is held to, so that any input is rendered or refused in bounded time and
memory (README, "Limits")."""

MAX_INPUT_BYTES = 64 * 2**20
"""The whole stream on standard input (Helm keeps a release's manifest in a 1 MiB Secret)."""
MAX_DEPTH = 200
"""Nesting of mappings and sequences in any document (libyaml slows quadratically with depth)."""
MAX_NODES = 200_000
"""Values in a document we expand, with every alias expanded (a billion laughs stops here)."""
MAX_OBJECT_BYTES = 1_572_864
"""An object the API server stores (etcd's default request limit, 1.5 MiB): documents we expand, and
the LeaderWorkerSets we write."""
MAX_REPLICAS = 10_000
"""Replicas of one role: each is a LeaderWorkerSet of its own."""
MAX_OUTPUT_BYTES = 256 * 2**20
"""What an expansion writes, estimated before it starts."""
