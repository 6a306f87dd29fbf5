#!/usr/bin/env bash
# Build the local test control plane from upstream Go modules, into a cache outside the clone:
#   $FUSION_CACHE/cluster/bin/<component>-<version>
# (`make cluster-build` runs it, FUSION_CACHE set; `build.sh COMPONENT...` builds some.)
# k8s.io/kubernetes (and modules that import it) cannot be `go install`ed: each gets a wrapper go.mod
# that requires it and replaces every k8s.io staging module with the matching v0.Y.Z, generated from
# the upstream go.mod itself (the pattern kubernetes-sigs/scheduler-plugins uses).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
. "$here/versions.env"
cache="${FUSION_CACHE:?is not set: run this through make (make cluster-build), or set FUSION_CACHE to the cache directory}/cluster"
vendor="${FUSION_SHARED_VENDOR:-$here/../../../shared/vendor}"
bin="$cache/bin"
mkdir -p "$bin" "$cache/src"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
# The compiler collecting its garbage less often: a cold build about 15% faster (helmfile alone: 4 min 18 s
# to 3 min 40 s on 2 cores), for memory a test machine has (a few GB at the link of the largest).
export GOGC="${GOGC:-400}"
command -v go >/dev/null || { echo "build.sh: the test control plane is built with Go (>= 1.26) and the Go module proxy; no go on PATH" >&2; exit 1; }

staging_minor() { echo "v0.${1#v1.}"; }   # v1.35.3 -> v0.35.3

# wrapper DIR MODULE VERSION [LOCAL=VERSION ...]: a module in DIR that requires MODULE@VERSION and
# keeps its replace directives: `=> ./staging/src/k8s.io/x` becomes k8s.io/x at the release's v0.Y.Z,
# other local replaces take the LOCAL=VERSION given (LOCAL=- drops one), pinned replaces (grpc, otel, ...) are kept as is,
# of every version or of the one they name.
wrapper() {
  local dir=$1 module=$2 version=$3
  shift 3
  mkdir -p "$dir"
  local gomod
  gomod=$(cd "$dir" && go mod download -json "$module@$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    echo "module fusioninfer.test/$(basename "$dir")"
    echo "go 1.26"
    echo "require $module $version"
    sed -n '/^replace (/,/^)/p; /^replace [^(]/p' "$gomod" | sed 's/^replace //' |
      awk -v staging="$(staging_minor "$KUBERNETES_VERSION")" -v locals="$*" '
        BEGIN { n = split(locals, pairs, " "); for (i = 1; i <= n; i++) { split(pairs[i], kv, "="); local[kv[1]] = kv[2] } }
        $3 == "=>" && NF >= 5 { print "replace " $1 " " $2 " => " $4 " " $5; next }   # one version replaced
        $2 != "=>" { next }
        $3 ~ /^\.\/staging\/src\/k8s\.io\// { print "replace " $1 " => " $1 " " staging; next }
        $3 ~ /^\./ { if (!($1 in local)) { print "wrapper: no version for local replace " $1 > "/dev/stderr"; exit 1 }
                     if (local[$1] != "-") print "replace " $1 " => " $1 " " local[$1]; next }
        NF >= 4 { print "replace " $1 " => " $3 " " $4 }'
  } > "$dir/go.mod.tmp"
  mv "$dir/go.mod.tmp" "$dir/go.mod"
}

build() {  # build DIR OUTPUT PACKAGE [LDFLAGS]
  local dir=$1 out=$2 package=$3 ldflags=${4:-}
  [ -x "$bin/$out" ] && return 0
  echo "building $out" >&2
  (cd "$dir" && go build -trimpath -ldflags "-s -w $ldflags" -o "$bin/$out.tmp" "$package")
  mv "$bin/$out.tmp" "$bin/$out"
}

kube_ldflags() {
  local v=$KUBERNETES_VERSION minor=${KUBERNETES_VERSION#v1.}
  minor=${minor%%.*}
  echo "-X k8s.io/component-base/version.gitVersion=$v -X k8s.io/component-base/version.gitMajor=1" \
       "-X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
}

# share COMPONENT-VERSION DIR FILE...: copy the manifests the control plane reads at start-up (webhook
# configurations, CRDs, kwok stages) out of a module's or a release's source, so starting needs neither.
share() {
  local into="$cache/share/$1" dir=$2
  shift 2
  mkdir -p "$into"
  local pattern
  for pattern in "$@"; do
    # shellcheck disable=SC2086 # a pattern may be a glob
    cp $dir/$pattern "$into/"
  done
  chmod -R u+w "$into"
}

module_dir() {  # module_dir MODULE@VERSION: where the module cache holds it
  (cd "$cache/src" && go mod download -json "$1" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
}

# vendored NAME SHA256: the release source ../shared/vendor/NAME.tar.gz (a module the proxy refuses),
# checked against SHA256 and unpacked into $cache/src/vendor/NAME; prints that directory.
vendored() {
  local name=$1 sum=$2 dir="$cache/src/vendor/$1" tarball="$vendor/$1.tar.gz"
  if [ ! -f "$dir/go.mod" ]; then
    [ -f "$tarball" ] || { echo "build.sh: $tarball is missing (FUSION_SHARED_VENDOR names the vendor directory)" >&2; exit 1; }
    echo "$sum  $tarball" | sha256sum --check --quiet - >&2 ||
      { echo "build.sh: $tarball does not have the sha256 ci/cluster/versions.env pins ($sum)" >&2; exit 1; }
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    tar -xzf "$tarball" -C "$dir.tmp" --strip-components=1 --no-same-owner
    chmod -R u+w "$dir.tmp"
    mv "$dir.tmp" "$dir"
  fi
  echo "$dir"
}

# gie_source VERSION: the wrapper module of the Inference Extension at VERSION, one per release whatever
# is built from it (its epp, its bbr); prints its directory.
gie_source() {
  local src="$cache/src/gie-$1"
  [ -f "$src/go.mod" ] || wrapper "$src" sigs.k8s.io/gateway-api-inference-extension "$1" >&2
  echo "$src"
}

components=${*:-etcd kubernetes kwok lws volcano pickers serving pipelines registry elastic netpol}
for component in $components; do
  case $component in
    etcd)
      src="$cache/src/etcd-$ETCD_VERSION"
      [ -f "$src/go.mod" ] || wrapper "$src" go.etcd.io/etcd/server/v3 "$ETCD_VERSION" \
        "go.etcd.io/etcd/api/v3=$ETCD_VERSION" "go.etcd.io/etcd/client/pkg/v3=$ETCD_VERSION" \
        "go.etcd.io/etcd/client/v3=$ETCD_VERSION" "go.etcd.io/etcd/pkg/v3=$ETCD_VERSION" \
        go.etcd.io/etcd=- go.etcd.io/tests/v3=-
      build "$src" "etcd-$ETCD_VERSION" go.etcd.io/etcd/server/v3 ;;
    kubernetes)
      src="$cache/src/kubernetes-$KUBERNETES_VERSION"
      [ -f "$src/go.mod" ] || wrapper "$src" k8s.io/kubernetes "$KUBERNETES_VERSION"
      for cmd in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
        build "$src" "$cmd-$KUBERNETES_VERSION" "k8s.io/kubernetes/cmd/$cmd" "$(kube_ldflags)"
      done ;;
    kwok)
      src="$cache/src/kwok-$KWOK_VERSION"
      [ -f "$src/go.mod" ] || wrapper "$src" sigs.k8s.io/kwok "$KWOK_VERSION"
      build "$src" "kwok-$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok
      share "kwok-$KWOK_VERSION" "$(module_dir "sigs.k8s.io/kwok@$KWOK_VERSION")" kustomize/stage/node/fast/node-initialize.yaml \
        kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
        kustomize/stage/pod/fast/pod-ready.yaml kustomize/stage/pod/fast/pod-complete.yaml \
        kustomize/stage/pod/fast/pod-delete.yaml kustomize/crd/bases/kwok.x-k8s.io_logs.yaml ;;
    lws)
      # The main module of its release source: its own go.mod and go.sum, dependencies from the proxy.
      src=$(vendored "lws-$LWS_VERSION" "$LWS_SHA256")
      build "$src" "lws-controller-$LWS_VERSION" ./cmd
      share "lws-$LWS_VERSION" "$src" config/webhook/manifests.yaml config/webhook/mutating-patch.yaml \
        config/webhook/validating-patch.yaml ;;
    volcano)
      # The main module of its release source, its volcano.sh/apis the tree's own staging copy.
      src=$(vendored "volcano-$VOLCANO_VERSION" "$VOLCANO_SHA256")
      build "$src" "vc-scheduler-$VOLCANO_VERSION" ./cmd/scheduler
      build "$src" "vc-controller-manager-$VOLCANO_VERSION" ./cmd/controller-manager
      share "volcano-$VOLCANO_VERSION" "$src" 'config/crd/volcano/bases/*.yaml' ;;
    pickers)
      # The endpoint pickers the chart pins, named as their images: <image name>-<tag>.
      for version in "$GIE_EPP_V1_VERSION" "$GIE_EPP_V05_VERSION" "$GIE_EPP_V15_VERSION"; do
        src=$(gie_source "$version")
        build "$src" "epp-$version" sigs.k8s.io/gateway-api-inference-extension/cmd/epp
      done
      # The body-based router a shared Gateway runs before the pickers (charts/fusioninfer-bbr), from the
      # same wrapper as that release's picker.
      build "$(gie_source "$GIE_BBR_VERSION")" "bbr-$GIE_BBR_VERSION" sigs.k8s.io/gateway-api-inference-extension/cmd/bbr
      # llm-d-router's picker, from its release source; its CRDs (the llm-d.ai model objects it prefers).
      src=$(vendored "llm-d-router-$LLMD_ROUTER_VERSION" "$LLMD_ROUTER_SHA256")
      build "$src" "llm-d-router-endpoint-picker-$LLMD_ROUTER_VERSION" ./cmd/epp
      share "llmd-router-$LLMD_ROUTER_VERSION" "$src" 'config/crd/bases/llm-d.ai_*.yaml'
      # The probe the tests ask pickers with: a module of ours, go.sum committed.
      (export GOFLAGS=-mod=readonly
       # The probe is ours and changes with the tests: named by a hash of its source, so a cache never
       # serves an older one (tests/controlplane/builds.py computes the same name).
       probe=$(cat "$here"/pickers/picker-probe/*.go "$here/pickers/go.sum" | sha256sum | cut -c1-12)
       build "$here/pickers" "picker-probe-$probe" ./picker-probe) ;;
    serving)
      # What serving pods run in the serving tests: llm-d-router's prefill/decode sidecar, and llm-d's
      # vLLM simulator as the engine, built against that same llm-d-router release source.
      router=$(vendored "llm-d-router-$LLMD_ROUTER_VERSION" "$LLMD_ROUTER_SHA256")
      build "$router" "llm-d-router-disagg-sidecar-$LLMD_ROUTER_VERSION" ./cmd/pd-sidecar
      src=$(vendored "llm-d-inference-sim-$INFERENCE_SIM_VERSION" "$INFERENCE_SIM_SHA256")
      (cd "$src" && go mod edit -replace "github.com/llm-d/llm-d-router=$router")
      build "$src" "llm-d-inference-sim-$INFERENCE_SIM_VERSION" ./cmd/llm-d-inference-sim ;;
    pipelines)
      src="$cache/src/kustomize-$KUSTOMIZE_VERSION"
      [ -f "$src/go.mod" ] || wrapper "$src" sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION"
      build "$src" "kustomize-$KUSTOMIZE_VERSION" sigs.k8s.io/kustomize/kustomize/v5
      src="$cache/src/helmfile-$HELMFILE_VERSION"
      [ -f "$src/go.mod" ] || wrapper "$src" github.com/helmfile/helmfile "$HELMFILE_VERSION"
      build "$src" "helmfile-$HELMFILE_VERSION" github.com/helmfile/helmfile \
        "-X go.szostok.io/version.version=$HELMFILE_VERSION"
      src="$cache/src/helm-diff-$HELM_DIFF_VERSION"
      [ -f "$src/go.mod" ] || wrapper "$src" github.com/databus23/helm-diff/v3 "$HELM_DIFF_VERSION"
      build "$src" "helm-diff-$HELM_DIFF_VERSION" github.com/databus23/helm-diff/v3
      share "helm-diff-$HELM_DIFF_VERSION" "$(module_dir "github.com/databus23/helm-diff/v3@$HELM_DIFF_VERSION")" plugin.yaml
      src="$cache/src/kpt-$KPT_VERSION"
      [ -f "$src/go.mod" ] || wrapper "$src" github.com/GoogleContainerTools/kpt "$KPT_VERSION"
      build "$src" "kpt-$KPT_VERSION" github.com/GoogleContainerTools/kpt
      src="$cache/src/kubeconform-$KUBECONFORM_VERSION"
      [ -f "$src/go.mod" ] || wrapper "$src" github.com/yannh/kubeconform "$KUBECONFORM_VERSION"
      build "$src" "kubeconform-$KUBECONFORM_VERSION" github.com/yannh/kubeconform/cmd/kubeconform
      share "kubeconform-$KUBECONFORM_VERSION" "$(module_dir "github.com/yannh/kubeconform@$KUBECONFORM_VERSION")" \
        scripts/openapi2jsonschema.py ;;
    elastic)
      src="$cache/src/keda-$KEDA_VERSION"
      [ -f "$src/go.mod" ] || wrapper "$src" github.com/kedacore/keda/v2 "$KEDA_VERSION"
      build "$src" "keda-operator-$KEDA_VERSION" github.com/kedacore/keda/v2/cmd/operator
      build "$src" "keda-adapter-$KEDA_VERSION" github.com/kedacore/keda/v2/cmd/adapter
      # The operator watches these too and will not start without them (../shared/crds has the rest).
      share "keda-$KEDA_VERSION" "$(module_dir "github.com/kedacore/keda/v2@$KEDA_VERSION")" \
        config/crd/bases/keda.sh_scaledjobs.yaml 'config/crd/bases/eventing.keda.sh_*.yaml'
      src="$cache/src/prometheus-$PROMETHEUS_VERSION"
      [ -f "$src/go.mod" ] || wrapper "$src" github.com/prometheus/prometheus "$PROMETHEUS_VERSION"
      (export GOFLAGS="$GOFLAGS -tags=remove_all_sd,enable_kubernetes_sd"
       build "$src" "prometheus-$PROMETHEUS_VERSION" github.com/prometheus/prometheus/cmd/prometheus) ;;
    registry)
      # Upstream's registry with the one storage driver the tests use (registry/main.go, ours).
      src="$cache/src/registry-$REGISTRY_VERSION"
      [ -f "$src/go.mod" ] || wrapper "$src" github.com/distribution/distribution/v3 "$REGISTRY_VERSION"
      cp "$here/registry/main.go" "$src/main.go"
      build "$src" "registry-$REGISTRY_VERSION" . ;;
    netpol)
      # SIG Network's NetworkPolicy agent: upstream's controller, fed by an interception this kernel supports
      # (netpol/main.go, ours), named by a hash of that source, as tests/controlplane/network_policies.py
      # computes it, so a cache never serves an older one.
      src="$cache/src/kube-network-policies-$KUBE_NETWORK_POLICIES_VERSION"
      [ -f "$src/go.mod" ] || wrapper "$src" sigs.k8s.io/kube-network-policies "$KUBE_NETWORK_POLICIES_VERSION"
      cp "$here/netpol/main.go" "$src/main.go"
      build "$src" "kube-network-policies-$KUBE_NETWORK_POLICIES_VERSION-$(sha256sum < "$here/netpol/main.go" | cut -c1-12)" . ;;
    *) echo "build.sh: unknown component $component" >&2; exit 2 ;;
  esac
done
