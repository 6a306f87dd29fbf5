"""Who owns a model name on a shared Gateway.

A service's HTTPRoute on a shared Gateway matches the header MODEL_HEADER, which the Gateway's body-based
router sets to the ``model`` a request names, once for each of its model names. Another route that matches
the same name on the same Gateway takes some or all of those requests: an older route of equal rank wins
every tie, and a route with one more match (a method, a path, another header) outranks it whatever its age.
So a name has one owner: the service whose route matches it, or a stable service and the canaries that
declare themselves its (canaryOf: in its namespace, their routes sending a share to its pool).

Everything here is pure, over routes as the API server returns them: the pre-install check
(programs/check.py) refuses a service whose names another route already matches, the status hook
(programs/report.py, programs/status.py) reports a claim that appears later, and the Gateway's /v1/models
(programs/gateway_models.py) lists the names from the same reading of a route.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fusion_helm.base.kinds import GATEWAY, INFERENCE_POOL
from fusion_helm.base.labels import LABEL_SERVICE, MODEL_HEADER

MESSAGE_LIMIT = 4000
"""The most characters a status condition's message takes of the claims (the CRD allows 32768)."""


@dataclass(frozen=True)
class Owner:
    """A service on a shared Gateway, as far as who owns its model names goes."""

    namespace: str
    service: str
    gateway: tuple[str, str]
    """The shared Gateway's namespace and name."""
    pools: frozenset[str]
    """The InferencePools of its namespace a route may send a name's requests to and still be family: its own
    and, for a canary, its stable service's (routes of these are its own, its canaries', its stable service's
    and that one's other canaries')."""
    section: str | None = None
    """The Gateway's listener its route attaches to (None: every listener)."""

    @property
    def gateway_name(self) -> str:
        return "/".join(self.gateway)


@dataclass(frozen=True)
class Claim:
    """Another route matching one of the owner's model names on its Gateway."""

    model: str
    namespace: str
    route: str

    @property
    def route_name(self) -> str:
        return f"{self.namespace}/{self.route}"


def owner_of(spec: Mapping[str, Any], namespace: str, service: str) -> Owner | None:
    """The owner a service of SPEC named SERVICE in NAMESPACE is (None: it has no router on a shared Gateway).
    Its pool is named as fusion_helm/expand/names.py router_name names it: ``<service>-<router>``."""
    router = next((role for role in spec.get("roles") or [] if role.get("componentType") == "router"), None)
    shared = (router or {}).get("sharedGateway")
    if router is None or not shared:
        return None
    pools = {f"{service}-{router['name']}"}
    if router.get("canaryOf"):
        pools.add(str(router["canaryOf"]["inferencePool"]))
    return Owner(namespace, service, (str(shared.get("namespace") or namespace), str(shared["name"])),
                 frozenset(pools), shared.get("sectionName"))


def attached(route: Mapping[str, Any], namespace: str, name: str, section: str | None = None) -> bool:
    """ROUTE names the Gateway NAMESPACE/NAME among its parents (on listener SECTION, where both name one)."""
    own = route["metadata"]["namespace"]
    return any(ref.get("name") == name and ref.get("namespace", own) == namespace
               and ref.get("group", GATEWAY.group) == GATEWAY.group and ref.get("kind", GATEWAY.kind) == GATEWAY.kind
               and (section is None or ref.get("sectionName") in (None, section))
               for ref in (route.get("spec") or {}).get("parentRefs") or ())


def _model_headers(match: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [header for header in match.get("headers") or ()
            if str(header.get("name", "")).lower() == MODEL_HEADER.lower()]


def routed_models(route: Mapping[str, Any]) -> list[str]:
    """The model names ROUTE matches Exact, in its order, each once."""
    names: list[str] = []
    for rule in (route.get("spec") or {}).get("rules") or ():
        for match in rule.get("matches") or ():
            for header in _model_headers(match):
                if header.get("type", "Exact") == "Exact" and header.get("value") not in names:
                    names.append(str(header["value"]))
    return names


def _matches(header: Mapping[str, Any], model: str) -> bool:
    """A match of MODEL_HEADER takes requests for MODEL: Exact, or a regular expression it matches whole (as
    Envoy's RE2 does; one Python cannot read takes nothing here)."""
    value = str(header.get("value", ""))
    if header.get("type", "Exact") == "Exact":
        return value == model
    try:
        return re.fullmatch(value, model) is not None
    except re.error:
        return False


def _family(route: Mapping[str, Any], owner: Owner, models: Iterable[str]) -> bool:
    """ROUTE is the owner's own, or of its canaries or stable service: in its namespace, and the owner's
    (labelled with its service) or sending a share of each request for MODELS it matches to one of its
    pools."""
    metadata = route["metadata"]
    if metadata.get("namespace") != owner.namespace:
        return False
    if (metadata.get("labels") or {}).get(LABEL_SERVICE) == owner.service:
        return True
    wanted = set(models)
    for rule in (route.get("spec") or {}).get("rules") or ():
        claims = any(_matches(header, model) for match in rule.get("matches") or ()
                     for header in _model_headers(match) for model in wanted)
        if claims and not any(ref.get("kind") == INFERENCE_POOL and ref.get("name") in owner.pools
                              and ref.get("namespace", owner.namespace) == owner.namespace
                              for ref in rule.get("backendRefs") or ()):
            return False
    return True


def claims(routes: Iterable[Mapping[str, Any]], owner: Owner, models: Iterable[str]) -> list[Claim]:
    """The routes other than the owner's family attached to its Gateway that match any of MODELS (the owner's
    names), one Claim per name and route, sorted."""
    models = list(dict.fromkeys(models))
    found = set()
    for route in routes:
        if not attached(route, *owner.gateway, owner.section) or _family(route, owner, models):
            continue
        metadata = route["metadata"]
        for rule in (route.get("spec") or {}).get("rules") or ():
            for match in rule.get("matches") or ():
                for header in _model_headers(match):
                    found |= {Claim(model, str(metadata["namespace"]), str(metadata["name"]))
                              for model in models if _matches(header, model)}
    return sorted(found, key=lambda claim: (claim.model, claim.namespace, claim.route))


def refusal(claim: Claim, owner: Owner) -> str:
    """Why the check refuses the owner over CLAIM, and what to do, in a sentence."""
    canary = (", or make this service a canary of that one's pool (router.canaryOf)"
              if claim.namespace == owner.namespace else "")
    return (f"model name {claim.model} is already matched on Gateway {owner.gateway_name} by HTTPRoute "
            f"{claim.route_name}, another service's: requests for it would reach whichever route ranks first, not "
            f"only this service; serve another name (router.modelNames), have that route's owner remove the name"
            f"{canary} (docs/models.md)")


def ownership(found: list[Claim] | None, owner: Owner, models: Iterable[str]) -> tuple[str, str, str]:
    """The ModelNamesOwned condition's status, reason and message from the claims FOUND on the owner's names
    MODELS (None: the routes could not be listed)."""
    shown = ", ".join(models) or "none"
    if found is None:
        return ("Unknown", "NotChecked", f"the HTTPRoutes of every namespace could not be listed, so whether another "
                f"route on Gateway {owner.gateway_name} matches this service's model names is not known")
    if not found:
        return "True", "Owned", f"no other route on Gateway {owner.gateway_name} matches this service's model " \
                                f"names ({shown})"
    message = "; ".join(f"{claim.model} is also matched by HTTPRoute {claim.route_name}" for claim in found)
    if len(message) > MESSAGE_LIMIT:
        message = message[:MESSAGE_LIMIT].rpartition(";")[0] + "; and more"
    return ("False", "ClaimedByAnotherRoute",
            f"on Gateway {owner.gateway_name}: {message}: requests for those names may reach that route's service")
