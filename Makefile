# geoask — `make demo` (set-up + main job) and `make test`. Works from a fresh clone.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SYSTEM_PACKAGES := postgresql-15-postgis-3 bubblewrap python3 python3-venv chromium

export PREFECT_SERVER_ANALYTICS_ENABLED ?= false
export DO_NOT_TRACK ?= 1
export ANONYMIZED_TELEMETRY ?= False
export HF_HUB_OFFLINE ?= 1
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 120

.PHONY: help setup system-packages demo test lint typecheck unit down clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

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

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $(STAMP)

setup: system-packages $(STAMP) ## Create .venv, install geoask, the system packages and the sandbox runtime
	$(BIN)/geoask sandbox setup

demo: setup ## Set up, load the demo data, run the benchmark (reference model, FULL), show 3 answers
	$(BIN)/geoask db up
	$(BIN)/geoask db load
	$(BIN)/geoask db status
	$(BIN)/geoask bench --model reference --variant FULL
	$(BIN)/geoask bench showcase --model reference

lint: $(STAMP) ## ruff
	$(BIN)/ruff check .

typecheck: $(STAMP) ## mypy
	$(BIN)/mypy

unit: setup ## pytest only
	$(BIN)/pytest

test: setup lint typecheck unit ## ruff, mypy and the whole pytest suite (starts PostGIS itself)

down: ## Stop the embedded PostGIS
	-$(BIN)/geoask db down

clean: down ## Remove .venv and .geoask (the embedded cluster and all artifacts)
	rm -rf $(VENV) .geoask
