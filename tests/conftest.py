from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest

from fusion_helm.schemagen import upstream_crds as read_upstream_crds
from tests.controlplane import components, kubelet, set_gpu_nodes, start
from tests.controlplane.builds import COMPONENTS, SHARED_CRDS, binary, shared_crds
from tests.controlplane.cluster import GPU_NODES, Cluster, install_crd_chart
from tests.controlplane.hook_kubelet import HookKubelet
from tests.controlplane.network_policies import Enforcer
from tests.controlplane.serving import ServingKubelet
from tests.goyaml import GoYAML, built
from tests.helm import CACHE, ROOT, Helm, make_helm
from tests.registry import Registry
from tests.sandbox import LoopbackGuard, inside
from tests.schemas import Validators
from tests.support import Renders

WHEELS = CACHE / "wheels"
"""The wheel's dependencies, downloaded by `make test-setup`."""
CLUSTER_FIXTURES = frozenset({"cluster", "control_plane_build", "oci_registry", "workspace"})
"""What only `make cluster-build` provides (the control plane, the registry, the pipeline tools a
workspace holds): a test that uses one (itself or through another fixture) is a cluster test."""


def pytest_configure(config: pytest.Config) -> None:
    if not inside():
        raise pytest.UsageError(
            "the suite runs in a sandbox of its own (tests/sandbox.py: loopback alone, and nothing it starts "
            "outlives it): `make test`, `make test-fast`, or `.venv/bin/python -m tests.sandbox .venv/bin/pytest ...`")


@pytest.fixture(scope="session")
def network_guard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackGuard]:
    """Fails the suite when anything it started tried to reach an address outside loopback: checked
    after each test, and once more after the session's fixtures (the cluster) have stopped."""
    guard = LoopbackGuard(tmp_path_factory.getbasetemp())
    yield guard
    guard.check()


@pytest.fixture(scope="session", autouse=True)
def mount_points() -> Iterator[None]:
    """The mount points the runners of pods made (tests/controlplane/kubelet.py) removed once the session is
    over: set up first, so torn down after the fixtures that run pods."""
    yield
    kubelet.remove_mount_points()


@pytest.fixture(autouse=True)
def loopback_only(network_guard: LoopbackGuard) -> Iterator[None]:
    yield
    network_guard.check()


HELM_IS_THE_SUBJECT = frozenset({"test_cluster_lifecycle", "test_cluster_release", "test_cluster_take_over",
                                 "test_cluster_notes", "test_cluster_day_two", "test_cluster_layouts"})
"""The cluster test modules about what helm itself does — install, upgrade (helm 4 applies server-side, helm 3
merges), rollback, hooks, NOTES, taking objects over — which run with helm 3 and helm 4 both. Every other
cluster test takes the ``helm`` fixture to install a service it then tests: it runs once, with one of them,
the two alternating test by test, so both install for real throughout the suite at half the time."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    once: list[pytest.Item] = []
    for item in items:
        if CLUSTER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.cluster)
            if _other_helm(item):
                once.append(item)
        if "dist" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.source_tree)  # `make dist`
    if once:
        config.hook.pytest_deselected(items=once)
        items[:] = [item for item in items if item not in once]


def _other_helm(item: pytest.Item) -> bool:
    """ITEM is the run of a cluster test with the helm it does not need (HELM_IS_THE_SUBJECT)."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or "helm" not in callspec.params or item.module is None:
        return False
    if item.module.__name__.rpartition(".")[2] in HELM_IS_THE_SUBJECT:
        return False
    if any(mark.args[0] == "helm" and len(mark.args[1]) == 1 for mark in item.iter_markers("parametrize")):
        return False  # one helm named (ONE_HELM): that one runs, whichever the hash would choose
    test = item.nodeid.replace(f"helm{callspec.params['helm']}", "")
    chosen = 3 + int(hashlib.sha256(test.encode()).hexdigest(), 16) % 2
    return bool(callspec.params["helm"] != chosen)


@pytest.fixture
def recorder(tmp_path: Path) -> Path:
    """`vllm` and `python3` that print the argv they are started with (NUL-separated): what a pod's
    bootstrap script would run, word by word (tests/expand/test_bootstrap.py, tests/real_engines/test_engines.py)."""
    for name in ("vllm", "python3"):
        (tmp_path / name).write_text(f'#!/bin/sh\nprintf "%s\\0" {name} "$@"\n')
        (tmp_path / name).chmod(0o755)
    return tmp_path


@pytest.fixture(scope="session", params=[3, 4], ids=["helm3", "helm4"])
def helm(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Helm:
    """Each test that takes it runs once with helm 3.17 and once with helm 4.1."""
    return make_helm(request.param, tmp_path_factory.mktemp(f"helm{request.param}-home"))


@pytest.fixture(scope="session")
def helm4(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    return make_helm(4, tmp_path_factory.mktemp("helm4-only-home"))


@pytest.fixture(scope="session")
def renders(helm4: Helm) -> Renders:
    """The chart post-rendered by helm 4, each values file and settings once for the session: the input of
    tests about what is done with helm's output, not about helm (those take `helm`)."""
    return Renders(helm4)


@pytest.fixture(scope="session")
def go_yaml() -> GoYAML:
    """Go's sigs.k8s.io/yaml, as Helm and kubectl read YAML."""
    return GoYAML(built())


@pytest.fixture(scope="session")
def upstream_crds() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) → the upstream CRD's openAPIV3Schema for that version."""
    if not SHARED_CRDS.is_dir():
        raise RuntimeError(f"upstream CRD schemas not found at {SHARED_CRDS} "
                           "(set FUSION_SHARED_CRDS to the shared/crds directory)")
    schemas = {}
    for crd in read_upstream_crds(SHARED_CRDS):
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            schemas[(f"{group}/{version['name']}", kind)] = version["schema"]["openAPIV3Schema"]
    return schemas


@pytest.fixture(scope="session")
def validators(upstream_crds: dict[tuple[str, str], dict[str, Any]]) -> Validators:
    """(apiVersion, kind) → a strict validator of that CRD version's schema, ours included."""
    return Validators(upstream_crds)


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """The local control plane with the upstream CRDs, ten 8-GPU kwok nodes and the InferenceService CRD
    (its chart installed as a cluster admin does), for the session.

    Fails (not skips) when the control plane is not built: `make cluster-build` builds it.
    """
    control_plane = start(tmp_path_factory.mktemp("cluster"))
    try:
        set_gpu_nodes(control_plane, GPU_NODES)
        config = kubernetes.client.Configuration()
        kubernetes.config.load_kube_config(str(control_plane.kubeconfig), client_configuration=config)
        with kubernetes.client.ApiClient(config) as api:
            cluster = Cluster(control_plane, api)
            install_crd_chart(cluster, make_helm(4, tmp_path_factory.mktemp("crd-helm-home")))
            yield cluster
    finally:
        control_plane.stop()


@pytest.fixture(scope="session")
def keda(cluster: Cluster) -> Cluster:
    """The control plane with KEDA's operator and metrics server (the external metrics API), started when
    a test first asks; stopped with the control plane."""
    components.keda(cluster.control_plane)
    return cluster


@pytest.fixture(scope="module")
def network_policies(cluster: Cluster) -> Iterator[Enforcer]:
    """SIG Network's kube-network-policies enforcing the NetworkPolicies on the serving pods' network
    (tests/controlplane/network_policies.py), for the tests of the module that asks: started then, stopped
    after them (before the control plane), so that no other test's connections depend on the order tests run in."""
    enforcer = Enforcer(cluster)
    enforcer.start()
    try:
        yield enforcer
    finally:
        enforcer.stop()


@pytest.fixture(scope="session")
def serving_kubelet(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServingKubelet]:
    """Runs, for real, the serving pods annotated tests.controlplane.serving.SERVING: the simulator as each engine, the
    rendered sidecars, each pod in a network of its own."""
    runner = ServingKubelet(cluster, tmp_path_factory.mktemp("serving-pods"))
    runner.start()
    try:
        yield runner
    finally:
        runner.stop()


@pytest.fixture(scope="session")
def control_plane_build() -> None:
    """The control plane's binaries and manifests are built (for a test that starts a control plane of
    its own); fails, naming `make cluster-build`, where they are not."""
    for name in COMPONENTS:
        binary(name)
    shared_crds()


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`make dist`: the wheel, the sdist and the chart packages."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(["make", "--no-print-directory", "-s", "dist", f"DIST={out}"], cwd=ROOT, check=True,
                   capture_output=True)
    return out


@pytest.fixture(scope="session")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the wheel (and only what it depends on) installed: its bin directory."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    [wheel] = dist.glob("*.whl")
    # its dependencies from the wheels `make test-setup` downloaded: no index is in the sandbox's reach
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-index", "--find-links", str(WHEELS),
                    str(wheel)], check=True)
    return venv / "bin"


@pytest.fixture(scope="session")
def oci_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A CNCF distribution registry on localhost, serving plain HTTP: its host:port."""
    with Registry(tmp_path_factory.mktemp("registry")) as address:
        yield address


@pytest.fixture(scope="session")
def hook_kubelet(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HookKubelet]:
    """Runs, for real, the hook Jobs of releases installed with tests.controlplane.hook_kubelet.REAL_HOOKS."""
    runner = HookKubelet(cluster, tmp_path_factory.mktemp("hook-pods"))
    runner.start()
    try:
        yield runner
    finally:
        runner.stop()
