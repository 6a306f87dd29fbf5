# A copy of fusion_helm/spec/__init__.py, made by `make generate` (fusion_helm.schemagen) for the chart; do not edit.
"""The stored spec, read as the API server stores it: every kind the project reads or writes (kinds), the
labels and annotations on what it makes (labels), and the rules decided from an InferenceService's spec
that more than one side must agree on (needs): the expansion decides by them on the validated model, the
hook Jobs on the spec the chart renders, and the chart's Go templates name their twins.

Standard library only, importing nothing of fusion_helm outside this subpackage (an import-linter
contract holds it): the hook Jobs and the shared Gateway's /v1/models run it in a stock Python image, and
the post-renderer's start-up path reads kinds and labels.
"""
