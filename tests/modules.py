"""Files the suite reads out of upstream Go modules, at the versions ci/cluster/versions.env pins: Istio's
CRDs (charts/fusioninfer-bbr with provider istio) and cert-manager's Certificate CRD. `make test-setup`
fetches them into Go's module cache (`python -m tests.modules`), since inside the suite's sandbox the
module proxy is out of reach."""

from __future__ import annotations

from fusion_helm.schemagen import module_file
from tests.controlplane.builds import VERSIONS

FILES = {
    "istio-crds": ("istio.io/api", "ISTIO_API", "kubernetes/customresourcedefinitions.gen.yaml"),
    "certificate-crd": ("github.com/cert-manager/cert-manager", "CERT_MANAGER",
                        "deploy/crds/cert-manager.io_certificates.yaml"),
}
"""Name → (module, the key of its version in versions.env, the file in it)."""


def read(name: str) -> bytes:
    """The file FILES names NAME, from Go's module cache (fetched by `make test-setup`)."""
    module, version, member = FILES[name]
    return module_file(module, VERSIONS[f"{version}_VERSION"], member)


if __name__ == "__main__":
    for file in FILES:
        read(file)
