# A copy of fusion_helm/base/labels.py, made by `make generate` (ci/chart_copies.py) for the chart; do not edit.
"""The labels and annotations the expansion puts on generated objects and their pods, and what they say
(standard library only: the status hook reads them inside a stock Python image)."""

TYPE_CHECKING = False
if TYPE_CHECKING:  # collections.abc costs 2 ms to import, and the start-up path reads these labels
    from collections.abc import Mapping

LABEL_SERVICE = "fusioninfer.io/service"
LABEL_COMPONENT_TYPE = "fusioninfer.io/component-type"
LABEL_ROLE_NAME = "fusioninfer.io/role-name"
LABEL_REPLICA_INDEX = "fusioninfer.io/replica-index"
LABEL_SPEC_HASH = "fusioninfer.io/spec-hash"
LABEL_FETCHES_FOR = "fusioninfer.io/fetches-for"
"""A fetch Job's, and its pods': the service whose weights it fetches (never LABEL_SERVICE on its pods, which
every selector of serving pods starts from)."""
LABEL_GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
"""LWS labels each group's pods with the group's index: in the role layout, the replica's index."""
LABEL_WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
"""LWS numbers the pods of a replica; the leader, the one that serves, is 0 (a one-pod replica's only pod)."""
LABEL_SERVES = "fusioninfer.io/serves"
"""On the pods that serve requests ("true"), in a service where some are not leaders (a role whose every
node serves): the InferencePool and the PodMonitors select by it there, by the leader's worker index elsewhere."""
LABEL_LWS_NAME = "leaderworkerset.sigs.k8s.io/name"
"""LWS labels each pod with its LeaderWorkerSet's name."""
LABEL_PD_ROLE = "llm-d.ai/role"
"""The label the prefill/decode endpoint picker tells prefill from decode pods by."""
LABEL_REVISION = "disaggregatedset.x-k8s.io/revision"
"""The DisaggregatedSet controller labels each revision's LeaderWorkerSets and their pods with it."""
LABEL_SET_NAME = "disaggregatedset.x-k8s.io/name"
LABEL_SET_ROLE = "disaggregatedset.x-k8s.io/role"
"""The DisaggregatedSet and its role, on the LeaderWorkerSets and pods it makes."""
ANNOTATION_GROUP_NAME = "scheduling.k8s.io/group-name"
"""On a gang-scheduled service's pods: the PodGroup Volcano places them with."""
MODEL_HEADER = "X-Gateway-Model-Name"
"""Not a label but read like one: the header a shared Gateway routes by, which its body-based router sets to
the model a request's body names; each service's route matches its model names on it, and the Gateway's
/v1/models lists them from there (programs/gateway_models.py)."""
ANNOTATION_PICKER_CONFIG_HASH = "fusioninfer.io/picker-config-hash"
"""On the picker's pod template: a changed configuration restarts the pickers, which read it once."""


def one_per_replica(lws_labels: "Mapping[str, str]") -> bool:
    """A LeaderWorkerSet of ours from the replica layout (one per replica) carries its replica's index;
    one from the role layout (a role's groups) does not."""
    return LABEL_REPLICA_INDEX in lws_labels


def replica_index(pod_labels: "Mapping[str, str]") -> str | None:
    """A pod's replica: our index in the replica layout, LWS's group index in the others."""
    return pod_labels.get(LABEL_REPLICA_INDEX, pod_labels.get(LABEL_GROUP_INDEX))


def revision(labels: "Mapping[str, str]") -> str:
    """The DisaggregatedSet revision a LeaderWorkerSet or pod is of ("" outside one)."""
    return labels.get(LABEL_REVISION, "")
