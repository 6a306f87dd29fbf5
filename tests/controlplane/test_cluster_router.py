"""The router example installed with real helm on the local control plane: the API server accepts
every object (CEL rules of the Gateway API and Inference Extension CRDs included), the InferencePool
selects exactly the serving leaders, and the endpoint picker runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.controlplane.cluster import PICKERS, Cluster, eventually, owner, ready_pods, release
from tests.helm import VALUES, Helm
from tests.support import EXAMPLE, monolithic_v1alpha2

WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"


def serving_pods(values: Path) -> tuple[int, int]:
    """(all pods of the serving roles, their leaders)."""
    roles = [role for role in yaml.safe_load(values.read_text())["roles"] if role["componentType"] != "router"]
    replicas = sum(role.get("replicas", 1) for role in roles)
    return sum(role.get("replicas", 1) * role.get("multinode", {}).get("nodeCount", 1) for role in roles), replicas


@pytest.mark.parametrize("variant", ["pd-v1", "monolithic-v1alpha2"])
def test_router_installs_and_its_pool_selects_the_serving_leaders(
        cluster: Cluster, helm: Helm, tmp_path: Path, variant: str) -> None:
    values = VALUES / EXAMPLE if variant == "pd-v1" else monolithic_v1alpha2(tmp_path)
    namespace = f"router-{variant}-helm{helm.major}"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(values)
        manifest = installed.manifest()
        assert len(cluster.on_server(namespace, manifest)) == len(manifest)
        assert {o["kind"] for o in manifest} >= {"InferencePool", "HTTPRoute", "Deployment", "Role"}

        total, leaders = serving_pods(values)
        pods = ready_pods(cluster, namespace, total + PICKERS)  # and the endpoint pickers
        pickers = [p for p in pods if p.metadata.labels.get("fusioninfer.io/component-type") == "router"]
        assert len(pickers) == PICKERS and {p.metadata.owner_references[0].kind for p in pickers} == {"ReplicaSet"}

        [pool] = [o for o in manifest if o["kind"] == "InferencePool"]
        selector = pool["spec"]["selector"].get("matchLabels", pool["spec"]["selector"])
        selected = cluster.core.list_namespaced_pod(
            namespace, label_selector=",".join(f"{k}={v}" for k, v in selector.items())).items
        assert len(selected) == leaders
        assert {p.metadata.name for p in selected} == {
            p.metadata.name for p in pods if p not in pickers and p.metadata.labels[WORKER_INDEX] == "0"}
        assert len({owner(p) for p in selected}) == leaders  # one leader per replica

        # The API server kept the route's rules as rendered: every one to the pool.
        [route] = [o for o in manifest if o["kind"] == "HTTPRoute"]
        live = cluster.control_plane.items("httproutes.gateway.networking.k8s.io", namespace)
        assert [[ref["name"] for ref in rule["backendRefs"]] for rule in live[0]["spec"]["rules"]] == \
            [[pool["metadata"]["name"]]] * len(route["spec"]["rules"])
        installed.uninstall()
        eventually(f"nothing of the release left in {namespace}", lambda: not cluster.leftovers(namespace))
        assert cluster.on_server(namespace, manifest) == []


def test_the_api_server_takes_strategy_as_a_word_or_an_object(cluster: Cluster) -> None:
    """A field of several forms: the CRD keeps it as given (helm's values schema and the post-renderer
    check its forms)."""
    from fusion_helm.schemagen import crd

    cluster.control_plane.apply(yaml.safe_dump(crd()))
    cluster.control_plane.established("inferenceservices.fusioninfer.io")
    design = Path(__file__).parent.parent / "fixtures" / "design"
    example = yaml.safe_load((design / "router-monolithic.yaml").read_text())
    for strategy in ("prefix-cache", {"scorers": [{"type": "queue-size", "weight": 2}]}):
        example["spec"]["roles"][0]["strategy"] = strategy
        created = cluster.control_plane.kubectl("create", "--dry-run=server", "--namespace", "default", "-o", "yaml",
                                                "-f", "-", stdin=yaml.safe_dump(example))
        assert yaml.safe_load(created.stdout)["spec"]["roles"][0]["strategy"] == strategy


def _mutated_routes() -> list[tuple[str, dict[str, Any]]]:
    """The router example's HTTPRoute, as rendered and as each mistake its CRD's CEL rules catch makes it."""
    from tests.builders import render

    values = yaml.safe_load((VALUES / "router-pd-qwen3-8b.yaml").read_text())
    spec = {key: value for key, value in values.items() if key != "name"}
    [route] = [obj for name, obj in render({"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
                                            "metadata": {"name": "cel", "namespace": "default"},
                                            "spec": spec}).items() if name.startswith("HTTPRoute/")]

    def changed(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        copy = yaml.safe_load(yaml.safe_dump(route))
        change(copy["spec"]["rules"][0])
        return copy

    redirect = {"type": "RequestRedirect", "requestRedirect": {"scheme": "https"}}
    header = {"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "x", "value": "1"}]}}
    rewrite = {"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}
    return [
        ("as rendered", route),
        ("a path without its /", changed(lambda rule: rule["matches"][0]["path"].update(value="v1"))),
        ("a path with //", changed(lambda rule: rule["matches"][0]["path"].update(value="/v1//chat"))),
        ("an exact path", changed(lambda rule: rule["matches"][0]["path"].update(type="Exact", value="/v1/x"))),
        ("a redirect beside the pool", changed(lambda rule: rule.update(filters=[redirect]))),
        ("two header modifiers", changed(lambda rule: rule.update(filters=[header, header]))),
        ("a prefix rewrite of an exact match", changed(lambda rule: (
            rule["matches"][0]["path"].update(type="Exact", value="/v1"), rule.update(filters=[rewrite])))),
        ("a prefix rewrite of one prefix match", changed(lambda rule: rule.update(
            matches=[{"path": {"type": "PathPrefix", "value": "/v1"}}], filters=[rewrite]))),
        ("a prefix rewrite of several matches", changed(lambda rule: rule.update(filters=[rewrite]))),
        ("a filter of another type's field", changed(lambda rule: rule.update(filters=[{**header, "type": "CORS"}]))),
    ]


def test_the_upstream_crds_cel_rules_are_judged_as_the_api_server_judges_them(cluster: Cluster) -> None:
    """The post-renderer's CEL runtime (fusion_helm/model/cel.py) against the API server's cel-go, on one
    HTTPRoute the router renders and its mistakes: each refused by both, or by neither."""
    from fusion_helm.model.upstream import violation

    verdicts = {}
    for case, route in _mutated_routes():
        created = cluster.control_plane.kubectl("create", "--dry-run=server", "--namespace", "default", "-o",
                                                "name", "-f", "-", stdin=yaml.safe_dump(route), check=False)
        verdicts[case] = (created.returncode == 0, violation(route) is None)
    assert {case: ours for case, (_, ours) in verdicts.items()} == {
        case: server for case, (server, _) in verdicts.items()}
    assert sum(server for server, _ in verdicts.values()) == 3  # as rendered, an exact path, one prefix rewritten
