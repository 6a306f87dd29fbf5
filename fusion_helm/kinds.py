"""The kinds the post-renderer claims, as they are written in a stream (standard library only: a
stream that names none of them passes without loading the model or a YAML library). Their home is
the model (the schema source, the take-over converter); tests hold these to it."""

API_GROUP = "fusioninfer.io"
INFERENCE_SERVICE = "InferenceService"
LEADER_WORKER_SET = "LeaderWorkerSet"
LEADER_WORKER_SET_API_VERSION = "leaderworkerset.x-k8s.io/v1"
TAKE_OVER_ANNOTATION = "fusioninfer.io/take-over"
LAYOUT_ANNOTATION = "fusioninfer.io/layout"
TAKE_OVER_LAYOUTS = ("replica", "role")
"""What a taken-over LeaderWorkerSet becomes (the model's layouts but disaggregated, which needs a
prefill and a decode role: one LeaderWorkerSet is one role), the first the default."""
