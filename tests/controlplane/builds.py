"""Where ci/cluster/build.sh put the control plane's binaries and the upstream manifests it copied."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ci.tools import ROOT, cache, read_env

BUILD = ROOT / "ci" / "cluster" / "build.sh"
VERSIONS = read_env(ROOT / "ci" / "cluster" / "versions.env")
CACHE = cache() / "cluster"
SHARED_CRDS = Path(os.environ.get("FUSION_SHARED_CRDS", ROOT.parent / "shared" / "crds"))

# binary → the version it is built at
COMPONENTS = {
    "etcd": "ETCD", "kube-apiserver": "KUBERNETES", "kube-controller-manager": "KUBERNETES",
    "kube-scheduler": "KUBERNETES", "kubectl": "KUBERNETES", "kwok": "KWOK", "lws-controller": "LWS",
    "vc-scheduler": "VOLCANO", "bbr": "GIE_BBR", "vc-controller-manager": "VOLCANO", "registry": "REGISTRY",
    "llm-d-inference-sim": "INFERENCE_SIM", "keda-operator": "KEDA", "keda-adapter": "KEDA",
    "prometheus": "PROMETHEUS",
}


class MissingBuild(RuntimeError):
    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} is missing: build the test control plane with `make cluster-build` "
                         f"({BUILD.relative_to(ROOT)}; needs Go and the Go module proxy)")


class MissingCRDs(RuntimeError):
    def __init__(self) -> None:
        super().__init__(f"the upstream CRDs are not at {SHARED_CRDS}: set FUSION_SHARED_CRDS to the shared/crds "
                         "directory (a clone beside shared/ finds it by itself)")


def shared_crds() -> Path:
    """The directory of upstream CRDs (shared/crds)."""
    if not SHARED_CRDS.is_dir():
        raise MissingCRDs()
    return SHARED_CRDS


def shared_crd(filename: str) -> Path:
    """An upstream CRD from shared/crds."""
    path = shared_crds() / filename
    if not path.is_file():
        raise MissingCRDs()
    return path


def binary(name: str) -> Path:
    path = CACHE / "bin" / f"{name}-{VERSIONS[COMPONENTS[name] + '_VERSION']}"
    if not path.is_file():
        raise MissingBuild(path)
    return path


def shared(component: str, filename: str) -> Path:
    """A manifest build.sh copied out of COMPONENT's source (kwok stages, LWS webhooks, Volcano CRDs)."""
    path = shared_dir(component) / filename
    if not path.is_file():
        raise MissingBuild(path)
    return path


def shared_dir(component: str) -> Path:
    """What build.sh copied out of COMPONENT's source: ``share/<component>-<its version>``."""
    path = CACHE / "share" / f"{component}-{VERSIONS[component.upper().replace('-', '_') + '_VERSION']}"
    if not path.is_dir():
        raise MissingBuild(path)
    return path


def picker(image: str) -> Path:
    """The endpoint picker build.sh built for IMAGE, named as the image: <image name>-<tag>."""
    name, _, tag = image.rpartition("/")[2].partition(":")
    path = CACHE / "bin" / f"{name}-{tag}"
    if not path.is_file():
        raise MissingBuild(path)
    return path


def picker_probe() -> Path:
    """The client that asks a picker what a gateway would (ci/cluster/pickers/picker-probe), named by a
    hash of its source as build.sh names it."""
    pickers = ROOT / "ci" / "cluster" / "pickers"
    source = b"".join(path.read_bytes() for path in sorted((pickers / "picker-probe").glob("*.go"))) + \
        (pickers / "go.sum").read_bytes()
    path = CACHE / "bin" / f"picker-probe-{hashlib.sha256(source).hexdigest()[:12]}"
    if not path.is_file():
        raise MissingBuild(path)
    return path
