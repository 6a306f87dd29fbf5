"""Layout disaggregated on the real control plane: LWS v0.10.0's DisaggregatedSet controller makes each
revision's LeaderWorkerSets, rolls a change to one role through every role together, and scales an
autoscaled role through its role scaler; Volcano places each group whole; the hooks, `fusion-helm status`
and the chart's guard follow; the webhook refuses what the post-renderer refuses first."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml

from fusion_helm.base.labels import LABEL_REVISION, LABEL_SET_ROLE, LABEL_WORKER_INDEX
from fusion_helm.expand import expand
from fusion_helm.model import parse_inference_service
from tests.builders import requesting_cpu
from tests.controlplane.cluster import ONE_HELM, PICKERS, PODGROUP, Cluster, eventually, ready, ready_pods, release
from tests.controlplane.hook_kubelet import hook_runner
from tests.controlplane.pickers import RequestStream, kubeconfig_for, running, serving
from tests.controlplane.rollouts import HANDOVER, AskedGroups, PodTimeline, handovers, pairs
from tests.helm import CHART, VALUES, Helm, fusion_helm

DISAGGREGATED_SETS = ("disaggregatedset.x-k8s.io", "v1", "disaggregatedsets")
ROLE_SCALERS = ("disaggregatedset.x-k8s.io", "v1", "disaggregatedsetrolescalers")
LWS = ("leaderworkerset.x-k8s.io", "v1", "leaderworkersets")
REVISION, SET_NAME = "disaggregatedset.x-k8s.io/revision", "disaggregatedset.x-k8s.io/name"
ROLE_NAME, GROUP_INDEX = "fusioninfer.io/role-name", "leaderworkerset.sigs.k8s.io/group-index"
STORY2, STORY4 = VALUES / "story2-pd-qwen3-8b.yaml", VALUES / "story4-pd-multinode-deepseek-r1.yaml"


def in_layout(values: Path, into: Path, **extra: Any) -> Path:
    spec = yaml.safe_load(values.read_text())
    spec.update(layout="disaggregated", **extra)
    into.write_text(yaml.safe_dump(spec))
    return into


def custom(cluster: Cluster, resource: tuple[str, str, str], namespace: str) -> list[dict[str, Any]]:
    return cluster.custom(resource, namespace)


def pods_by(cluster: Cluster, namespace: str) -> dict[tuple[str, str], int]:
    """(role, revision) → pods."""
    found: dict[tuple[str, str], int] = {}
    for pod in cluster.pods(namespace):
        key = (pod.metadata.labels[ROLE_NAME], pod.metadata.labels[REVISION])
        found[key] = found.get(key, 0) + 1
    return found


@pytest.mark.parametrize("story", [STORY2, STORY4], ids=["story2", "story4"])
def test_story_installs_runs_reports_and_uninstalls(cluster: Cluster, helm: Helm, tmp_path: Path, story: Path) -> None:
    namespace = f"ds-{story.stem.split('-')[0]}-helm{helm.major}"
    values = in_layout(story, tmp_path / "values.yaml")
    roles = yaml.safe_load(story.read_text())["roles"]
    want = sum(r["replicas"] * r.get("multinode", {}).get("nodeCount", 1) for r in roles)
    name = yaml.safe_load(story.read_text())["name"]
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(values)
        manifest = installed.manifest()
        # A multi-node role's disruption budget, counted in whole replicas (docs/autoscaling.md).
        budgets = {"PodDisruptionBudget"} if any(r.get("multinode", {}).get("nodeCount", 1) > 1 for r in roles) \
            else set()
        assert {o["kind"] for o in manifest} == {"InferenceService", "PodGroup", "DisaggregatedSet", "NetworkPolicy",
                                                    *budgets}
        assert len(cluster.on_server(namespace, manifest)) == len(manifest)

        pods = ready_pods(cluster, namespace, want)
        [dset] = custom(cluster, DISAGGREGATED_SETS, namespace)
        leader_worker_sets = custom(cluster, LWS, namespace)
        [revision] = {lws["metadata"]["labels"][REVISION] for lws in leader_worker_sets}
        # The controller's LeaderWorkerSets, one per role, named with the revision, owned by the set,
        # carrying our labels; every pod is one of theirs and in our PodGroup.
        assert sorted(lws["metadata"]["name"] for lws in leader_worker_sets) == sorted(
            f"{name}-0-{revision}-{r['name']}" for r in roles)
        for lws in leader_worker_sets:
            [ref] = lws["metadata"]["ownerReferences"]
            assert (ref["kind"], ref["uid"]) == ("DisaggregatedSet", dset["metadata"]["uid"])
            assert lws["metadata"]["labels"]["fusioninfer.io/service"] == name
        assert {p.metadata.labels[REVISION] for p in pods} == {revision}
        assert all(p.metadata.annotations["scheduling.k8s.io/group-name"] == name for p in pods)
        assert all(p.spec.scheduler_name == "volcano" for p in pods)

        # The status hook, as its own service account, and fusion-helm status say the same.
        reported = hook_runner(cluster, installed, name, tmp_path)("status")
        assert reported.returncode == 0, reported.stderr
        [live] = cluster.custom(("fusioninfer.io", "v1alpha1", "inferenceservices"), namespace)
        conditions = {c["type"]: (c["status"], c["reason"]) for c in live["status"]["conditions"]}
        assert conditions == {"Ready": ("True", "AllComponentsRunning"), "Progressing": ("False", "NoRollout")}
        assert {role: c["readyReplicas"] for role, c in live["status"]["components"].items()} == {
            r["name"]: r["replicas"] for r in roles}
        table = fusion_helm("status", "svc", "-n", namespace, "--kubeconfig", cluster.kubeconfig).stdout
        assert all(f"{r['name']}" in table and "Running" in table for r in roles), table

        installed.uninstall()
        eventually(f"nothing of the release left in {namespace}", lambda: not cluster.leftovers(namespace) and not (
            custom(cluster, DISAGGREGATED_SETS, namespace) or custom(cluster, ROLE_SCALERS, namespace)
            or [s for s in cluster.core.list_namespaced_service(namespace).items]))


def scaler_replicas(cluster: Cluster, namespace: str, name: str) -> int | None:
    found = [s for s in custom(cluster, ROLE_SCALERS, namespace) if s["metadata"]["name"] == name]
    return found[0]["spec"]["replicas"] if found else None


def test_a_role_scaled_through_its_role_scaler_stays_scaled_across_an_upgrade(
        cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    """An autoscaler's view: the HPA brings decode to its minimum through the role scaler the
    controller makes; scaling the scaler's scale subresource adds a group placed whole and leaves the
    PodGroup as rendered; a following helm upgrade (scaling another role) keeps the count."""
    namespace = f"ds-autoscale-helm{helm.major}"
    spec = yaml.safe_load(STORY2.read_text())
    decode = spec["roles"][1]
    del decode["replicas"]
    decode.update(multinode={"nodeCount": 2}, autoscaling={"minReplicas": 2, "maxReplicas": 4})
    requesting_cpu(decode)
    values = in_layout(STORY2, tmp_path / "v1.yaml", roles=spec["roles"])
    scaler = "qwen-inference-service-decode"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(values)
        [hpa] = kubernetes.client.AutoscalingV2Api(cluster.api).list_namespaced_horizontal_pod_autoscaler(
            namespace).items
        assert (hpa.spec.scale_target_ref.kind, hpa.spec.scale_target_ref.name) == ("DisaggregatedSetRoleScaler",
                                                                                     scaler)
        eventually("the HPA's minimum on the role scaler", lambda: scaler_replicas(cluster, namespace, scaler) == 2)
        ready_pods(cluster, namespace, 2 + 2 * 2)
        [podgroup] = cluster.custom(PODGROUP, namespace)

        kubernetes.client.CustomObjectsApi(cluster.api).patch_namespaced_custom_object_scale(
            *ROLE_SCALERS[:2], namespace, ROLE_SCALERS[2], scaler, {"spec": {"replicas": 3}})
        pods = ready_pods(cluster, namespace, 2 + 3 * 2)
        new_group = [p for p in pods if p.metadata.labels[ROLE_NAME] == "decode"
                     and p.metadata.labels[GROUP_INDEX] == "2"]
        assert len(new_group) == 2 and all(p.spec.node_name for p in new_group)
        [after] = cluster.custom(PODGROUP, namespace)
        assert after["spec"] == podgroup["spec"]

        spec["roles"][0]["replicas"] = 3
        installed.install(in_layout(STORY2, tmp_path / "v2.yaml", roles=spec["roles"]), verb="upgrade")
        ready_pods(cluster, namespace, 3 + 3 * 2)
        assert scaler_replicas(cluster, namespace, scaler) == 3
        [lws] = [o for o in custom(cluster, LWS, namespace) if o["metadata"]["labels"][ROLE_NAME] == "decode"]
        assert lws["spec"]["replicas"] == 3
        [after] = cluster.custom(PODGROUP, namespace)
        assert after["spec"] == podgroup["spec"]


def test_switching_to_the_layout_is_refused_with_the_pods_it_restarts(
        cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    namespace = f"ds-switch-helm{helm.major}"
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(STORY2)
        ready_pods(cluster, namespace, 6)
        to_set = in_layout(STORY2, tmp_path / "set.yaml")
        args = ("upgrade", "svc", CHART, "-f", to_set, "--post-renderer", "fusion-postrender",
                "--namespace", namespace, "--kubeconfig", cluster.kubeconfig)
        refused = helm.run(*args, check=False)
        assert refused.returncode != 0
        assert ("this upgrade changes InferenceService qwen-inference-service from layout replica to disaggregated, "
                "which replaces every LeaderWorkerSet and restarts its 6 pod(s); to allow it, set "
                "allowLayoutChange=true") in refused.stderr
        helm.run(*args, "--set", "allowLayoutChange=true")
        eventually("the set's pods alone", lambda: {rev for (_, rev) in pods_by(cluster, namespace)} and len(
            [p for p in cluster.pods(namespace) if ready(p) and REVISION in p.metadata.labels]) == 6
            and len(cluster.pods(namespace)) == 6)


def test_the_prerequisite_check_names_a_disaggregated_set_api_not_served(
        cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fusion_helm.base import needs
    from fusion_helm.programs import check, kube
    from tests.controlplane.hook_kubelet import hook_environment, run_check

    spec = {"layout": "disaggregated", "roles": [{"name": "p", "componentType": "prefiller"},
                                                 {"name": "d", "componentType": "decoder"}]}
    ok = run_check(cluster, tmp_path / "ok", spec)
    assert ok.returncode == 0, ok.stderr
    # The check in process against the same API server, its layout's resources one version on, as a cluster
    # without LWS v0.10 serves none of them.
    for name, value in hook_environment(cluster, "default", None, tmp_path / "missing").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(kube, "SERVICEACCOUNT", tmp_path / "missing" / "serviceaccount")
    monkeypatch.setitem(needs.LAYOUT_APIS, "disaggregated", ("disaggregatedset.x-k8s.io/v2/disaggregatedsets",))
    assert check.problems(kube.Kube(), spec, None, None) == [
        "disaggregatedsets (disaggregatedset.x-k8s.io/v2) is not served, and the service's layout disaggregated "
        "needs it: install LWS v0.10.0 or later (its DisaggregatedSet controller and CRDs), or choose another layout "
        "(docs/layouts.md)"]


def webhook_verdict(cluster: Cluster, obj: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return cluster.control_plane.kubectl("apply", "--dry-run=server", "-n", "default", "-f", "-",
                                         stdin=yaml.safe_dump(obj), check=False)


@pytest.mark.parametrize(("change", "refusal", "webhook"), [
    ({"partition": 1}, "a DisaggregatedSet has no partition", "partition is not supported by DisaggregatedSet"),
    ({"maxSurge": 0, "maxUnavailable": 0}, "both 0", "must not be 0 when `maxSurge` is 0"),
])
def test_what_the_post_renderer_refuses_the_webhook_refuses_too(
        cluster: Cluster, change: dict[str, Any], refusal: str, webhook: str) -> None:
    """The post-renderer's refusal is the webhook's rule, said first and by field: without it, the
    DisaggregatedSet written anyway is refused by the API server."""
    from fusion_helm import InvalidSpec
    from tests.builders import role, service

    spec = service(role("prefill", "prefiller"), {**role("decode", "decoder", 2), "rollout": change},
                   layout="disaggregated")
    spec["metadata"]["namespace"] = "default"
    with pytest.raises(InvalidSpec, match=refusal):
        parse_inference_service(spec)
    accepted = copy.deepcopy(spec)
    del accepted["spec"]["roles"][1]["rollout"]
    [dset] = [o for o in expand(parse_inference_service(accepted)) if o["kind"] == "DisaggregatedSet"]
    assert webhook_verdict(cluster, dset).returncode == 0
    dset["spec"]["roles"][1]["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] = change
    verdict = webhook_verdict(cluster, dset)
    assert verdict.returncode != 0 and webhook in verdict.stderr, verdict.stderr


@ONE_HELM
def test_the_rollout_status_while_a_change_rolls(cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    """A prefill change that cannot finish (no room for the new revision's decode surge): the status
    hook says Progressing with how far each role is on the new revision, and Ready from the old one."""
    namespace = f"ds-progress-helm{helm.major}"
    eight = {"limits": {"nvidia.com/gpu": "8"}}
    spec = yaml.safe_load(STORY2.read_text())
    for role_spec in spec["roles"]:
        role_spec["replicas"] = 1
        role_spec["template"]["spec"]["containers"][0]["resources"] = eight
    from tests.controlplane import set_gpu_nodes
    from tests.controlplane.cluster import GPU_NODES

    set_gpu_nodes(cluster.control_plane, 3)  # the two roles, and one group's surge
    try:
        with release(cluster, helm, "svc", namespace) as installed:
            installed.install(in_layout(STORY2, tmp_path / "v1.yaml", roles=spec["roles"]))
            ready_pods(cluster, namespace, 2)
            spec["roles"][0]["template"]["spec"]["containers"][0]["image"] = "vllm/vllm-openai:v0.12.0"
            installed.install(in_layout(STORY2, tmp_path / "v2.yaml", roles=spec["roles"]), verb="upgrade")
            eventually("the new revision's groups", lambda: len(cluster.pods(namespace)) == 4)
            reported = hook_runner(cluster, installed, "qwen-inference-service", tmp_path)("status")
            assert reported.returncode == 0, reported.stderr
            [live] = cluster.custom(("fusioninfer.io", "v1alpha1", "inferenceservices"), namespace)
            conditions = {c["type"]: c for c in live["status"]["conditions"]}
            assert conditions["Ready"]["status"] == "True"
            assert conditions["Progressing"]["status"] == "True"
            assert "groups ready on revision" in conditions["Progressing"]["message"], conditions
            assert json.dumps(live["status"]["components"]["decode"]["readyReplicas"]) == "1"
    finally:
        set_gpu_nodes(cluster.control_plane, GPU_NODES)


ROUTED = VALUES / "router-pd-qwen3-8b.yaml"
BOUNDS = {"prefill": {"maxSurge": 1, "maxUnavailable": 0}, "decode": {"maxSurge": 1, "maxUnavailable": 1}}
SCREENER = "disaggregatedset-rollout-screener"


def routed_values(into: Path, changed: dict[str, str]) -> Path:
    """The router example in this layout, each role with its BOUNDS and the env var ROLLOUT set to the
    value CHANGED gives the role (a template change of that role alone)."""
    spec = yaml.safe_load(ROUTED.read_text())
    spec["layout"] = "disaggregated"
    for role in spec["roles"]:
        if role["name"] in BOUNDS:
            role["rollout"] = BOUNDS[role["name"]]
            role["template"]["spec"]["containers"][0]["env"] = [{"name": "ROLLOUT", "value": changed[role["name"]]}]
    into.write_text(yaml.safe_dump(spec))
    return into


def without_screener(configmap: dict[str, Any]) -> dict[str, Any]:
    """The picker's ConfigMap with the rollout screener taken out of its configuration."""
    config = yaml.safe_load(configmap["data"]["config.yaml"])
    kept = [plugin for plugin in config["plugins"] if plugin["type"] != SCREENER]
    assert len(kept) == len(config["plugins"]) - 1
    unscreened = copy.deepcopy(configmap)
    unscreened["data"]["config.yaml"] = yaml.safe_dump({**config, "plugins": kept})
    return unscreened


@ONE_HELM
def test_rollouts_keep_every_request_on_one_revision_behind_the_screener(
        cluster: Cluster, helm: Helm, tmp_path: Path) -> None:
    """A change to prefill alone, then to decode alone: each time both roles move to a new revision
    together, each within its bounds, while a stream of requests goes to the chart's picker (the
    real llm-d-router) and to the same picker without the screener. Behind the screener no request
    has its prefill and decode on different revisions; without it, some do."""
    namespace = f"ds-screener-helm{helm.major}"
    spec = yaml.safe_load(ROUTED.read_text())
    replicas = {r["name"]: r["replicas"] for r in spec["roles"] if r["name"] in BOUNDS}
    name = spec["name"]
    # Numbered by the probe: no two prompts share a prefix, so no prefix cache holds a request to a pod.
    body = {"model": "Qwen/Qwen3-8B", "prompt": "{n}: explain the KV cache of a transformer.", "max_tokens": 8}
    versions = {"prefill": "1", "decode": "1"}
    with release(cluster, helm, "svc", namespace) as installed:
        installed.install(routed_values(tmp_path / "v0.yaml", versions))
        manifest = {f"{o['kind']}/{o['metadata']['name']}": o for o in installed.manifest()}
        ready_pods(cluster, namespace, sum(replicas.values()) + PICKERS)
        deployment, configmap = manifest[f"Deployment/{name}-router-epp"], manifest[f"ConfigMap/{name}-router-epp"]
        account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
        kubeconfig = kubeconfig_for(cluster, namespace, account, tmp_path / "kubeconfig")
        (tmp_path / "screened").mkdir()
        (tmp_path / "unscreened").mkdir()
        with running(deployment, configmap, namespace, kubeconfig, tmp_path / "screened") as screened, \
                running(deployment, without_screener(configmap), namespace, kubeconfig, tmp_path / "unscreened",
                        offset=10) as unscreened:
            for picker in (screened, unscreened):
                serving(picker)
                eventually("the picker routing", lambda picker=picker: "headers" in picker.route(
                    {**body, "prompt": "a prompt"}))
            for step, role in enumerate(("prefill", "decode"), start=1):
                versions[role] = str(step + 1)
                with PodTimeline(cluster, namespace, name) as timeline, \
                        AskedGroups(cluster, namespace, name) as asked, \
                        RequestStream(screened.routes_command(body)) as kept, \
                        RequestStream(unscreened.routes_command(body)) as free:
                    [before] = timeline.snapshot()[-1].serving(set(replicas)) or [None]
                    assert before is not None
                    installed.install(routed_values(tmp_path / f"v{step}.yaml", versions), verb="upgrade")

                    def rolled(timeline: PodTimeline = timeline, before: str = before) -> bool:
                        last = timeline.snapshot()[-1]
                        revisions = {rev for (_, rev) in last.groups}
                        return len(revisions) == 1 and before not in revisions and all(
                            last.ready.get((r, rev)) == n for r, n in replicas.items() for rev in revisions)
                    def state(timeline: PodTimeline = timeline) -> str:
                        """The watch's last view beside the API's: a stalled rollout, or a watch behind it."""
                        last = timeline.snapshot()[-1]
                        live = sorted((pod.metadata.labels.get(LABEL_SET_ROLE), pod.metadata.labels.get(LABEL_REVISION),
                                       ready(pod)) for pod in cluster.pods(namespace)
                                      if (pod.metadata.labels or {}).get(LABEL_WORKER_INDEX) == "0")
                        return f"watched groups {last.groups}, ready {last.ready}, failure {timeline.failure}; " \
                               f"leaders in the API {live}"
                    eventually(f"every role on a new revision after the {role} change", rolled, timeout=180,
                               describe=state)
                moments = timeline.snapshot()
                assert timeline.failure is None and asked.failure is None, (timeline.failure, asked.failure)
                [after] = {rev for (_, rev) in moments[-1].groups}
                start = next(m.at for m in moments if any(rev == after for (_, rev) in m.groups))
                end = moments[-1].at
                # Both roles moved, each within its bounds: never more groups asked of its LeaderWorkerSets
                # than maxSurge allows, never fewer Ready leaders than maxUnavailable allows at any pod event.
                for r, n in replicas.items():
                    assert moments[-1].ready[(r, after)] == n
                    assert asked.most(r) <= n + BOUNDS[r]["maxSurge"], asked.moments
                    assert min(m.role_ready(r) for m in moments) >= n - BOUNDS[r]["maxUnavailable"]
                assert any(asked.most(r) > n for r, n in replicas.items()), "no surge seen: " + repr(asked.moments)
                both = [m for m in moments if m.serving(set(replicas)) == {before, after}]
                assert both, "the two revisions never served at once"
                (kept_pairs, kept_untold, kept_alone), (free_pairs, free_untold, free_alone) = (
                    pairs(stream, timeline, start, end) for stream in (kept, free))
                mixed = (both[0].at, both[-1].at)
                print(f"\n{role} change (helm {helm.major}): rollout {end - start:.1f} s, both revisions serving "
                      f"{mixed[1] - mixed[0]:.1f} s; requests during the rollout to a prefill and a decode pod: "
                      f"screened {len(kept_pairs)}, unscreened {len(free_pairs)}, of which across revisions "
                      f"{sum(p[1] != d[1] for _, p, d in free_pairs)}; not counted: revision untold "
                      f"{kept_untold} and {free_untold}, to a decode pod alone {kept_alone} and {free_alone}")
                for _, prefill, decode in kept_pairs + free_pairs:
                    assert (prefill[0], decode[0]) == ("prefill", "decode")
                assert len(kept_pairs) >= 100 and len(free_pairs) >= 100
                assert [pair for pair in kept_pairs if pair[1][1] != pair[2][1]] == []
                assert {p[1] for at, p, _ in kept_pairs if mixed[0] <= at <= mixed[1]} == {before, after}
                assert any(p[1] != d[1] for _, p, d in free_pairs)
                # A request that comes just as a revision starts or stops serving may be refused (429, "failed
                # to find available decode workers"): llm-d-router's screener and its endpoint list follow the
                # pods apart and disagree for a moment. Nothing else may fail, and that only rarely.
                changed = handovers(moments, set(replicas))
                failed = kept.failures(start, end)
                unexplained = [(a.answer, f"{min(abs(a.at - at) for at in changed):.2f} s from a handover")
                               for a in failed if not any(abs(a.at - at) <= HANDOVER for at in changed)]
                assert not unexplained, unexplained[:3]
                assert len(failed) * 100 <= len(kept.between(start, end)), [a.answer for a in failed[:3]]
                print(f"refused as the serving revisions changed: {len(failed)}")
