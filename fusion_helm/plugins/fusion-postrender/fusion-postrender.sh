#!/bin/sh
# Runs the fusion-postrender console script of the installed fusioninfer-helm package.
exec "${FUSION_POSTRENDER:-fusion-postrender}" "$@"
