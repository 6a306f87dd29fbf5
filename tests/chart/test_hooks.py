"""The hook Jobs as the chart renders them: their code is the repo's, they need only a stock Python,
they may do only what they use, and post-renderers leave them alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ci.chart_copies import HEADER as SHIPPED_HEADER
from ci.chart_copies import PROGRAMS, shipped
from fusion_helm.base import needs
from fusion_helm.programs import check, report
from fusion_helm.programs.kube import ApiError, Kube
from tests.builders import render, role, service
from tests.helm import ROOT, VALUES, Helm
from tests.support import hook_objects, lay_out, rendered_spec

STORY4 = VALUES / "story4-pd-multinode-deepseek-r1.yaml"
HOOK_IMAGE = "python:3.12-alpine@sha256:6d43704baacd1bfbe7c295d7f13079d5d8104ed33568873133f8fc69980419df"


def mount(objects: dict[str, dict[str, Any]], job: str, into: Path) -> list[str]:
    """Lay the ConfigMap out as the Job's volume does; return the Job's command line."""
    pod = objects[job]["spec"]["template"]["spec"]
    assert len(pod["volumes"]) == 1, pod["volumes"]
    lay_out(objects, pod, into)
    [container] = pod["containers"]
    return [*container["command"], *container["args"]]


def test_the_hooks_and_their_permissions(helm: Helm) -> None:
    objects = hook_objects(helm, STORY4)
    name = "deepseek-r1-disagg-hooks"
    assert sorted(objects) == sorted([f"ServiceAccount/{name}", f"Role/{name}", f"RoleBinding/{name}",
                                      f"ConfigMap/{name}", f"Job/{name}-check", f"Job/{name}-status"])
    assert objects[f"Role/{name}"]["rules"] == [
        {"apiGroups": ["fusioninfer.io"], "resources": ["inferenceservices"],
         "resourceNames": ["deepseek-r1-disagg"], "verbs": ["get"]},
        {"apiGroups": ["fusioninfer.io"], "resources": ["inferenceservices/status"],
         "resourceNames": ["deepseek-r1-disagg"], "verbs": ["patch"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
        {"apiGroups": ["leaderworkerset.x-k8s.io"], "resources": ["leaderworkersets"], "verbs": ["list"]},
        {"apiGroups": ["disaggregatedset.x-k8s.io"], "resources": ["disaggregatedsets"],
         "resourceNames": ["deepseek-r1-disagg"], "verbs": ["get"]},
        {"apiGroups": ["disaggregatedset.x-k8s.io"], "resources": ["disaggregatedsetrolescalers"], "verbs": ["list"]},
    ]
    events = {key: obj["metadata"]["annotations"]["helm.sh/hook"] for key, obj in objects.items()}
    assert events[f"Job/{name}-check"] == "pre-install,pre-upgrade"
    assert events[f"Job/{name}-status"] == "post-install,post-upgrade,post-rollback"
    # Their RBAC and code also pre-delete: uninstall removes what a failed phase left behind.
    assert events[f"ConfigMap/{name}"].split(",")[-1] == "pre-delete"
    for job in (f"Job/{name}-check", f"Job/{name}-status"):
        pod = objects[job]["spec"]["template"]["spec"]
        assert pod["serviceAccountName"] == name
        assert pod["containers"][0]["image"] == HOOK_IMAGE
        assert pod["securityContext"]["runAsNonRoot"] is True


def test_the_configmap_carries_this_repository_s_code(helm: Helm, tmp_path: Path) -> None:
    """The Jobs' modules and what they import of the package, each the package's own under the line that
    says it is a copy (`make generate` keeps them so; `make lint` fails on a stale one)."""
    objects = hook_objects(helm, STORY4)
    mount(objects, "Job/deepseek-r1-disagg-hooks-status", tmp_path)
    paths = shipped(ROOT / "fusion_helm", PROGRAMS["fusioninfer"])
    assert sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*.py")) == paths
    for path in paths:
        assert (tmp_path / path).read_text() == SHIPPED_HEADER.format(source=path) + (ROOT / path).read_text()


def test_the_hooks_need_nothing_but_the_standard_library(helm: Helm, tmp_path: Path) -> None:
    objects = hook_objects(helm, STORY4)
    for job in ("Job/deepseek-r1-disagg-hooks-check", "Job/deepseek-r1-disagg-hooks-status"):
        python, *command = mount(objects, job, tmp_path)
        assert python == "python" and command[:1] == ["-m"]
        # -S: no site-packages (no PyYAML, no kubernetes); -E: no PYTHONPATH; the working directory the Job's
        workdir = objects[job]["spec"]["template"]["spec"]["containers"][0]["workingDir"]
        result = subprocess.run([sys.executable, "-S", "-E", *command[:2], "--help"], capture_output=True, text=True,
                                cwd=tmp_path / Path(workdir).relative_to("/hooks"))
        assert result.returncode == 0, result.stderr


def test_post_renderers_leave_the_hooks_alone(helm: Helm) -> None:
    assert hook_objects(helm, STORY4, post_render=True) == hook_objects(helm, STORY4)


def test_the_hook_image_is_pinned_by_digest_and_can_be_replaced(helm: Helm) -> None:
    repository, digest = HOOK_IMAGE.split("@")
    assert repository.count(":") == 1 and len(digest) == len("sha256:") + 64
    mirror = "registry.example.com/python:3.12"
    objects = hook_objects(helm, STORY4, extra=("--set", f"hooks.image={mirror}"))
    assert {objects[job]["spec"]["template"]["spec"]["containers"][0]["image"]
            for job in objects if job.startswith("Job/")} == {mirror}


def test_hooks_can_be_turned_off(helm: Helm) -> None:
    out = helm.template(STORY4, hooks=True, extra=("--set", "hooks.enabled=false")).stdout
    assert "helm.sh/hook" not in out


def test_the_check_asks_for_the_resources_a_router_and_its_picker_need(helm: Helm, tmp_path: Path) -> None:
    story4 = rendered_spec(helm, STORY4)
    assert story4 == {key: value for key, value in yaml.safe_load(STORY4.read_text()).items()
                      if key in ("roles", "layout", "schedulingStrategy", "gangSchedule", "monitoring")}
    assert needs.gang_minimum(story4) is not None and needs.router_apis(story4) == []
    router = VALUES / "router-pd-qwen3-8b.yaml"
    values = yaml.safe_load(router.read_text())
    # A prefill/decode router runs llm-d-router, which starts without model CRDs: they are needed only
    # for the models it serves.
    values["roles"][-1] |= {"models": []}
    values["roles"][-1].pop("gateway", None)
    route_only = tmp_path / "route-only.yaml"
    route_only.write_text(yaml.safe_dump(values))
    assert needs.router_apis(rendered_spec(helm, route_only)) == [
        "inference.networking.k8s.io/v1/inferencepools", "gateway.networking.k8s.io/v1/httproutes"]
    values["roles"][-1] |= {"models": [{"name": "chat"}]}
    served = tmp_path / "served.yaml"
    served.write_text(yaml.safe_dump(values))
    assert needs.router_apis(rendered_spec(helm, served)) == [
        "inference.networking.k8s.io/v1/inferencepools", "llm-d.ai/v1alpha2/inferenceobjectives",
        "gateway.networking.k8s.io/v1/httproutes"]
    # A monolithic router runs llm-d-router too by default; the gie-v1.0 picker watches InferenceObjectives
    # even when it serves no model (it exits without them); on a v1alpha2 pool the v0.5 picker InferenceModels.
    values["roles"] = [role for role in values["roles"] if role["componentType"] != "prefiller"]
    values["roles"][0]["componentType"] = "worker"
    values["roles"][-1] |= {"models": []}
    monolithic = tmp_path / "monolithic.yaml"
    monolithic.write_text(yaml.safe_dump(values))
    assert needs.router_apis(rendered_spec(helm, monolithic)) == [
        "inference.networking.k8s.io/v1/inferencepools", "gateway.networking.k8s.io/v1/httproutes"]
    values["roles"][-1] |= {"endpointPicker": {"generation": "gie-v1.0"}}
    monolithic.write_text(yaml.safe_dump(values))
    assert needs.router_apis(rendered_spec(helm, monolithic)) == [
        "inference.networking.k8s.io/v1/inferencepools", "inference.networking.x-k8s.io/v1alpha2/inferenceobjectives",
        "gateway.networking.k8s.io/v1/httproutes"]
    values["roles"][-1] |= {"poolAPIVersion": "inference.networking.x-k8s.io/v1alpha2",
                            "gateway": {"gatewayClassName": "istio",
                                        "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]},
                            "endpointPicker": {"image": "registry.example/picker:v1"}}
    older = tmp_path / "older.yaml"
    older.write_text(yaml.safe_dump(values))
    assert needs.router_apis(rendered_spec(helm, older)) == [
        "inference.networking.x-k8s.io/v1alpha2/inferencepools",
        "inference.networking.x-k8s.io/v1alpha2/inferencemodels",
        "gateway.networking.k8s.io/v1/httproutes", "gateway.networking.k8s.io/v1/gateways"]


class FakeKube(Kube):
    """The API server as the status hook reads it, behind the hook's own client: the service, its pods, then
    each poll's LeaderWorkerSets."""

    def __init__(self, service: dict[str, Any], pods: list[dict[str, Any]],
                 polls: list[list[dict[str, Any]]]) -> None:
        self.service, self.pods, self.polls = service, pods, polls
        self.read: list[str] = []
        self.written: list[dict[str, Any]] = []

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        if method == "PATCH":
            self.written.append(body["status"])
            return None
        self.read.append(path)
        if "/leaderworkersets?" in path:
            return {"items": self.polls.pop(0)}
        return {"items": self.pods} if "/pods?" in path else self.service


def run_status_hook(monkeypatch: pytest.MonkeyPatch, kube: FakeKube, *args: str) -> None:
    monkeypatch.setattr(report, "Kube", lambda: kube)
    assert report.main(["--namespace", "llm", "--service", "svc", "--interval", "0", *args]) == 0


def test_the_status_hook_waits_for_a_rolling_role(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Layout role: the old groups keep the role Running while the LWS controller rolls it, so the hook
    polls until the rollout is done, writing Progressing each time."""
    obj = service(role("decode", replicas=2), layout="role")
    lws = render(obj)["LeaderWorkerSet/svc-decode"]

    def rolled(updated: int) -> list[dict[str, Any]]:
        return [{**lws, "status": {"updatedReplicas": updated}}]
    pods = [{"metadata": {"name": f"svc-decode-{g}", "labels": {
        "fusioninfer.io/service": "svc", "fusioninfer.io/role-name": "decode",
        "leaderworkerset.sigs.k8s.io/group-index": str(g)}}, "spec": {"nodeName": "n"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}} for g in (0, 1)]
    kube = FakeKube(obj, pods, [rolled(0), rolled(1), rolled(2)])
    run_status_hook(monkeypatch, kube, "--wait", "60")
    assert [next(c for c in written["conditions"] if c["type"] == "Progressing")["status"]
            for written in kube.written] == ["True", "True", "False"]
    assert capsys.readouterr().out.splitlines() == [
        "InferenceService llm/svc: Running; decode progressing: 0/2 groups updated",
        "InferenceService llm/svc: Running; decode progressing: 1/2 groups updated",
        "InferenceService llm/svc: Running"]
    assert kube.read[2] == ("/apis/leaderworkerset.x-k8s.io/v1/namespaces/llm/leaderworkersets"
                            "?labelSelector=fusioninfer.io/service%3Dsvc")


def test_the_status_hook_reads_no_leader_worker_set_in_the_replica_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    kube = FakeKube(service(role("decode", replicas=0)), [], [])
    run_status_hook(monkeypatch, kube)
    assert not any("leaderworkersets" in path for path in kube.read)
    assert [c["type"] for c in kube.written[0]["conditions"]] == ["Ready"]


class ClaimsKube(Kube):
    """The API server as the check reads claims: CLAIMS by name, every other one missing."""

    def __init__(self, claims: dict[str, dict[str, Any]]) -> None:
        self.claims = claims

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        namespace, _, name = path.removeprefix("/api/v1/namespaces/").partition("/persistentvolumeclaims/")
        if namespace == "llm" and name in self.claims:
            return self.claims[name]
        raise ApiError(method, path, 404, "not found")


def test_the_check_refuses_a_claim_the_weights_are_read_from_that_does_not_exist(
        capsys: pytest.CaptureFixture[str]) -> None:
    spec = {"model": {"source": "pvc://weights/qwen"}, "modelCache": {"claimName": "shared"},
            "roles": [{"name": "w", "componentType": "worker"}]}
    kube = ClaimsKube({"shared": {"spec": {"accessModes": ["ReadWriteOnce"]}}})
    assert check.claim_problems(kube, "llm", needs.weight_claims(spec)) == [
        "PersistentVolumeClaim weights does not exist in namespace llm, and the service's weights are read from it: "
        "its pods would wait for it forever; create it, or change modelCache.claimName or the pvc:// source "
        "(docs/models.md)"]
    assert "PersistentVolumeClaim shared is ReadWriteOnce" in capsys.readouterr().out
    assert check.claim_problems(ClaimsKube({"shared": {}, "weights": {}}), "llm", needs.weight_claims(spec)) == []


def test_the_hooks_may_read_the_claims_and_the_fetch_jobs_of_a_model_cache(helm: Helm) -> None:
    objects = hook_objects(helm, VALUES / "cached-multinode-deepseek-r1.yaml")
    rules = objects["Role/deepseek-r1-inference-hooks"]["rules"]
    assert {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["list"]} in rules
    assert not any("persistentvolumeclaims" in rule["resources"] for rule in rules)  # the service makes its own
    assert not any("secrets" in rule["resources"] for rule in rules)  # a missing Secret shows in the status
