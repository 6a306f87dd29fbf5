"""A router role's objects: the endpoint picker (RBAC, configuration, Service, Deployment), the
InferencePool it serves, the served models, and the Gateway and HTTPRoute in front.

Every object names the pool's API group the same way (docs/router.md); the picker generation
(``generations.GENERATIONS``, chosen by the router or its pool API) decides the picker's image, flags,
configuration, RBAC and model kind.
"""

from __future__ import annotations

from fusion_helm.expand.names import check_router_names
from fusion_helm.expand.router.generations import generation_of
from fusion_helm.expand.router.models import model_objects
from fusion_helm.expand.router.picker import picker_image, picker_objects
from fusion_helm.expand.router.picker_config import picker_config
from fusion_helm.expand.router.pool import inference_pool, target_port
from fusion_helm.expand.router.routes import gateway, http_route
from fusion_helm.model import InferenceService, Router

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["router_objects"]


def router_objects(service: InferenceService, router: Router) -> list[dict[str, Any]]:
    check_router_names(service, router)
    generation = generation_of(service, router)
    disaggregated = service.disaggregated
    port = target_port(service, router)
    config = picker_config(service, router, generation, disaggregated)
    image = picker_image(router, generation, disaggregated)
    objects = picker_objects(service, router, generation, image, config)
    objects.append(inference_pool(service, router, port))
    objects += model_objects(service, router, generation)
    gateway_object = gateway(service, router)
    if gateway_object is not None:
        objects.append(gateway_object)
    objects.append(http_route(service, router, port))
    return objects
