# A copy of fusion_helm/base/kinds.py, made by `make generate` (ci/chart_copies.py) for the chart; do not edit.
"""Every kind the project reads or writes, each once: its API group, version, kind and plural (the
resource's name in API paths and RBAC rules), and the annotations a stream is read by.

Standard library only, and nothing but constants: the post-renderer's start-up path reads it (a stream
that names none of these passes without loading the model or a YAML library), and so do the hook Jobs in
a stock Python image. The InferenceService's own group is the schema source's; a test holds them to it.
"""


class Kind:
    """One kind at one API version."""

    __slots__ = ("api_version", "group", "kind", "plural", "resource", "version")

    def __init__(self, group: str, version: str, kind: str, plural: str) -> None:
        self.group, self.version, self.kind, self.plural = group, version, kind, plural
        self.api_version = f"{group}/{version}" if group else version
        """As objects write it: ``group/version``, or the version alone for the core group."""
        self.resource = f"{self.api_version}/{plural}"
        """``group/version/plural``: what API discovery lists and the check Job asks to be served."""

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The API server's path of this kind's objects (in NAMESPACE), or of the one named NAME."""
        root = f"/apis/{self.api_version}" if self.group else f"/api/{self.version}"
        scope = f"/namespaces/{namespace}" if namespace is not None else ""
        return f"{root}{scope}/{self.plural}" + (f"/{name}" if name is not None else "")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Kind) and (self.group, self.version, self.kind, self.plural) == (
            other.group, other.version, other.kind, other.plural)

    def __hash__(self) -> int:
        return hash((self.group, self.version, self.kind))

    def __repr__(self) -> str:
        return f"Kind({self.api_version} {self.kind})"


API_GROUP = "fusioninfer.io"
INFERENCE_SERVICE = Kind(API_GROUP, "v1alpha1", "InferenceService", "inferenceservices")

LEADER_WORKER_SET = Kind("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet", "leaderworkersets")
DISAGGREGATED_SET = Kind("disaggregatedset.x-k8s.io", "v1", "DisaggregatedSet", "disaggregatedsets")
ROLE_SCALER = Kind("disaggregatedset.x-k8s.io", "v1", "DisaggregatedSetRoleScaler", "disaggregatedsetrolescalers")

POD_GROUP = Kind("scheduling.volcano.sh", "v1beta1", "PodGroup", "podgroups")
QUEUE = Kind("scheduling.volcano.sh", "v1beta1", "Queue", "queues")
HYPER_NODE = Kind("topology.volcano.sh", "v1alpha1", "HyperNode", "hypernodes")
PRIORITY_CLASS = Kind("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses")

GATEWAY = Kind("gateway.networking.k8s.io", "v1", "Gateway", "gateways")
HTTP_ROUTE = Kind("gateway.networking.k8s.io", "v1", "HTTPRoute", "httproutes")
INFERENCE_POOL = "InferencePool"
"""At the pool API a router names (InferencePool v1 or v1alpha2): ``inference_pool(api_version)``."""
POD_MONITOR = Kind("monitoring.coreos.com", "v1", "PodMonitor", "podmonitors")
CERTIFICATE = Kind("cert-manager.io", "v1", "Certificate", "certificates")
HORIZONTAL_POD_AUTOSCALER = Kind("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers")
SCALED_OBJECT = Kind("keda.sh", "v1alpha1", "ScaledObject", "scaledobjects")
TRIGGER_AUTHENTICATION = Kind("keda.sh", "v1alpha1", "TriggerAuthentication", "triggerauthentications")

POD = Kind("", "v1", "Pod", "pods")
CONFIG_MAP = Kind("", "v1", "ConfigMap", "configmaps")
SERVICE = Kind("", "v1", "Service", "services")
SERVICE_ACCOUNT = Kind("", "v1", "ServiceAccount", "serviceaccounts")
PERSISTENT_VOLUME_CLAIM = Kind("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims")
JOB = Kind("batch", "v1", "Job", "jobs")
DEPLOYMENT = Kind("apps", "v1", "Deployment", "deployments")
RBAC_ROLE = Kind("rbac.authorization.k8s.io", "v1", "Role", "roles")
ROLE_BINDING = Kind("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings")
POD_DISRUPTION_BUDGET = Kind("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets")
NETWORK_POLICY = Kind("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies")
CUSTOM_RESOURCE_DEFINITION = Kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition",
                                  "customresourcedefinitions")


def inference_pool(api_version: str) -> Kind:
    """The InferencePool at API_VERSION (``inference.networking.k8s.io/v1`` or the x-k8s.io v1alpha2)."""
    group, version = api_version.split("/")
    return Kind(group, version, INFERENCE_POOL, "inferencepools")


TAKE_OVER_ANNOTATION = "fusioninfer.io/take-over"
"""``"true"`` on a LeaderWorkerSet: the post-renderer takes it over (``--take-over-lws`` takes all)."""
LAYOUT_ANNOTATION = "fusioninfer.io/layout"
"""``replica`` or ``role`` on a LeaderWorkerSet taken over: the layout it becomes (``--take-over-layout``
sets it for those without)."""
RAY_BOOTSTRAP_ANNOTATION = "fusioninfer.io/ray-bootstrap"
"""``"true"`` on a LeaderWorkerSet taken over: start the leader and workers with the Ray bootstrap, as a
multi-node role's are (the worker template's first container then holds the server's command; there
is no leaderTemplate)."""
DEFAULT_LAYOUT = "replica"
"""A service's layout where its spec names none (the schema's default), and a taken-over LeaderWorkerSet's."""
TAKE_OVER_LAYOUTS = (DEFAULT_LAYOUT, "role")
"""What a taken-over LeaderWorkerSet becomes (the model's layouts but disaggregated, which needs a
prefill and a decode role: one LeaderWorkerSet is one role), the first the default."""
