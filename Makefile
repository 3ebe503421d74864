# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
CORE := $(VENV)/.installed-core
FULL := $(VENV)/.installed-full

.PHONY: demo test test-fast durations lint typecheck unit bench clean

# The sandboxed python tool needs bubblewrap, libseccomp and, for a root caller, an interpreter the
# unprivileged sandbox user can read (the system's python3); installed here when running as root.
# llama-cpp-python comes from ../shared/wheels when that folder exists; otherwise pip builds it
# from source, portable (the native build crashes on some CPUs), which takes about 10 minutes.
# The dashboard's browser tests drive Debian's chromium through chromium-driver (browser downloads
# by test tools do not work offline); installed here when running as root, skipped otherwise.
# Dense retrieval uses torch on the CPU; this pinned release is the one the machines here carry.
TORCH_VERSION ?= 2.13.0
# The arena's contracts are compiled by solcjs from npm (offline once installed); the
# test-suite recompiles them and compares with the shipped bytecode.
SOLC_VERSION ?= 0.8.37
# A local EVM node (anvil) and the contracts' Forge suite, from npm: their Linux binaries ship
# inside the registry's platform packages, so they install offline like solc.
FOUNDRY_VERSION ?= 1.7.1
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF

# The demo needs the core package and the reports extra (its HTML report and the dashboard); the
# README's tour steps past it name the extra each needs instead of `make demo` installing them:
# they are the heavy ones (torch for dense retrieval, spaCy and datatrove for the quality
# filters, a llama.cpp build for the local model, the EVM libraries of the arena's
# distribution), and without one the step stops in one line naming the pip install. The
# test-suite also installs the other optional extras (model providers, the local llama.cpp
# server, the PostgreSQL server, Dask for the cluster executor, the MCP SDK, the Gymnasium
# environment, the TRL example, Inspect and verifiers, the curation filters) and the arena's
# distribution (arena/: `pastcast arena`, its EVM and relayer) so that their tests run.
$(CORE): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,reports]'
	@touch $(CORE)

$(FULL): $(CORE) arena/pyproject.toml
	@{ command -v bwrap && [ -x /usr/bin/python3 ] && ldconfig -p | grep -q libseccomp.so.2; } >/dev/null || { [ "$$(id -u)" = 0 ] && (apt-get update -qq && apt-get install -y -qq bubblewrap libseccomp2 python3 >/dev/null); } || echo "warning: bubblewrap, libseccomp2 or python3 is missing; the python tool will refuse to run"
	@{ [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; } || { [ "$$(id -u)" = 0 ] && (apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null); } || echo "warning: chromium or chromium-driver is missing; the dashboard's browser tests will be skipped"
	$(BIN)/python -m pip install --quiet torch==$(TORCH_VERSION)
	$(BIN)/python -m pip install --quiet $(if $(wildcard ../shared/wheels),--find-links ../shared/wheels) -e '.[dev,reports,local,llm,dense,postgres,reddit,isolation,gym,train,inspect,verifiers,scale,curate]'
	$(BIN)/python -m pip install --quiet -e ./arena
	@if command -v npm >/dev/null; then npm install --silent --prefix $(VENV)/solc solc@$(SOLC_VERSION); else echo "warning: npm not found; the contract recompile test will skip"; fi
	@if command -v npm >/dev/null; then npm install --silent --prefix $(VENV)/foundry @foundry-rs/anvil@$(FOUNDRY_VERSION) @foundry-rs/forge@$(FOUNDRY_VERSION); else echo "warning: npm not found; the anvil and Forge tests will skip"; fi
	@touch $(FULL)

demo: $(CORE)
	$(BIN)/pastcast demo --out runs/demo
	@echo "open runs/demo/report/report.html in a browser for the report; for the dashboard run"
	@echo "  $(BIN)/pastcast view runs/demo --dataset world:0"
	@echo "and open http://127.0.0.1:8000/"

lint: $(FULL)
	$(BIN)/ruff check --no-cache src tests benchmarks examples arena conftest.py
	$(BIN)/ruff format --no-cache --check src tests benchmarks examples arena conftest.py

typecheck: $(FULL)
	$(BIN)/mypy

# The suite runs on every core (pytest-xdist; TEST_WORKERS=N sets how many processes, 0 runs it
# in one). The whole suite starts one worker more than the cores: the tests marked `waits`
# (minutes on a scaled clock, the core idle) are collected first and so go to one worker, which
# waits through them while the others use the cores (tests/_tiers.py).
CORES := $(shell nproc 2>/dev/null || echo 2)

unit: $(FULL)
	$(BIN)/pytest -q -n $(or $(TEST_WORKERS),$(shell echo $$(($(CORES) + 1))))

test: lint typecheck unit

# The development tier: the tests outside the slow tier, without lint and types. The slow tier is
# decided by the durations measured in tests/durations.json (tests/_tiers.py): a test of 0.5 s or
# more, or one using a shared fixture whose set-up is; a test outside it that takes over 5 s fails.
# The BM25 kernels are compiled first (numba caches them beside their module; the first process
# after a checkout or a kernel change compiles them), so no fast test pays for that.
test-fast: $(FULL)
	@d=$$(mktemp -d) && $(BIN)/pastcast corpus build jsonl:examples/docs.jsonl --out $$d/idx >/dev/null 2>&1 && $(BIN)/pastcast corpus search $$d/idx warm --as-of 2025-01-01 >/dev/null; rm -rf $$d
	$(BIN)/pytest -q -n $(or $(TEST_WORKERS),$(CORES)) -m "not slow"

# Measures the whole suite again and rewrites tests/durations.json (run it on an idle machine).
durations: $(FULL)
	$(BIN)/pytest -q --record-durations

bench: $(CORE)
	$(BIN)/python benchmarks/env_overhead.py

clean:
	rm -rf $(VENV) runs .mypy_cache .pytest_cache .ruff_cache
