"""A router role: what the expansion reads of it (``routing``) and its objects (``router_objects``)."""

from __future__ import annotations

from fusion_helm.expand.generations import PreciseIndex, Routing, generation_of
from fusion_helm.expand.router import precise
from fusion_helm.expand.router.model_names import adapters_by_model, routed_model_names, serves_adapters
from fusion_helm.expand.router.models import model_objects
from fusion_helm.expand.router.picker import picker_image, picker_objects
from fusion_helm.expand.router.picker_config import picker_config, scorers_for
from fusion_helm.expand.router.pool import inference_pool, target_port
from fusion_helm.expand.router.routes import gateway, http_route
from fusion_helm.expand.router.sidecar import kv_connector, sidecar_rbac
from fusion_helm.model import InferenceService, Router

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from fusion_helm.expand.pods import RoleTemplates


def routing(service: InferenceService, router: Router, templates: Mapping[str, RoleTemplates]) -> Routing:
    """What the expansion reads of ROUTER, for the serving roles' TEMPLATES as given: its picker generation,
    the port its pool routes to, how its picker scores (and, where by the engines' KV-cache events, the
    model their requests target), and on a prefill/decode service the sidecar's KV connector."""
    generation = generation_of(service, router)
    connector = kv_connector(service, generation) if service.disaggregated else None
    scorers = scorers_for(router, generation, serves_adapters(service, templates))
    # Only a router's own strategy names the precise scorer: the defaults and lora-affinity's weighting do not.
    index = None
    if router.reads_engine_caches:
        index = PreciseIndex(precise.published_model(service, router, templates),
                             precise.published_block_tokens(service, router, templates))
    return Routing(router=router, generation=generation, port=target_port(service, router), scorers=scorers,
                   kv_connector=connector, precise=index)


def router_objects(service: InferenceService, routing: Routing, queue_seconds: int | None,
                   templates: Mapping[str, RoleTemplates]) -> list[dict[str, Any]]:
    """The router's objects, for the serving pods of TEMPLATES; QUEUE_SECONDS: how long its picker holds a
    request (None: it does not queue)."""
    router, generation, port = routing.router, routing.generation, routing.port
    config = picker_config(service, routing, queue_seconds)
    render = None
    if routing.precise is not None:
        render = (templates[service.roles[0].name].leading, routing.precise.model)
    objects = picker_objects(service, router, generation, picker_image(router, generation), config, render)
    objects += sidecar_rbac(service, router, templates)
    objects.append(inference_pool(service, router, port))
    objects += model_objects(service, router, generation, adapters_by_model(service, templates))
    gateway_object = gateway(service, router)
    if gateway_object is not None:
        objects.append(gateway_object)
    names = routed_model_names(service, router, templates) if router.shared_gateway is not None else ()
    objects.append(http_route(service, router, port, queue_seconds, names))
    return objects
