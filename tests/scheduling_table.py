"""The design's "Scheduling Behavior Table" for story 4, for each gang level: checked against
`fusion-helm plan`'s preview (tests/cli/test_plan.py) and against the real Volcano scheduler
(tests/controlplane/test_cluster.py)."""

from __future__ import annotations

from tests.helm import VALUES

STORY4 = VALUES / "story4-pd-multinode-deepseek-r1.yaml"

# Story 4: prefill 1 replica x 2 nodes, decode 2 replicas x 4 nodes, 8 GPUs a pod, 8-GPU nodes.
# level → cluster GPUs → (service state, the replicas placed)
TABLES: dict[str, dict[int, tuple[str, set[str]]]] = {
    # level role is the design's table: each replica atomic, 1 prefill + 1 decode the minimum
    "role": {80: ("full", {"prefill-0", "decode-0", "decode-1"}),
             64: ("partial", {"prefill-0", "decode-0"}),
             48: ("partial", {"prefill-0", "decode-0"}),
             32: ("blocked", set()),
             16: ("blocked", set())},
    # level group: all or nothing
    "group": {80: ("full", {"prefill-0", "decode-0", "decode-1"}),
              64: ("blocked", set()), 48: ("blocked", set()), 32: ("blocked", set()), 16: ("blocked", set())},
}
