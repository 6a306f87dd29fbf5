"""The API groups, versions, kinds and annotations the post-renderer reads, as they are written in a
stream (standard library only: a stream that names none of them passes without loading the model or
a YAML library). The InferenceService's own are the schema source's; a test holds these to it."""

API_GROUP = "fusioninfer.io"
INFERENCE_SERVICE = "InferenceService"
LEADER_WORKER_SET = "LeaderWorkerSet"
LEADER_WORKER_SET_API_VERSION = "leaderworkerset.x-k8s.io/v1"
TAKE_OVER_ANNOTATION = "fusioninfer.io/take-over"
"""``"true"`` on a LeaderWorkerSet: the post-renderer takes it over (``--take-over-lws`` takes all)."""
LAYOUT_ANNOTATION = "fusioninfer.io/layout"
"""``replica`` or ``role`` on a LeaderWorkerSet taken over: the layout it becomes (``--take-over-layout``
sets it for those without)."""
RAY_BOOTSTRAP_ANNOTATION = "fusioninfer.io/ray-bootstrap"
"""``"true"`` on a LeaderWorkerSet taken over: start the leader and workers with the Ray bootstrap, as a
multi-node role's are (the worker template's first container then holds the server's command; there
is no leaderTemplate)."""
TAKE_OVER_LAYOUTS = ("replica", "role")
"""What a taken-over LeaderWorkerSet becomes (the model's layouts but disaggregated, which needs a
prefill and a decode role: one LeaderWorkerSet is one role), the first the default."""
