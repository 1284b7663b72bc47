# cdc's door: `make help` lists what it opens. The local stack (MariaDB, Kafka, PostgreSQL and a schema
# registry; no Docker needed) is scripts/stack.sh; its state lives in .stack/ (or $CDC_STACK_DIR).
.DEFAULT_GOAL := help
SHELL := /bin/bash

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
SCENARIO ?=
BENCH_ARGS ?=

.PHONY: help install spark up down status test test-all lint demo demo-replicate bench compat fuzz test-security clean-stack

help: ## this list
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  make %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@scripts/install-deps.sh
	$(BIN)/python -m pip install -q -e '.[dev,mysqlclient]' || { echo "mysqlclient did not build: installing without it (the JDBC source uses PyMySQL)"; $(BIN)/python -m pip install -q -e '.[dev]'; }
	@touch $(STAMP)

install: $(STAMP) ## create .venv (Python 3.11) with cdc and its dev tools; fast when nothing changed

SPARK_STAMP := $(VENV)/.spark-installed
$(SPARK_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[dev,spark]'
	@touch $(SPARK_STAMP)

spark: $(SPARK_STAMP) ## add pyspark (the `spark` extra: a 456 MB sdist, ~2 min once) for `cdc snapshot`

up: ## start the stack: MariaDB :3306, Kafka :9092 (CDC_KAFKA_BROKERS=3: three replicated brokers; CDC_KAFKA_CLUSTERS=2: a second cluster on :9192), PostgreSQL :5432, schema registry :8081
	@scripts/stack.sh up

down: ## stop the processes of the stack that this checkout started; the data stays
	@scripts/stack.sh down

status: ## whether MariaDB, Kafka, PostgreSQL and the schema registry run and answer (and where)
	@scripts/stack.sh status

test: install spark up ## unit and integration tests against the local stack, the long Spark runs aside (CI)
	@set +e; $(BIN)/pytest tests -m "not slow" --durations=25 $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: nothing failed"; rc=0; fi; exit $$rc

test-all: install spark up ## every test, the `slow` ones (long Spark snapshot runs) included
	@set +e; $(BIN)/pytest tests $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: nothing failed"; rc=0; fi; exit $$rc

lint: install ## ruff check, ruff format --check, mypy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

demo: install up ## the main job end to end: a worker, the seed Debezium config, changes printed as they arrive
	@scripts/demo.sh

demo-replicate: install up ## MariaDB → cdc (seed Debezium config, JDBC sink) → PostgreSQL: changes upstream, both tables compared
	@scripts/demo-replicate.sh

bench: install up ## run benchmarks against the peers (SCENARIO=B10|B9|B3, default all; BENCH_ARGS="--runs 3 --rows N")
	$(BIN)/python -m bench run $(if $(SCENARIO),--scenario $(SCENARIO)) $(BENCH_ARGS)

compat: install up ## the real Debezium (Kafka Connect + its MariaDB connector) beside cdc on one database: differences (COMPAT_ARGS="--dump --keep")
	$(BIN)/python -m bench.compat $(COMPAT_ARGS)

fuzz: install up ## fuzz the REST API with schemathesis: no 5xx, no stack trace (FUZZ_EXAMPLES=50)
	scripts/fuzz.sh $(or $(FUZZ_EXAMPLES),50)

test-security: install up ## the attacks of docs/security.md against real workers (tests/security/)
	$(BIN)/pytest tests/security $(PYTEST_ARGS)

clean-stack: ## stop the stack and delete its data (.stack/)
	@scripts/stack.sh clean
