# A copy of fusion_helm/programs/__init__.py, made by `make generate` (ci/chart_copies.py) for the chart; do not edit.
"""The programs the pods run, by image.

In a stock Python image, the standard library and fusion_helm.base alone (an import-linter contract holds
it): the charts' hook Jobs — the prerequisite check (check) and the status writer (report), with the status
they write (status), their API client (kube), who owns a model name on a shared Gateway (model_owners) and
the names a service's route will match, read from its spec (routed_names) — and the shared Gateway's one
/v1/models (gateway_models).
Helm reads files only inside a chart, and Helm 3 never post-renders hooks: each chart carries a copy of the
modules its programs import, written by `make generate` (ci/chart_copies.py; `make lint` fails on a stale
copy), in files/fusion_helm, and mounts them from a ConfigMap (charts/fusioninfer/templates/hooks.yaml:
``python -m fusion_helm.programs.check`` and ``python -m fusion_helm.programs.report``;
charts/fusioninfer-bbr/templates/models.yaml). docs/lifecycle.md says what each Job checks and writes.

In the serving image: the fetch Jobs' program (fetch), which the expansion puts in a ConfigMap of its own.
Beside the standard library it imports the client of the source it fetches, which that image has:
huggingface_hub for hf://, boto3 (and botocore) for s3:// (the only third-party imports of this package, a
contract holds that too).
"""
