"""What differs between the two InferencePool APIs, from the pool's spec to the picker that reads it.

Each pool API comes with the endpoint picker release of its era: the v1 pool with the Gateway API
Inference Extension v1.0 picker (InferenceObjectives, kebab-case flags), the v1alpha2 pool with the
v0.5 picker (InferenceModels, camelCase flags). Prefill/decode scheduling is not in the upstream
picker; the llm-d inference scheduler, built on the v1.0 picker, adds it.
"""

from __future__ import annotations

from collections.abc import Mapping

from fusion_helm.model import PoolAPI, Scorer
from fusion_helm.records import record

MODEL_API_VERSION = "inference.networking.x-k8s.io/v1alpha2"
"""InferenceModel and InferenceObjective share it."""
MODEL_GROUP = MODEL_API_VERSION.split("/")[0]
GATEWAY_API_VERSION = "gateway.networking.k8s.io/v1"


@record
class PickerFlags:
    """The picker's flag names for what the router sets; None where the release has no such flag."""

    pool_name: str
    pool_namespace: str
    pool_group: str | None
    grpc_port: str
    grpc_health_port: str
    config_file: str

    def names(self) -> tuple[str | None, ...]:
        return (self.pool_name, self.pool_namespace, self.pool_group, self.grpc_port, self.grpc_health_port,
                self.config_file)


@record
class PoolGeneration:
    api: PoolAPI
    image: str
    disaggregated_image: str | None
    """A picker with prefill/decode profiles for this pool API, if one exists."""
    flags: PickerFlags
    scorer_plugins: Mapping[Scorer, str]
    """EndpointPickerConfig plugin type of each scorer the release has."""
    model_kind: str
    model_resource: str

    @property
    def group(self) -> str:
        return self.api.group


GENERATIONS: Mapping[PoolAPI, PoolGeneration] = {
    PoolAPI.V1: PoolGeneration(
        api=PoolAPI.V1,
        image="registry.k8s.io/gateway-api-inference-extension/epp:v1.0.1",
        disaggregated_image="ghcr.io/llm-d/llm-d-inference-scheduler:v0.3.2",
        flags=PickerFlags(pool_name="pool-name", pool_namespace="pool-namespace", pool_group="pool-group",
                          grpc_port="grpc-port", grpc_health_port="grpc-health-port", config_file="config-file"),
        scorer_plugins={Scorer.PREFIX_CACHE: "prefix-cache-scorer",
                        Scorer.KV_CACHE_UTILIZATION: "kv-cache-utilization-scorer",
                        Scorer.QUEUE_SIZE: "queue-scorer", Scorer.LORA_AFFINITY: "lora-affinity-scorer"},
        model_kind="InferenceObjective",
        model_resource="inferenceobjectives",
    ),
    PoolAPI.V1ALPHA2: PoolGeneration(
        api=PoolAPI.V1ALPHA2,
        image="registry.k8s.io/gateway-api-inference-extension/epp:v0.5.1",
        disaggregated_image=None,
        flags=PickerFlags(pool_name="poolName", pool_namespace="poolNamespace", pool_group=None,
                          grpc_port="grpcPort", grpc_health_port="grpcHealthPort", config_file="configFile"),
        scorer_plugins={Scorer.PREFIX_CACHE: "prefix-cache-scorer", Scorer.KV_CACHE_UTILIZATION: "kv-cache-scorer",
                        Scorer.QUEUE_SIZE: "queue-scorer"},
        model_kind="InferenceModel",
        model_resource="inferencemodels",
    ),
}


def required_apis(generation: PoolGeneration, gateway: bool) -> list[str]:
    """The resources (group/version/resource) a router needs served: its pool's, its model objects' (the
    picker watches them whether or not the router serves models, and exits at start without their CRD),
    the HTTPRoute's, and with a GATEWAY the Gateway's. The pre-install hook checks them."""
    return [f"{generation.api.value}/inferencepools", f"{MODEL_API_VERSION}/{generation.model_resource}",
            f"{GATEWAY_API_VERSION}/httproutes", *([f"{GATEWAY_API_VERSION}/gateways"] if gateway else [])]


def backend_ref(generation: PoolGeneration, pool: str) -> dict[str, str]:
    """An HTTPRoute backendRef to the pool (no port: the pool has its own)."""
    return {"group": generation.group, "kind": "InferencePool", "name": pool}
