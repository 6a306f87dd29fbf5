"""The router example installed with real helm on the local control plane: the API server accepts
every object (CEL rules of the Gateway API and Inference Extension CRDs included), the InferencePool
selects exactly the serving leaders, and the endpoint picker runs."""

from __future__ import annotations

from pathlib import Path

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
