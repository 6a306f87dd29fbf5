"""The endpoint pickers the chart pins, run as processes with exactly the flags and configuration it
renders, against a release installed on the test control plane: for the monolithic and the
prefill/decode router on both pool APIs, each picker loads its EndpointPickerConfig, reconciles its
InferencePool with its own ServiceAccount's rights, takes exactly the serving leaders as endpoints,
reports SERVING, and answers a gateway's ext-proc request with a serving leader (prefill/decode: a
decode leader, and a prefill leader as the prefill host). Without a CRD it watches, it exits at start,
and the chart's prerequisite check names that CRD first."""

from __future__ import annotations

import copy
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fusion_helm import InvalidSpec
from fusion_helm.base import needs
from fusion_helm.expand.generations import GENERATIONS
from fusion_helm.model.router import PD_DISAGGREGATION, STRATEGY_WORDS
from tests.builders import SCRAPED_FROM_MONITORING, render, role, service
from tests.controlplane.builds import picker, shared_crd
from tests.controlplane.cluster import PICKERS, Cluster, eventually, ready_pods, release
from tests.controlplane.hook_kubelet import run_check
from tests.controlplane.pickers import CONFIG_LOADED, kubeconfig_for, running, serving
from tests.engines import VERSIONS
from tests.helm import VALUES, Helm
from tests.support import EXAMPLE, documented_request, monolithic_v1alpha2

V1ALPHA2 = "inference.networking.x-k8s.io/v1alpha2"
WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
COMPONENT = "fusioninfer.io/component-type"
PROMPT = "Summarise the history of the printing press in Europe, from Gutenberg to the steam press. " * 4
DESTINATION = "x-gateway-destination-endpoint"
PREFILL_HOST = "x-prefiller-host-port"
OBJECTIVE_HEADER = "x-gateway-inference-objective"


def monolithic_v1(tmp_path: Path) -> dict[str, Any]:
    values = yaml.safe_load((VALUES / "story1-monolithic-qwen3-8b.yaml").read_text())
    values["roles"].append({"name": "router", "componentType": "router", "strategy": "prefix-cache",
                            "httproute": {"parentRefs": [{"name": "shared-gateway", "namespace": "gateways"}]},
                            "models": [{"name": "batch", "criticality": "Sheddable"}]})
    return values


def pd(tmp_path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((VALUES / EXAMPLE).read_text())
    return loaded


def monolithic_older(tmp_path: Path) -> dict[str, Any]:
    values: dict[str, Any] = yaml.safe_load(monolithic_v1alpha2(tmp_path).read_text())
    values["roles"][-1]["models"][0]["criticality"] = "Critical"
    return values


def llm_d_router(base: Callable[[Path], dict[str, Any]], layout: str | None = None
                 ) -> Callable[[Path], dict[str, Any]]:
    """BASE's values with the llm-d-router picker (and LAYOUT: disaggregated chooses it by itself)."""
    return named("llm-d-router", base, layout)


def named(generation: str, base: Callable[[Path], dict[str, Any]], layout: str | None = None
          ) -> Callable[[Path], dict[str, Any]]:
    """BASE's values with the GENERATION picker named (or LAYOUT, which chooses it by itself)."""
    def values(tmp_path: Path) -> dict[str, Any]:
        loaded = base(tmp_path)
        if layout:
            loaded["layout"] = layout
        else:
            loaded["roles"][-1]["endpointPicker"] = {"generation": generation}
        return loaded
    return values


VARIANTS = {"monolithic-v1": monolithic_v1, "monolithic-v1alpha2": monolithic_older,
            "gie-v1.5-monolithic": named("gie-v1.5", monolithic_v1),
            "llm-d-router-monolithic": llm_d_router(monolithic_v1), "pd": pd,
            "pd-disaggregated": llm_d_router(pd, "disaggregated")}
"""Prefill/decode runs llm-d-router, the generation with a sidecar, whatever the layout."""
LOGS_ENDPOINTS = {GENERATIONS[needs.GIE_V1].image, GENERATIONS[needs.GIE_V05].image}
"""The pickers that log each endpoint they take (their metrics refresher's start and stop,
tests/controlplane/pickers.py); GIE v1.5's data layer and llm-d-router log none."""


def leaders(cluster: Cluster, namespace: str, component: str | None = None) -> dict[str, str]:
    """The serving leaders (of one component type), name → pod IP."""
    return {p.metadata.name: p.status.pod_ip for p in cluster.pods(namespace)
            if p.metadata.labels.get(WORKER_INDEX) == "0"
            and (component is None or p.metadata.labels.get(COMPONENT) == component)}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_picker_runs_as_the_chart_renders_it(cluster: Cluster, helm4: Helm, tmp_path: Path,
                                                 variant: str) -> None:
    values = VARIANTS[variant](tmp_path)
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    namespace = f"picker-{variant}".replace(".", "-")  # a DNS label
    router = values["roles"][-1]
    serving_roles = [r for r in values["roles"] if r["componentType"] != "router"]
    with release(cluster, helm4, "svc", namespace) as installed:
        installed.install(path)
        manifest = {f"{o['kind']}/{o['metadata']['name']}": o for o in installed.manifest()}
        [deployment] = [o for key, o in manifest.items() if key.startswith("Deployment/")]
        [configmap] = [o for key, o in manifest.items() if key.startswith("ConfigMap/")
                       and key.endswith("-epp")]
        [pool] = [o for key, o in manifest.items() if key.startswith("InferencePool/")]
        pods = sum(r.get("replicas", 1) * r.get("multinode", {}).get("nodeCount", 1) for r in serving_roles)
        ready_pods(cluster, namespace, pods + PICKERS)
        port = pool["spec"]["targetPorts"][0]["number"] if "targetPorts" in pool["spec"] \
            else pool["spec"]["targetPortNumber"]
        all_leaders = leaders(cluster, namespace)
        assert len(all_leaders) == sum(r.get("replicas", 1) for r in serving_roles)

        account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
        kubeconfig = kubeconfig_for(cluster, namespace, account, tmp_path / "kubeconfig")
        with running(deployment, configmap, namespace, kubeconfig, tmp_path) as found:
            serving(found)
            assert CONFIG_LOADED in found.output()
            body = {"model": "qwen3-8b", "prompt": PROMPT, "max_tokens": 8}
            disaggregated = any(r["componentType"] == "prefiller" for r in serving_roles)
            if deployment["spec"]["template"]["spec"]["containers"][0]["image"] not in LOGS_ENDPOINTS:
                # A picker that logs no endpoint it takes: they are the ones it routes to
                everyone = {f"{ip}:{port}" for ip in all_leaders.values()}
                routes = found.routing_to(everyone, {**body, "prompt": "{n}: " + PROMPT})
                destinations, prefill_hosts = routes.destinations, routes.prefill_hosts
                if disaggregated:
                    assert destinations == {f"{ip}:{port}" for ip in leaders(cluster, namespace, "decoder").values()}
                    assert prefill_hosts == {f"{ip}:{port}" for ip in leaders(cluster, namespace, "prefiller").values()}
            else:
                eventually("the picker to take the serving leaders",
                           lambda: found.endpoints() == {f"{namespace}/{name}" for name in all_leaders},
                           describe=lambda: f"added {sorted(found.endpoints())}, leaders {sorted(all_leaders)}")
            assert "forbidden" not in found.output()

            if disaggregated:
                # The request docs/router.md shows for this example, its Critical objective named.
                headers, model = documented_request()
                answer = found.route({**body, "model": model}, headers)
                decoders = leaders(cluster, namespace, "decoder")
                prefillers = leaders(cluster, namespace, "prefiller")
                assert answer["headers"][DESTINATION] in {f"{ip}:{port}" for ip in decoders.values()}, answer
                assert answer["headers"][PREFILL_HOST] in {f"{ip}:{port}" for ip in prefillers.values()}, answer
            elif router.get("poolAPIVersion") == V1ALPHA2:
                # The v0.5 picker: the InferenceModel's model name, served as its target models.
                [model] = router["models"]
                answer = found.route({**body, "model": model["modelName"]})
                assert answer["headers"][DESTINATION] in {f"{ip}:{port}" for ip in all_leaders.values()}, answer
                targets = {t["name"] for t in model["targetModels"]}
                assert yaml.safe_load(answer["body"])["model"] in targets
                # A name no InferenceModel has is Sheddable: dropped while the pool's load is unknown.
                assert found.route({**body, "model": "unknown"})["immediate"]["status"] == 429
            else:
                # The v1 picker: an objective applies only to requests that name it in the header.
                answer = found.route(body)
                assert answer["headers"][DESTINATION] in {f"{ip}:{port}" for ip in all_leaders.values()}, answer
                [objective] = [o for key, o in manifest.items() if key.startswith("InferenceObjective/")]
                dropped = found.route(body, {OBJECTIVE_HEADER: objective["metadata"]["name"]})
                assert dropped["immediate"]["status"] == 429, dropped  # Sheddable, the pool's load unknown
        installed.uninstall()


@pytest.mark.parametrize(("image", "crd", "kind"), [
    ("registry.k8s.io/gateway-api-inference-extension/epp:v1.0.1", "inferenceobjectives", "InferenceObjective"),
    ("registry.k8s.io/gateway-api-inference-extension/epp:v0.5.1", "inferencemodels", "InferenceModel"),
])
def test_without_a_crd_it_watches_the_picker_exits_and_the_check_names_it_first(
        cluster: Cluster, tmp_path: Path, image: str, crd: str, kind: str) -> None:
    filename = f"inference.networking.x-k8s.io_{crd}.yaml"
    cluster.control_plane.kubectl("delete", "crd", f"{crd}.inference.networking.x-k8s.io", "--wait")
    try:
        eventually(f"{crd} gone from discovery", lambda: crd not in cluster.control_plane.kubectl(
            "api-resources", "--api-group", "inference.networking.x-k8s.io", "-o", "name").stdout)
        check = run_check(cluster, tmp_path, {"roles": [
            {"name": "w", "componentType": "worker"},
            {"name": "router", "componentType": "router", "poolAPIVersion": V1ALPHA2,
             "endpointPicker": {"generation": "gie-v1.0" if "v1.0" in image else "gie-v0.5"}}]})
        assert check.returncode == 1 and f"{crd} (inference.networking.x-k8s.io/v1alpha2) is not served" in \
            check.stderr, check.stderr

        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(cluster.kubeconfig.read_text())
        config = tmp_path / "config.yaml"
        config.write_text("apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\n"
                          "plugins:\n- type: queue-scorer\n- type: max-score-picker\n- type: single-profile-handler\n"
                          "schedulingProfiles:\n- name: default\n  plugins:\n  - pluginRef: queue-scorer\n"
                          "    weight: 1\n  - pluginRef: max-score-picker\n")
        pool_flags = ["--pool-name=absent", "--pool-namespace=default", f"--config-file={config}"]
        if "v0.5" in image:
            pool_flags = ["-poolName=absent", "-poolNamespace=default", f"-configFile={config}"]
        exited = subprocess.run([str(picker(image)), *pool_flags, f"--kubeconfig={kubeconfig}"],
                                capture_output=True, text=True, timeout=60)
        assert exited.returncode == 1
        assert f'no matches for kind \\"{kind}\\"' in exited.stdout + exited.stderr or \
            f"no matches for {V1ALPHA2}" in exited.stdout + exited.stderr, (exited.stdout + exited.stderr)[-2000:]
    finally:
        cluster.control_plane.apply(shared_crd(filename).read_text())
        cluster.control_plane.established(f"{crd}.inference.networking.x-k8s.io")


PREFIX_PARAMETERS = {needs.LLM_D_ROUTER: {"matchLengthScaleTokens": 64},
                     # v1.5's scorer passes its parameters to the prefix data producer it adds
                     # (pkg/epp/config/loader/configloader.go), which sizes blocks in tokens.
                     needs.GIE_V15: {"blockSizeTokens": 32},
                     needs.GIE_V1: {"hashBlockSize": 32}, needs.GIE_V05: {"hashBlockSize": 32}}


def test_the_v1_5_picker_starts_without_its_model_crds_and_the_check_asks_for_them_only_with_models(
        cluster: Cluster, tmp_path: Path) -> None:
    """GIE v1.5 asks discovery for InferenceObjective and InferenceModelRewrite and watches those served: with
    neither CRD it syncs its pool and serves; the check asks for InferenceObjectives only where the router
    writes some."""
    crds = ("inferenceobjectives", "inferencemodelrewrites")
    namespace = "picker-v15-bare"
    for crd in crds:
        cluster.control_plane.kubectl("delete", "crd", f"{crd}.inference.networking.x-k8s.io", "--wait")
    try:
        eventually("the model CRDs gone from discovery", lambda: not set(crds) & set(
            cluster.control_plane.kubectl("api-resources", "--api-group", "inference.networking.x-k8s.io", "-o",
                                          "name").stdout.replace(".inference.networking.x-k8s.io", "").split()))
        roles: list[dict[str, Any]] = [{"name": "w", "componentType": "worker"},
                                       {"name": "router", "componentType": "router",
                                        "endpointPicker": {"generation": "gie-v1.5"}}]
        check = run_check(cluster, tmp_path / "bare", {"roles": roles})
        assert check.returncode == 0, check.stderr
        roles[1]["models"] = [{"name": "chat"}]
        check = run_check(cluster, tmp_path / "models", {"roles": roles})
        assert check.returncode == 1 and "inferenceobjectives (inference.networking.x-k8s.io/v1alpha2) is not " \
            "served" in check.stderr, check.stderr

        objects = render(service(role("w", "worker", ports=[{"containerPort": 8000, "name": "http"}]), {
            "name": "router", "componentType": "router", "endpointPicker": {"generation": "gie-v1.5"},
            "httproute": {"parentRefs": [{"name": "gw"}]}}))
        pool = objects["InferencePool/svc-router"]
        cluster.control_plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
                                     {**pool, "metadata": {"name": pool["metadata"]["name"], "namespace": namespace}}])
        with running(objects["Deployment/svc-router-epp"], objects["ConfigMap/svc-router-epp"], namespace,
                     cluster.kubeconfig, tmp_path) as found:
            serving(found)
            assert "no matches for kind" not in found.output()
    finally:
        for crd in crds:
            cluster.control_plane.apply(shared_crd(f"inference.networking.x-k8s.io_{crd}.yaml").read_text())
            cluster.control_plane.established(f"{crd}.inference.networking.x-k8s.io")


def configurations() -> Iterator[tuple[str, dict[str, dict[str, Any]]]]:
    """Every strategy the router renders, for each generation, pool API and service shape (and for
    llm-d-router the prefill/decode service in layout disaggregated, with the rollout screener); and for each
    generation its engines' metrics scraped in HTTPS (spec.tls) and, where it has flow control, a role at
    zero behind it (its queue)."""
    # A vLLM with a render server, which precise-prefix-cache's pickers tokenize with.
    engine = {"ports": [{"containerPort": 8000, "name": "http"}],
              "image": f"vllm/vllm-openai:v{VERSIONS['VLLM_VERSION']}"}
    pd_roles = [role("p", "prefiller", **engine), role("d", "decoder", **engine)]
    shapes: dict[str, tuple[list[dict[str, Any]], dict[str, str]]] = {
        "monolithic": ([role("w", "worker", **engine)], {}), "pd": (pd_roles, {}),
        "pd-disaggregated": (pd_roles, {"layout": "disaggregated"})}
    for generation in needs.PICKERS:
        for api in GENERATIONS[generation].pool_apis:
            for shape, (roles, layout) in shapes.items():
                if shape != "monolithic" and GENERATIONS[generation].pd_sidecar is None:
                    continue
                if layout and not GENERATIONS[generation].rollout_screener:
                    continue
                words = [w for w in STRATEGY_WORDS if shape != "monolithic" or w != PD_DISAGGREGATION]
                # Each release's own parameters of its prefix-cache scorer.
                prefix = PREFIX_PARAMETERS[generation]
                for strategy in [*words, {"scorers": [{"type": "prefix-cache", "parameters": prefix},
                                                      {"type": "queue-size", "weight": 2}],
                                          **({"prefillThreshold": 100} if shape == "pd" else {})}]:
                    try:
                        objects = render(service(*copy.deepcopy(roles), {
                            "name": "router", "componentType": "router", "poolAPIVersion": api.value,
                            "strategy": strategy, "endpointPicker": {"generation": str(generation)},
                            "httproute": {"parentRefs": [{"name": "gw"}]}}, **layout))
                    except InvalidSpec as refused:  # a scorer the release has not: refused, not rendered
                        assert any(f"has no {scorer} scorer" in refused.message
                                   for scorer in ("lora-affinity", "precise-prefix-cache")), refused.message
                        continue
                    if layout:
                        assert "disaggregatedset-rollout-screener" in objects["ConfigMap/svc-router-epp"]["data"][
                            "config.yaml"]
                    yield f"{generation} {api.value} {shape} {strategy}", objects
        router = {"name": "router", "componentType": "router",
                  "poolAPIVersion": GENERATIONS[generation].pool_apis[0].value,
                  "endpointPicker": {"generation": str(generation)}, "httproute": {"parentRefs": [{"name": "gw"}]}}
        yield f"{generation} tls", render(service(role("w", "worker", **engine), copy.deepcopy(router),
                                                  tls={"secretName": "tls"}))
        if GENERATIONS[generation].flow_control:
            idle = role("w", "worker", **engine)
            del idle["replicas"]
            idle["autoscaling"] = {"minReplicas": 0, "maxReplicas": 2,
                                   "prometheus": {"serverAddress": "http://127.0.0.1:9"}}
            objects = render(service(idle, router, layout="role", monitoring={"podMonitor": {"enabled": True}},
                                     **SCRAPED_FROM_MONITORING))
            assert "flowControl" in objects["ConfigMap/svc-router-epp"]["data"]["config.yaml"]
            yield f"{generation} flow control", objects


def test_every_configuration_the_router_renders_loads_in_its_picker(cluster: Cluster, tmp_path: Path) -> None:
    loaded, generations = 0, set()
    for case, objects in configurations():
        workdir = tmp_path / str(loaded)
        workdir.mkdir()
        with running(objects["Deployment/svc-router-epp"], objects["ConfigMap/svc-router-epp"], "default",
                     cluster.kubeconfig, workdir) as found:
            eventually(f"{case}: the configuration loaded",
                       lambda: CONFIG_LOADED in found.output() or found.process.poll() is not None)
            assert CONFIG_LOADED in found.output(), f"{case}:\n{found.output()[-3000:]}"
        loaded += 1
        generations.add(case.split()[0])
    assert loaded >= 30 and generations == {str(g) for g in needs.PICKERS}
