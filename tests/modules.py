"""Files the suite reads out of upstream Go modules, at the versions ci/cluster/versions.env pins: Istio's
CRDs (charts/fusioninfer-bbr with provider istio) and cert-manager's Certificate CRD. `make test-setup`
fetches them into Go's module cache (`python -m tests.modules`), since inside the suite's sandbox the
module proxy is out of reach."""

from __future__ import annotations

from fusion_helm.schemagen import MODULE_CRDS, module_file
from tests.controlplane.builds import VERSIONS

FILES = {**MODULE_CRDS, "ISTIO_API": ("istio.io/api", "kubernetes/customresourcedefinitions.gen.yaml")}
"""The key of a module's version in versions.env → (the module, the file in it): the CRDs schemagen reads
out of Go modules (cert-manager's), and Istio's."""


def read(key: str) -> bytes:
    """The file FILES names under KEY, from Go's module cache (fetched by `make test-setup`)."""
    module, member = FILES[key]
    return module_file(module, VERSIONS[f"{key}_VERSION"], member)


if __name__ == "__main__":
    for key in FILES:
        read(key)
