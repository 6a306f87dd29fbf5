"""What `helm install` prints after an install (the chart's NOTES.txt), under each layout: the roles, a
count of what the post-renderer made that holds in every layout, the status command, a first request
where the service takes it, and an upgrade that keeps the install's values. (Its commands run against
the control plane: tests/controlplane/test_cluster_notes.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.helm import BBR_CHART, CHART, VALUES, Helm

LAYOUTS = ("replica", "role", "disaggregated")
EXAMPLES = {  # example → where its first request goes
    "story1-monolithic-qwen3-8b.yaml": "pod",
    "story2-pd-qwen3-8b.yaml": "pod",
    "router-pd-qwen3-8b.yaml": "gateway",
    "sglang-router-pd-qwen3-8b.yaml": "service",
}


def notes(helm: Helm, values: Path, *extra: str) -> str:
    """The NOTES `helm install` prints for VALUES: Helm 4's client-side dry run, which needs no cluster
    (Helm 3's asks the cluster for its version; with one, tests/controlplane/test_cluster_notes.py reads Helm 3's)."""
    printed = helm.run("install", "qwen", CHART, "-f", values, "-n", "llm", "--dry-run=client", *extra).stdout
    return printed.split("NOTES:\n", 1)[1]


def served(values: Path, layout: str) -> bool:
    """Whether the post-renderer takes VALUES in LAYOUT (a router pairing prefill and decode needs a
    layout that rolls them together; layout disaggregated needs both)."""
    kinds = {role["componentType"] for role in yaml.safe_load(values.read_text())["roles"]}
    pd = {"prefiller", "decoder"} <= kinds
    return (layout != "disaggregated" or pd) and not (layout == "role" and pd and "router" in kinds)


CASES = [(example, layout) for example in EXAMPLES for layout in LAYOUTS if served(VALUES / example, layout)]


@pytest.mark.parametrize("example,layout", CASES)
def test_the_notes_tell_a_new_user_what_was_made_and_how_to_reach_it(helm4: Helm, tmp_path: Path, example: str,
                                                                     layout: str) -> None:
    values = yaml.safe_load((VALUES / example).read_text())
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump({**values, "layout": layout}))
    text = notes(helm4, path)
    service = values.get("name") or "qwen"
    assert text.startswith(f"InferenceService {service} in namespace llm, layout {layout}:\n")
    for role in values["roles"]:
        assert f"  {role['name']} ({role['componentType']})" in text
    # one count for every layout: the old grep for LeaderWorkerSets counted none of a DisaggregatedSet's
    assert "helm get manifest qwen -n llm | grep '^kind:' | sort | uniq -c" in text
    assert "LeaderWorkerSet'" not in text
    assert "fusion-helm status qwen -n llm" in text and "kubectl get fisvc -n llm" in text
    assert re.search(r"curl https?://\S+/v1/completions", text), text
    target = EXAMPLES[example]
    assert ("kubectl get gateway" in text) == (target == "gateway")
    assert ("kubectl get service" in text) == (target == "service")
    assert ("kubectl get pod" in text) == (target == "pod")
    # a --set alone would reset every other value to the chart's default
    assert "helm upgrade qwen CHART -n llm --reuse-values --set" in text
    assert "--post-renderer fusion-postrender" in text


def test_an_autoscaled_role_shows_its_bounds_and_a_multinode_one_its_nodes(helm4: Helm, tmp_path: Path) -> None:
    values = yaml.safe_load((VALUES / "story4-pd-multinode-deepseek-r1.yaml").read_text())
    values["layout"] = "role"
    decode = values["roles"][1]
    del decode["replicas"]
    decode["autoscaling"] = {"minReplicas": 1, "maxReplicas": 3}
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    text = notes(helm4, path)
    assert "  prefill (prefiller): 1 replica(s) of 2 node(s)\n" in text
    assert "  decode (decoder): 1 to 3 replicas, autoscaled\n" in text


def test_a_route_to_a_gateway_of_the_user_s_names_that_gateway(helm4: Helm, tmp_path: Path) -> None:
    values = yaml.safe_load((VALUES / "router-pd-qwen3-8b.yaml").read_text())
    router = values["roles"][-1]
    del router["gateway"]
    router["httproute"]["parentRefs"] = [{"name": "shared", "namespace": "gateways"}]
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    text = notes(helm4, path)
    assert "ADDRESS=$(kubectl get gateway shared -n gateways -o jsonpath='{.status.addresses[0].value}')" in text
    assert "  curl http://$ADDRESS/v1/completions \\\n" in text


UPGRADE_SET = re.compile(r"helm upgrade qwen CHART -n llm --reuse-values --set '([^']+)'")


@pytest.mark.parametrize("example", sorted(path.name for path in VALUES.glob("*.yaml")))
def test_every_example_s_upgrade_line_is_one_the_post_renderer_takes(helm4: Helm, example: str) -> None:
    """The upgrade NOTES print, run as printed (its --set over the example's values, through the post-renderer):
    a fixed role's replicas, else an autoscaled one's maximum — never the replicas of an autoscaled role."""
    [change] = UPGRADE_SET.findall(notes(helm4, VALUES / example))
    helm4.template(VALUES / example, extra=("--set", change))


def test_a_role_autoscaled_from_zero_shows_zero(helm4: Helm) -> None:
    text = notes(helm4, VALUES / "elastic-qwen3-8b.yaml")
    assert "  chat (worker): 0 to 8 replicas, autoscaled\n" in text
    assert "--set 'roles[0].autoscaling.maxReplicas=16'" in text


def test_a_service_on_a_shared_gateway_is_reached_at_that_gateway(helm4: Helm) -> None:
    text = notes(helm4, VALUES / "shared-gateway-qwen3-8b.yaml")
    assert ("ADDRESS=$(kubectl get gateway inference-gateway -n gateways -o jsonpath='{.status.addresses[0].value}')"
            in text), text


@pytest.mark.parametrize("provider", ["none", "istio"])
def test_the_body_based_router_s_notes_say_whether_anything_calls_it(helm4: Helm, provider: str) -> None:
    printed = helm4.run("install", "gateway", BBR_CHART, "-n", "gateways", "--dry-run=client",
                        "--set", f"provider={provider}").stdout
    text = printed.split("NOTES:\n", 1)[1]
    assert text.startswith("The body-based router for Gateway inference-gateway in namespace gateways")
    assert ("NOTHING CALLS IT YET" in text) == (provider == "none")
    assert "gateway-bbr.gateways:9004" in text or provider == "istio"
    assert "curl http://$ADDRESS/v1/models" in text
