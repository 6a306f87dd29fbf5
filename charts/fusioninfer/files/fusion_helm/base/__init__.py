# A copy of fusion_helm/base/__init__.py, made by `make generate` (ci/chart_copies.py) for the chart; do not edit.
"""The standard-library base every side shares: the post-renderer, the programs the pods run
(fusion_helm.programs, in a stock Python image) and, by their Go twins, the chart's templates.

Every kind the project reads or writes (kinds), the labels and annotations on what it makes (labels), and
the rules decided from an InferenceService's spec that more than one side must agree on (needs): the
expansion decides by them on the validated model, the hook Jobs on the spec the chart renders. Standard
library only, importing nothing of fusion_helm outside this subpackage (an import-linter contract holds it);
the post-renderer's start-up path reads kinds and labels.
"""
