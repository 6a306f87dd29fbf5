"""How traffic reaches the pool: the router's Gateway, if it gives one, and an HTTPRoute whose every
rule routes through the InferencePool."""

from __future__ import annotations

import re
from collections.abc import Mapping

from fusion_helm.base.kinds import GATEWAY, HTTP_ROUTE
from fusion_helm.base.labels import MODEL_HEADER
from fusion_helm.errors import InvalidSpec, show
from fusion_helm.expand.generations import backend_ref
from fusion_helm.expand.labelling import object_metadata, role_labels
from fusion_helm.expand.names import router_name
from fusion_helm.model import InferenceService, Router, upstream
from fusion_helm.model.router import SharedGateway
from fusion_helm.model.validation import check

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any



def gateway(service: InferenceService, router: Router) -> dict[str, Any] | None:
    if router.gateway is None:
        return None
    return {"apiVersion": GATEWAY.api_version, "kind": GATEWAY.kind,
            "metadata": object_metadata(service, router_name(service.name, router.name),
                                               role_labels(service, router)),
            "spec": dict(router.gateway)}


def http_route(service: InferenceService, router: Router, target_port: int, queue_seconds: int | None = None,
               model_names: tuple[str, ...] = ()) -> dict[str, Any]:
    """The user's HTTPRoute spec, each rule kept: one without backendRefs gets the pool, one with them
    must name the pool as the pool's API version does. Attached to the router's gateway by default.
    Where the picker holds requests up to QUEUE_SECONDS, each rule's request timeout leaves them that wait.
    On a shared Gateway each rule matches only MODEL_NAMES (``for_models``); a canary's split its requests."""
    name = router_name(service.name, router.name)
    path = f"{router.path}.httproute"
    spec = dict(router.httproute)
    if router.shared_gateway is not None:
        spec = {"parentRefs": [_parent_ref(router.shared_gateway)], **spec}
    elif not spec.get("parentRefs"):
        if router.gateway is None:
            raise InvalidSpec(service.where, f"{path}.parentRefs",
                              "is required without a gateway: name the Gateway the route attaches to, or give the "
                              "router a gateway")
        spec = {"parentRefs": [{"group": GATEWAY.group, "kind": GATEWAY.kind, "name": name}],
                **{key: value for key, value in spec.items() if key != "parentRefs"}}
    pool = backend_ref(router.pool_api, name)
    spec["rules"] = [_inference_only(service, _through_pool(service, rule, f"{path}.rules[{index}]", pool, router,
                                                            target_port), f"{path}.rules[{index}]", router)
                     for index, rule in enumerate(spec.get("rules") or [{}])]
    if router.shared_gateway is not None:
        spec["rules"] = [for_models(service, rule, f"{path}.rules[{index}]", model_names, router.canary_of is not None)
                         for index, rule in enumerate(spec["rules"])]
    if router.canary_of is not None:
        spec["rules"] = [_split(service, router, rule, f"{path}.rules[{index}]", pool)
                         for index, rule in enumerate(spec["rules"])]
    if queue_seconds is not None:
        spec["rules"] = [_waiting(service, rule, f"{path}.rules[{index}]", queue_seconds)
                         for index, rule in enumerate(spec["rules"])]
    return {"apiVersion": HTTP_ROUTE.api_version, "kind": HTTP_ROUTE.kind,
            "metadata": object_metadata(service, name, role_labels(service, router)),
            "spec": spec}


def _parent_ref(shared: SharedGateway) -> dict[str, str]:
    ref = {"group": GATEWAY.group, "kind": GATEWAY.kind, "name": shared.name}
    if shared.namespace is not None:
        ref["namespace"] = shared.namespace
    if shared.section_name is not None:
        ref["sectionName"] = shared.section_name
    return ref


MAX_MATCHES = 64
"""An HTTPRoute rule's most matches (the Gateway API's CRD)."""


MATCHES = ("spec", "rules", "[]", "matches")


def _inference_only(service: InferenceService, rule: Mapping[str, Any], path: str, router: Router) -> dict[str, Any]:
    """RULE matching only the router's inference paths, each exactly: a match without a path once per path, one
    with a prefix once per path under it; so no other endpoint of the engines (LoRA adapters' loading,
    /tokenize, /metrics) is reachable through the Gateway, whatever a request's body says."""
    check(service.where, f"{path}.matches", upstream.schema(HTTP_ROUTE.api_version, HTTP_ROUTE.kind, *MATCHES),
          rule.get("matches") or [])
    matches = []
    for index, match in enumerate(rule.get("matches") or [{}]):
        given = match.get("path") or {"type": "PathPrefix", "value": "/"}
        kind, value = given.get("type") or "PathPrefix", given.get("value") or "/"
        if kind == "Exact":
            covered = [value] if value in router.inference_paths else []
        elif kind == "PathPrefix":
            prefix = value.rstrip("/") + "/"
            covered = [served for served in router.inference_paths if served == value or served.startswith(prefix)]
        else:
            covered = []
        if not covered:
            raise InvalidSpec(service.where, f"{path}.matches[{index}].path",
                              f"matches {kind} {show(value)}, which holds none of the inference paths the route "
                              f"matches ({', '.join(router.inference_paths)}); add the path to "
                              f"{router.path}.inferencePaths, or match an Exact path or a PathPrefix of them")
        matches += [{**match, "path": {"type": "Exact", "value": served}} for served in covered]
    if len(matches) > MAX_MATCHES:
        raise InvalidSpec(service.where, f"{path}.matches",
                          f"would have {len(matches)} matches (each match once per inference path it holds), more "
                          f"than an HTTPRoute rule's {MAX_MATCHES}; use fewer matches or fewer inferencePaths")
    return {**rule, "matches": matches}


def for_models(service: InferenceService, rule: Mapping[str, Any], path: str, model_names: tuple[str, ...],
               inference_only: bool = False) -> dict[str, Any]:
    """RULE matching only requests for MODEL_NAMES: each of its matches (a rule without one matches every
    request) once per name, with the header the body-based router sets. INFERENCE_ONLY: POST requests only,
    which the Gateway API ranks above any match without a method, so a canary's split decides the requests
    its stable service's route matches too, whichever route is older."""
    matches = []
    for index, match in enumerate(rule.get("matches") or [{}]):
        headers = match.get("headers") or []
        if any(str(header.get("name", "")).lower() == MODEL_HEADER.lower() for header in headers):
            raise InvalidSpec(service.where, f"{path}.matches[{index}].headers",
                              f"match {MODEL_HEADER}, which sharedGateway matches with the model names; name them in "
                              "the router's modelNames instead")
        if inference_only and "method" in match:
            raise InvalidSpec(service.where, f"{path}.matches[{index}].method",
                              "is canaryOf's to write: a canary's route matches POST requests, which decides them "
                              "ahead of its stable service's route; remove it")
        method = {"method": "POST"} if inference_only else {}
        matches += [{**match, **method, "headers": [*headers, {"type": "Exact", "name": MODEL_HEADER, "value": name}]}
                    for name in model_names]
    if len(matches) > MAX_MATCHES:
        raise InvalidSpec(service.where, f"{path}.matches",
                          f"would have {len(matches)} matches ({len(model_names)} model names, each for each match "
                          f"and inference path), more than an HTTPRoute rule's {MAX_MATCHES}; serve fewer names here, "
                          "or use fewer matches or inferencePaths")
    return {**rule, "matches": matches}


def _split(service: InferenceService, router: Router, rule: Mapping[str, Any], path: str, pool: Mapping[str, str]
           ) -> dict[str, Any]:
    """RULE sending the canary's weight of its requests to the router's pool and the rest to the stable pool."""
    canary = router.canary_of
    assert canary is not None
    if canary.pool == pool["name"]:
        raise InvalidSpec(service.where, f"{router.path}.canaryOf.inferencePool",
                          f"is this service's own pool {show(pool['name'])}: name the stable service's")
    if len(rule["backendRefs"]) != 1:
        raise InvalidSpec(service.where, f"{path}.backendRefs",
                          "has several backends, and canaryOf splits a rule between the stable pool and this one; "
                          "give one, or none")
    [own] = rule["backendRefs"]
    stable = {**own, "name": canary.pool}
    return {**rule, "backendRefs": [{**stable, "weight": 100 - canary.weight}, {**own, "weight": canary.weight}]}


def _through_pool(service: InferenceService, rule: Mapping[str, Any], path: str, pool: Mapping[str, str],
                  router: Router, target_port: int) -> dict[str, Any]:
    refs = rule.get("backendRefs")
    if not refs:
        return {**rule, "backendRefs": [dict(pool)]}
    for index, ref in enumerate(refs):
        ref_path = f"{path}.backendRefs[{index}]"
        # Gateway API defaults: group "" (core), kind Service.
        kind, group = ref.get("kind", "Service"), ref.get("group", "")
        if kind != pool["kind"] or ref["name"] != pool["name"]:
            raise InvalidSpec(service.where, ref_path,
                              f"points to {kind} {show(ref['name'])}, not the router's InferencePool "
                              f"{show(pool['name'])}; "
                              "every rule routes through the pool (a rule without backendRefs gets it)")
        if group != pool["group"]:
            raise InvalidSpec(service.where, f"{ref_path}.group",
                              f"must be {show(pool['group'])}, the group of the router's {router.pool_api.value} "
                              f"InferencePool, not {show(group)}")
        if "port" in ref and ref["port"] != target_port:
            raise InvalidSpec(service.where, f"{ref_path}.port",
                              f"must be the pool's target port {target_port}, not {ref['port']}; or omit it")
    return dict(rule)


GENERATION_SECONDS = 600
"""What a request's timeout allows beyond its wait in the picker's queue: its answer, streamed."""
DURATION = re.compile(r"(?:([0-9]+)(h|ms|m|s))")
UNIT_SECONDS = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}


def _waiting(service: InferenceService, rule: Mapping[str, Any], path: str, queue_seconds: int) -> dict[str, Any]:
    """A rule whose request timeout outlasts the picker's queue: the user's, if long enough, else
    QUEUE_SECONDS and GENERATION_SECONDS (a gateway's default may be seconds: Envoy's is 15)."""
    timeouts = rule.get("timeouts") or {}
    given = timeouts.get("request")
    if given is None:
        return {**rule, "timeouts": {**timeouts, "request": f"{queue_seconds + GENERATION_SECONDS}s"}}
    seconds = duration_seconds(given)
    if seconds is not None and 0 < seconds <= queue_seconds:
        raise InvalidSpec(service.where, f"{path}.timeouts.request",
                          f"is {show(given)}, and a request may wait {queue_seconds}s in the picker's queue while an "
                          f"autoscaled role starts a replica (its cold start); raise it above {queue_seconds}s, or "
                          "remove it")
    return dict(rule)


def duration_seconds(text: str) -> float | None:
    """A Gateway API duration (``1h``, ``10m30s``, ``500ms``) in seconds; None if it is not one (the
    HTTPRoute's schema refuses it)."""
    parts = DURATION.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        return None
    return sum(int(number) * UNIT_SECONDS[unit] for number, unit in parts)
