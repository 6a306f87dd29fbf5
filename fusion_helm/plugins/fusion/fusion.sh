#!/bin/sh
# helm passes the namespace (-n, or the context's) as HELM_NAMESPACE; `fusion-helm status` reads it.
exec "${FUSION_HELM:-fusion-helm}" "$@"
