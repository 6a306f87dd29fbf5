"""FusionInfer for Helm: expand InferenceServices into LeaderWorkerSets, Ray bootstrap and PodGroups.

Public API:
    render(text) -> text           the post-render transform on a multi-document YAML stream
    parse_inference_service(obj)   validate one InferenceService object into its model
    expand(service) -> [objects]   the objects that serve it
    InvalidSpec                    the error for bad input (names document and field path)
"""

from fusion_helm.errors import InvalidSpec
from fusion_helm.expand import expand
from fusion_helm.model import InferenceService, parse_inference_service
from fusion_helm.pipeline import render

__all__ = ["InferenceService", "InvalidSpec", "expand", "parse_inference_service", "render"]
