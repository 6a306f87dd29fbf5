"""Data `make generate` derives (fusion_helm.schemagen), as Python literals: a module's bytecode is
loaded faster than any data file is parsed, and needs no parser (the post-renderer imports no JSON
library). Never edited by hand; `make lint` fails when a module is stale.

    api.py        the InferenceService schema source, and its spec's draft-07 translation
    upstream.py   the upstream CRDs' structural schemas, in pieces built only when needed
"""
