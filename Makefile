# HopsHive on Python: deploy, test and lint entry points.  `make` lists the targets.
# Everything here is a thin wrapper around scripts/, which also work on their own.

SHELL := /bin/bash
ROLE ?= mysql_cluster
ARGS ?=

.DEFAULT_GOAL := help
.PHONY: help deploy test test-e2e lint docs base-image molecule molecule-all cluster cluster-test cluster-destroy clean

help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

deploy: ## Deploy and start the stack on this host (ARGS="-i inventories/multinode --check" ...)
	./scripts/deploy $(ARGS)

test: ## Deploy (idempotent), then run every test: pytest tests harness (ARGS go to pytest)
	./scripts/test $(ARGS)

test-e2e: ## Deploy, then run only the end-to-end harness against the deployment
	./scripts/test -m e2e $(ARGS)

lint: ## yamllint + ansible-lint + role README tables (tools pinned in requirements-lint.txt)
	./scripts/lint

docs: ## Regenerate the variable tables of roles/*/README.md from defaults/main.yml
	./scripts/lint docs

base-image: ## Build the Debian 12 base image molecule uses (hopshive/debian12-base:latest)
	./scripts/build-base-image

molecule: ## Run a role's molecule scenario in docker (ROLE=any role under roles/, e.g. ROLE=server2)
	./scripts/molecule $(ROLE) $(or $(ARGS),test)

molecule-all: base-image ## Run every molecule scenario of every role (molecule test), one after another; stop at the first failure
	@set -e; for scenario in roles/*/molecule/*/molecule.yml; do \
		role=$${scenario#roles/}; role=$${role%%/*}; name=$$(basename "$$(dirname "$$scenario")"); \
		start=$$SECONDS; echo "==> molecule $$role/$$name"; \
		./scripts/molecule "$$role" test -s "$$name"; \
		echo "==> molecule $$role/$$name: $$((SECONDS - start))s"; \
	done

cluster: ## Bring up the container cluster (inventories/cluster) and deploy it: ./scripts/cluster up
	./scripts/cluster up $(ARGS)

cluster-test: ## Run the end-to-end harness against the container cluster (ARGS go to pytest)
	./scripts/cluster test $(ARGS)

cluster-destroy: ## Remove the container cluster's containers and network
	./scripts/cluster destroy

clean: ## Remove the tool virtualenvs and build output (deployed services are left alone)
	rm -rf .venv-deploy .venv-test .venv-lint .state build
