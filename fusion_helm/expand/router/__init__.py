"""A router role's objects: the endpoint picker (RBAC, configuration, Service, Deployment), the
InferencePool it serves, the served models, and the Gateway and HTTPRoute in front; and on a
prefill/decode service, the sidecar the router puts on the decoders' serving pods (``sidecar``).

Every object names the pool's API group the same way (docs/router.md); the picker generation
(``generations.GENERATIONS``, chosen by the router or its pool API) decides the picker's image, flags,
configuration, RBAC and model kind.
"""

from __future__ import annotations

from fusion_helm.expand.names import check_router_names
from fusion_helm.expand.router.generations import Generation, generation_of
from fusion_helm.expand.router.model_names import adapters_by_model, routed_model_names, serves_adapters
from fusion_helm.expand.router.models import model_objects
from fusion_helm.expand.router.picker import picker_image, picker_objects
from fusion_helm.expand.router.picker_config import picker_config
from fusion_helm.expand.router.pool import inference_pool, target_port
from fusion_helm.expand.router.routes import gateway, http_route
from fusion_helm.expand.router.sidecar import sidecar_rbac, with_pd_sidecars
from fusion_helm.model import InferenceService, Router

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from fusion_helm.expand.pods import RoleTemplates

__all__ = ["generation_of", "routed_templates", "router_objects"]


def routed_templates(service: InferenceService, router: Router, templates: Mapping[str, RoleTemplates]
                     ) -> dict[str, RoleTemplates]:
    """The serving roles' pod templates as the router needs them: a prefill/decode service's decoders
    with the generation's sidecar in front of their engines."""
    if not service.disaggregated:
        return dict(templates)
    return with_pd_sidecars(service, router, generation_of(service, router), target_port(service, router),
                            templates)


def router_objects(service: InferenceService, router: Router, templates: Mapping[str, RoleTemplates]
                   ) -> list[dict[str, Any]]:
    """ROUTER's objects, for the serving pods of TEMPLATES (``routed_templates``)."""
    check_router_names(service, router)
    generation = generation_of(service, router)
    port = target_port(service, router)
    queue_seconds = _queue_seconds(service, router, generation)
    config = picker_config(service, router, generation, service.disaggregated, queue_seconds,
                           serves_adapters(service, templates))
    objects = picker_objects(service, router, generation, picker_image(router, generation), config)
    objects += sidecar_rbac(service, router, templates)
    objects.append(inference_pool(service, router, port))
    objects += model_objects(service, router, generation, adapters_by_model(service, templates))
    gateway_object = gateway(service, router)
    if gateway_object is not None:
        objects.append(gateway_object)
    names = routed_model_names(service, router, templates) if router.shared_gateway is not None else ()
    objects.append(http_route(service, router, port, queue_seconds, names))
    return objects


def _queue_seconds(service: InferenceService, router: Router, generation: Generation) -> int | None:
    """How long the picker holds a request in its queue, where an autoscaled role needs it to queue (it
    follows the queue, or stands at zero while idle); None: the picker does not queue."""
    if generation.flow_control and any(role.autoscaling is not None for role in service.roles):
        from fusion_helm.expand.autoscaling import Routing, holds_requests, request_ttl_seconds

        if holds_requests(service, Routing(router.name, generation.picker_metrics)):
            return request_ttl_seconds(service)
    return None
