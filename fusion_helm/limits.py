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
MAX_COUNT_DIGITS = 18
"""Digits of a count read out of a string (a GPU limit, a parallel size, a port): below 2^63, as the API
server holds integers, and far below Python's own limit on converting digits, which would end in a
traceback."""


def count(text: str) -> int | None:
    """TEXT as a whole number written in decimal digits alone (at most MAX_COUNT_DIGITS of them); None where
    it is anything else, for the caller to refuse in its own words."""
    if not (text.isascii() and text.isdigit()) or len(text) > MAX_COUNT_DIGITS:
        return None
    return int(text)
