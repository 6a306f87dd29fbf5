"""What the chart's hook Jobs run, and what the rest of the package shares with them: the API client
(kube), the prerequisite check (check), the status writer (report) and the status it writes (status), the
labels and kinds the expansion writes, and the rules that decide from a spec what a service needs of its
cluster (needs). Also the shared Gateway's one /v1/models (gateway_models), which charts/fusioninfer-bbr
runs the same way, from the five files of this subpackage it imports.

Standard library only, importing nothing of fusion_helm outside this subpackage (an import-linter contract
holds it): Helm 3 never post-renders hooks, so the Jobs run in a stock Python image, with this subpackage
mounted from the chart's ConfigMap (templates/hooks.yaml), and run as ``python -m fusion_helm.hooks.check``
and ``python -m fusion_helm.hooks.report``. Helm reads files only inside a chart, so this subpackage lives
there (charts/fusioninfer/files/fusion_helm/hooks), and fusion_helm/hooks is a link to it: one copy, which
the package and the chart both ship. docs/lifecycle.md says what each Job checks and writes.
"""
