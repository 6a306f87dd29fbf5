"""Who owns a model name on a shared Gateway (fusion_helm/programs/model_owners.py), over routes as the expansion
writes them: another namespace's route matching one of a service's names is a claim, named with its route,
whatever else it matches (a method, a path); the service's own route, its canaries' and, for a canary, its
stable service's and that one's other canaries' are not, nor a route of another Gateway or listener. The
pre-install check refuses a claimed name in one line naming the route and the fix, and says where it could
not look; the status hook writes the ModelNamesOwned condition, keeps it where a caller did not look, and
warns of a claim made after the install. On the control plane: tests/controlplane/test_cluster_shared_gateway.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fusion_helm.base.kinds import HTTP_ROUTE, INFERENCE_SERVICE
from fusion_helm.base.labels import MODEL_HEADER
from fusion_helm.programs import check, model_owners, report
from fusion_helm.programs.kube import PAGE, ApiError
from fusion_helm.programs.model_owners import Claim, claims, owner_of
from fusion_helm.programs.routed_names import routed_names
from fusion_helm.programs.status import OWNED, service_status
from tests.builders import render, role, service
from tests.helm import VALUES, Helm
from tests.programs.test_check import FakeApi
from tests.support import hook_objects, rendered_spec

SHARED = {"name": "inference-gateway", "namespace": "gateways"}
ROUTES = f"{HTTP_ROUTE.path()}?limit={PAGE}"
"""What the check and the status hook list: every namespace's HTTPRoutes, in pages."""


def spec_of(args: list[str], **router: Any) -> dict[str, Any]:
    router = {"name": "router", "componentType": "router", "sharedGateway": SHARED, **router}
    spec: dict[str, Any] = service(role("w", "worker", args=args), router)["spec"]
    return spec


def route_of(name: str, namespace: str, args: list[str], **router: Any) -> dict[str, Any]:
    """The HTTPRoute the expansion writes for service NAME in NAMESPACE on the shared Gateway, its engines
    taking ARGS (as the API server returns it)."""
    obj = service(role("w", "worker", args=args),
                  {"name": "router", "componentType": "router", "sharedGateway": SHARED, **router})
    obj["metadata"] |= {"name": name, "namespace": namespace}
    return copy.deepcopy(render(obj)[f"HTTPRoute/{name}-router"])


def claimed(routes: list[dict[str, Any]], namespace: str = "team-a", name: str = "a", models: tuple[str, ...] = (
        "org/a",), **router: Any) -> list[tuple[str, str]]:
    owner = owner_of(spec_of(["--model", "org/a"], **router), namespace, name)
    assert owner is not None
    return [(claim.model, claim.route_name) for claim in claims(routes, owner, models)]


def test_another_namespace_s_route_matching_a_name_claims_it_whatever_else_it_matches() -> None:
    thief = route_of("thief", "team-x", ["--model", "org/a"])
    assert claimed([thief]) == [("org/a", "team-x/thief-router")]
    # One match more (POST, an exact path) outranks the owner's route whatever the two routes' ages: still
    # a claim. So is a regular expression the name matches; one it does not match, or cannot be read, is not.
    outranking = copy.deepcopy(thief)
    for rule in outranking["spec"]["rules"]:
        rule["matches"] = [{**match, "method": "POST", "path": {"type": "Exact", "value": "/v1/completions"}}
                           for match in rule["matches"]]
    assert claimed([outranking]) == [("org/a", "team-x/thief-router")]
    pattern = {"metadata": {"name": "wild", "namespace": "team-y"}, "spec": {"parentRefs": [SHARED], "rules": [
        {"matches": [{"headers": [{"type": "RegularExpression", "name": MODEL_HEADER.lower(), "value": "org/.*"}]}]},
        {"matches": [{"headers": [{"type": "RegularExpression", "name": MODEL_HEADER, "value": "other/.*"}]}]},
        {"matches": [{"headers": [{"type": "RegularExpression", "name": MODEL_HEADER, "value": "("}]}]}]}}
    assert claimed([pattern]) == [("org/a", "team-y/wild")]
    # Another service of the owner's own namespace claims it too: the namespace alone makes no family.
    assert claimed([route_of("neighbour", "team-a", ["--model", "org/a"])]) == [("org/a", "team-a/neighbour-router")]


def test_the_owner_s_own_route_and_its_canaries_are_no_claim() -> None:
    own = route_of("a", "team-a", ["--model", "org/a"])
    canary = route_of("a-next", "team-a", ["--model", "org/a"], canaryOf={"inferencePool": "a-router", "weight": 10})
    assert claimed([own, canary]) == []
    # A canary is a canary of the pool it splits with: one of another service's pool claims the owner's name.
    elsewhere = route_of("b-next", "team-a", ["--model", "org/a"], canaryOf={"inferencePool": "b-router", "weight": 10})
    assert claimed([elsewhere]) == [("org/a", "team-a/b-next-router")]
    # The same route in another namespace sends its share to a pool of that namespace: a claim.
    moved = copy.deepcopy(canary)
    moved["metadata"]["namespace"] = "team-x"
    assert claimed([moved]) == [("org/a", "team-x/a-next-router")]


def test_a_canary_s_stable_service_and_its_other_canaries_are_no_claim() -> None:
    stable = route_of("a", "team-a", ["--model", "org/a"])
    sibling = route_of("a-rc", "team-a", ["--model", "org/a"], canaryOf={"inferencePool": "a-router", "weight": 5})
    thief = route_of("thief", "team-x", ["--model", "org/a"])
    assert claimed([stable, sibling, thief], name="a-next", canaryOf={"inferencePool": "a-router", "weight": 10}
                   ) == [("org/a", "team-x/thief-router")]
    # Without canaryOf the stable service's route is another service's: it claims the name.
    assert claimed([stable], name="a-next") == [("org/a", "team-a/a-router")]


def test_routes_of_another_gateway_or_listener_are_no_claim() -> None:
    thief = route_of("thief", "team-x", ["--model", "org/a"])
    same_name_elsewhere, own_namespace, other_listener = (copy.deepcopy(thief) for _ in range(3))
    same_name_elsewhere["spec"]["parentRefs"][0]["namespace"] = "other-gateways"
    own_namespace["spec"]["parentRefs"] = [{"name": SHARED["name"]}]  # the route's own namespace: team-x
    other_listener["spec"]["parentRefs"][0]["sectionName"] = "https"
    assert claimed([same_name_elsewhere, own_namespace]) == []
    assert claimed([other_listener]) == [("org/a", "team-x/thief-router")]  # ours takes every listener
    assert claimed([other_listener], sharedGateway={**SHARED, "sectionName": "http"}) == []
    assert claimed([thief], sharedGateway={**SHARED, "sectionName": "http"}) == [("org/a", "team-x/thief-router")]


def test_only_a_service_on_a_shared_gateway_has_names_to_own() -> None:
    assert owner_of({"roles": [role("w", "worker")]}, "team-a", "a") is None
    assert owner_of({"roles": [role("w", "worker"), {"name": "r", "componentType": "router",
                                                     "gateway": {"gatewayClassName": "istio"}}]}, "team-a", "a") is None
    owner = owner_of(spec_of([], sharedGateway={"name": "gw"}), "team-a", "a")
    assert owner is not None and owner.gateway == ("team-a", "gw") and owner.pools == frozenset({"a-router"})


def api_with(*routes: dict[str, Any], forbidden: bool = False) -> FakeApi:
    return FakeApi(objects={ROUTES: {"items": list(routes), "metadata": {}}}, forbidden=(ROUTES,) if forbidden else ())


def test_the_check_refuses_a_claimed_name_in_a_line_naming_the_route_and_the_fix(
        capsys: pytest.CaptureFixture[str]) -> None:
    spec = spec_of(["--model", "org/a", "--served-model-name", "a", "a-chat"])
    thief = route_of("thief", "team-x", ["--served-model-name", "a-chat"])
    assert check.model_name_problems(api_with(thief), spec, "team-a", "a") == [
        "model name a-chat is already matched on Gateway gateways/inference-gateway by HTTPRoute "
        "team-x/thief-router, another service's: requests for it would reach whichever route ranks first, not only "
        "this service; serve another name (router.modelNames), have that route's owner remove the name "
        "(docs/models.md)"]
    # One of its own namespace could be the stable service this one is to be a canary of: the fix says so.
    [neighbour] = check.model_name_problems(api_with(route_of("b", "team-a", ["--model", "a"])), spec, "team-a", "a")
    assert neighbour.endswith("remove the name, or make this service a canary of that one's pool (router.canaryOf) "
                              "(docs/models.md)"), neighbour
    # Its own route (an upgrade), its canary: nothing to refuse; and no check at all off a shared Gateway.
    own = route_of("a", "team-a", ["--model", "org/a"])
    canary = route_of("a-next", "team-a", ["--model", "a"], canaryOf={"inferencePool": "a-router", "weight": 10})
    assert check.model_name_problems(api_with(own, canary), spec, "team-a", "a") == []
    assert check.model_name_problems(api_with(thief), {"roles": [role("w", "worker")]}, "team-a", "a") == []
    # Through problems(), with the service named, as the Job runs it.
    [refusal] = check.problems(api_with(thief), spec, None, None, "team-a", "a")
    assert refusal.startswith("model name a-chat is already matched"), refusal
    assert capsys.readouterr().out == ""


def test_the_check_says_what_it_could_not_look_at(capsys: pytest.CaptureFixture[str]) -> None:
    thief = route_of("thief", "team-x", ["--model", "org/a"])
    spec = spec_of(["--model", "org/a"])
    assert check.model_name_problems(api_with(thief, forbidden=True), spec, "team-a", "a") == []
    assert "prerequisites: warning: listing the HTTPRoutes of every namespace is refused (403), so whether another " \
           "route on Gateway gateways/inference-gateway already matches" in capsys.readouterr().out
    scripted = spec_of(["--model", "org/a"])
    scripted["roles"].insert(0, {**role("s", "worker", command=["sh", "-c", 'exec vllm serve "$@"'], args=["org/s"])})
    [refusal] = check.model_name_problems(api_with(thief), scripted, "team-a", "a")
    assert "model name org/a " in refusal
    assert "prerequisites: the model names of role(s) s are not read here (an engine started from a script): give " \
           "router.modelNames" in capsys.readouterr().out


def test_the_routes_are_listed_page_by_page() -> None:
    first, second = (route_of(name, "team-x", ["--model", "org/a"]) for name in ("x", "y"))
    api = FakeApi(objects={ROUTES: {"items": [first], "metadata": {"continue": "t1"}},
                           f"{ROUTES}&continue=t1": {"items": [second], "metadata": {}}})
    assert [route["metadata"]["name"] for route in api.every(HTTP_ROUTE)] == ["x-router", "y-router"]
    assert claimed(api.every(HTTP_ROUTE)) == [("org/a", "team-x/x-router"), ("org/a", "team-x/y-router")]


def stored(spec: dict[str, Any], conditions: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    return {"metadata": {"name": "a", "namespace": "team-a", "generation": 2}, "spec": spec,
            "status": {"conditions": list(conditions)}}


def conditions_of(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {condition["type"]: condition for condition in body["conditions"]}


def test_the_status_hook_writes_who_owns_the_names_from_the_route_as_written() -> None:
    spec = spec_of(["--model", "org/a"])
    own = route_of("a", "team-a", ["--model", "org/a", "--served-model-name", "a", "a-sql"])
    # The names are the route's as the API server has it (a-sql), not those the spec's command line shows.
    thief = route_of("thief", "team-x", ["--served-model-name", "a-sql"])
    owned = report.owned(api_with(own, thief), "team-a", stored(spec))
    assert owned == ("False", "ClaimedByAnotherRoute",
                     "on Gateway gateways/inference-gateway: a-sql is also matched by HTTPRoute team-x/thief-router: "
                     "requests for those names may reach that route's service")
    _, body = service_status(stored(spec), [], "2026-11-02T00:00:00Z", owned=owned)
    assert {key: conditions_of(body)[OWNED][key] for key in ("status", "reason", "observedGeneration")} == {
        "status": "False", "reason": "ClaimedByAnotherRoute", "observedGeneration": 2}
    assert report.owned(api_with(own), "team-a", stored(spec)) == (
        "True", "Owned", "no other route on Gateway gateways/inference-gateway matches this service's model names "
        "(a, a-sql)")
    unknown = report.owned(api_with(own, forbidden=True), "team-a", stored(spec))
    assert unknown is not None and unknown[:2] == ("Unknown", "NotChecked")
    assert report.owned(api_with(thief), "team-a", stored({"roles": [role("w", "worker")]})) is None


def test_a_caller_that_did_not_list_the_routes_keeps_the_condition_as_it_was() -> None:
    """`fusion-helm status --write` reads no routes: it keeps what the hook wrote; off a shared Gateway the
    condition goes."""
    written = {"type": OWNED, "status": "False", "reason": "ClaimedByAnotherRoute", "message": "m",
               "observedGeneration": 1, "lastTransitionTime": "2026-11-01T00:00:00Z"}
    _, body = service_status(stored(spec_of(["--model", "org/a"]), (written,)), [], "2026-11-02T00:00:00Z")
    assert conditions_of(body)[OWNED] == written
    _, body = service_status(stored({"roles": [role("w", "worker")]}, (written,)), [], "2026-11-02T00:00:00Z")
    assert OWNED not in conditions_of(body)


class ReportApi(FakeApi):
    """FakeApi that also takes the status patches the report writes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.patches: list[Any] = []

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        if method == "PATCH":
            self.patches.append(body)
            return {}
        return super().request(method, path, body, content_type)


def test_the_report_warns_of_a_claim_made_after_the_install(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    spec = spec_of(["--model", "org/a"])
    path = INFERENCE_SERVICE.path("team-a", "a")
    routes = [route_of("a", "team-a", ["--model", "org/a"])]
    api = ReportApi(objects={path: stored(spec), ROUTES: {"items": routes, "metadata": {}},
                             "/api/v1/namespaces/team-a/pods?labelSelector=fusioninfer.io/service%3Da": {"items": []}})
    monkeypatch.setattr(report, "Kube", lambda: api)
    assert report.main(["--namespace", "team-a", "--service", "a"]) == 0
    assert "warning" not in capsys.readouterr().out
    routes.append(route_of("thief", "team-x", ["--model", "org/a"]))  # a day later
    assert report.main(["--namespace", "team-a", "--service", "a"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "InferenceService team-a/a: warning: ClaimedByAnotherRoute: on Gateway gateways/inference-gateway: org/a is "
        "also matched by HTTPRoute team-x/thief-router: requests for those names may reach that route's service")
    assert [conditions_of(patch["status"])[OWNED]["status"] for patch in api.patches] == ["True", "False"]


def test_a_long_list_of_claims_is_cut_to_fit_a_condition() -> None:
    owner = owner_of(spec_of(["--model", "org/a"]), "team-a", "a")
    assert owner is not None
    found = [Claim(f"model-{index:04}", "team-x", "thief") for index in range(500)]
    status, _, message = model_owners.ownership(found, owner, [claim.model for claim in found])
    assert status == "False" and len(message) < model_owners.MESSAGE_LIMIT + 200 and "; and more" in message


def test_a_route_the_api_server_cannot_list_fails_the_check_on_anything_but_403_and_404() -> None:
    api = FakeApi(objects={})
    assert check.model_name_problems(api, spec_of(["--model", "org/a"]), "team-a", "a") == []  # 404: not served

    class Broken(FakeApi):
        def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
            raise ApiError(method, path, 500, "etcd")

    with pytest.raises(ApiError):
        check.model_name_problems(Broken(), spec_of(["--model", "org/a"]), "team-a", "a")


def test_the_chart_lets_the_hooks_list_routes_only_for_a_service_on_a_shared_gateway(helm: Helm) -> None:
    """A ClusterRole that lists HTTPRoutes and nothing else, bound to the hooks' ServiceAccount for as long as
    their RBAC lives; the check told the service's name; and the spec it is given read for the names the
    route will match."""
    shared = VALUES / "shared-gateway-qwen3-8b.yaml"
    objects = hook_objects(helm, shared)
    [cluster_role] = [key for key in objects if key.startswith("ClusterRole/")]
    assert objects[cluster_role]["rules"] == [
        {"apiGroups": ["gateway.networking.k8s.io"], "resources": ["httproutes"], "verbs": ["list"]}]
    binding = objects[cluster_role.replace("ClusterRole/", "ClusterRoleBinding/")]
    assert binding["roleRef"]["name"] == cluster_role.partition("/")[2]
    assert [subject["name"] for subject in binding["subjects"]] == ["qwen3-hooks"]
    events = {key: obj["metadata"]["annotations"]["helm.sh/hook"] for key, obj in objects.items()}
    assert events[cluster_role] == events["Role/qwen3-hooks"]  # the check's and the status hook's phases
    args = objects["Job/qwen3-hooks-check"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--service") + 1] == "qwen3"
    assert routed_names(rendered_spec(helm, shared)) == (["qwen3-8b"], [])
    assert not [key for key in hook_objects(helm, VALUES / "story1-monolithic-qwen3-8b.yaml")
                if key.startswith("ClusterRole")]
