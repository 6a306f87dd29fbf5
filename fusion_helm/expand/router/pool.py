"""The InferencePool: the service's serving pods (a multi-node replica's leader, or each of its pods
where every node serves), behind the router's endpoint picker."""

from __future__ import annotations

from fusion_helm.base.kinds import INFERENCE_POOL
from fusion_helm.base.labels import LABEL_SERVICE
from fusion_helm.expand.labelling import object_metadata, role_labels, serving_selector
from fusion_helm.expand.names import picker_name, router_name
from fusion_helm.expand.router.ports import PICKER_GRPC_PORT
from fusion_helm.expand.serving_port import ROUTED, common_port
from fusion_helm.model import InferenceService, PoolAPI, Router

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any



def selector(service: InferenceService) -> dict[str, str]:
    return {LABEL_SERVICE: service.name, **serving_selector(service)}


def target_port(service: InferenceService, router: Router) -> int:
    """The router's targetPort, else the serving port every serving role agrees on."""
    if router.target_port is not None:
        return router.target_port
    return common_port(service, ROUTED, f"{router.path}.targetPort", "an InferencePool routes to")


def inference_pool(service: InferenceService, router: Router, port: int) -> dict[str, Any]:
    picker = picker_name(service.name, router.name)
    spec: dict[str, Any]
    if router.pool_api is PoolAPI.V1:
        spec = {"selector": {"matchLabels": selector(service)}, "targetPorts": [{"number": port}],
                "endpointPickerRef": {"name": picker, "port": {"number": PICKER_GRPC_PORT},
                                      "failureMode": router.picker_failure_mode}}
    else:
        spec = {"selector": selector(service), "targetPortNumber": port,
                "extensionRef": {"name": picker, "portNumber": PICKER_GRPC_PORT,
                                 "failureMode": router.picker_failure_mode}}
    return {
        "apiVersion": router.pool_api.value,
        "kind": INFERENCE_POOL,
        "metadata": object_metadata(service, router_name(service.name, router.name),
                                           role_labels(service, router)),
        "spec": spec,
    }
