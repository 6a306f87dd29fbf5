"""FusionInfer for Helm: expand InferenceServices into LeaderWorkerSets, Ray bootstrap and PodGroups.

Public API:
    render(text) -> text           the post-render transform on a multi-document YAML stream
    parse_inference_service(obj)   validate one InferenceService object into its model
    InvalidSpec                    the error for bad input (names document and field path)
    fusion_helm.expand.expand(service) -> [objects]   the objects that serve it

Each is imported when first asked for: the post-renderer loads only what a stream needs.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fusion_helm.errors import InvalidSpec
    from fusion_helm.model import InferenceService, parse_inference_service
    from fusion_helm.pipeline import render

_HOMES = {"InvalidSpec": "fusion_helm.errors", "InferenceService": "fusion_helm.model",
          "parse_inference_service": "fusion_helm.model", "render": "fusion_helm.pipeline"}


def __getattr__(name: str) -> "Any":
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'fusion_helm' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(home), name)


__all__ = ["InferenceService", "InvalidSpec", "parse_inference_service", "render"]
