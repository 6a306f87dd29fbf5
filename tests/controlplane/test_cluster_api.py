"""The Python API (fusion_helm.release, on pyhelm3) with helm 3 and 4: install, scale a role, uninstall."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from fusion_helm.release import InferenceServices, ReleaseError, post_renderer_for
from tests.controlplane.cluster import LWS, Cluster, eventually, expected_pods, pods_by_lws, ready_pods, scaled
from tests.helm import CHART, VALUES, Helm

STORY2 = VALUES / "story2-pd-qwen3-8b.yaml"
SERVICE = "qwen-inference-service"


@pytest.fixture
def helm_env(helm: Helm, monkeypatch: pytest.MonkeyPatch) -> Helm:
    """pyhelm3 runs helm with this process's environment: give it this helm's homes and PATH."""
    for key, value in helm.env().items():
        monkeypatch.setenv(key, value)
    return helm


@pytest.mark.cluster
def test_install_scale_uninstall(cluster: Cluster, helm_env: Helm, tmp_path: Path) -> None:
    helm = helm_env
    namespace = f"api-helm{helm.major}"
    services = InferenceServices(CHART, helm=str(helm.path), kubeconfig=cluster.kubeconfig)
    asyncio.run(services.install("api", yaml.safe_load(STORY2.read_text()), namespace=namespace))
    before = pods_by_lws(ready_pods(cluster, namespace, expected_pods(STORY2)))
    assert set(before) == {f"{SERVICE}-prefill-{i}" for i in range(2)} | {f"{SERVICE}-decode-{i}" for i in range(4)}

    asyncio.run(services.scale_role("api", "decode", 2, namespace=namespace))
    wanted = {f"{SERVICE}-prefill-{i}" for i in range(2)} | {f"{SERVICE}-decode-{i}" for i in range(2)}
    two_decoders = scaled(STORY2, {"decode": 2}, tmp_path / "v.yaml")
    after = pods_by_lws(ready_pods(cluster, namespace, expected_pods(two_decoders), owners=wanted))
    assert after == {lws: before[lws] for lws in wanted}

    with pytest.raises(ReleaseError, match="release api has no role generate"):
        asyncio.run(services.scale_role("api", "generate", 1, namespace=namespace))

    asyncio.run(services.uninstall("api", namespace=namespace))
    eventually("nothing left", lambda: not cluster.leftovers(namespace))
    assert cluster.custom(LWS, namespace) == []


def test_helm4_without_the_plugin_is_one_clear_error(helm: Helm, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    if helm.major == 3:
        assert Path(post_renderer_for(str(helm.path))).name == "fusion-postrender"
        return
    monkeypatch.setenv("HELM_DATA_HOME", str(tmp_path))  # a helm 4 with no plugins
    with pytest.raises(ReleaseError, match="post-renders only through plugins and fusion-postrender is not installed"):
        post_renderer_for(str(helm.path))
