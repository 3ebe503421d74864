# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
CORE := $(VENV)/.installed-core
FULL := $(VENV)/.installed-full

.PHONY: demo test lint typecheck unit bench clean

# The sandboxed python tool needs bubblewrap, libseccomp and, for a root caller, an interpreter the
# unprivileged sandbox user can read (the system's python3); installed here when running as root.
# llama-cpp-python comes from ../shared/wheels when that folder exists; otherwise pip builds it
# from source, portable (the native build crashes on some CPUs), which takes about 10 minutes.
# Dense retrieval uses torch on the CPU; this pinned release is the one the machines here carry.
TORCH_VERSION ?= 2.13.0
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF

# The demo needs only the core package; the test-suite also installs the optional extras
# (model providers, the local llama.cpp server, the PostgreSQL server, Dask for the cluster
# executor) so that their integration tests run.
$(CORE): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(CORE)

$(FULL): $(CORE)
	@{ command -v bwrap && [ -x /usr/bin/python3 ] && ldconfig -p | grep -q libseccomp.so.2; } >/dev/null || { [ "$$(id -u)" = 0 ] && (apt-get update -qq && apt-get install -y -qq bubblewrap libseccomp2 python3 >/dev/null); } || echo "warning: bubblewrap, libseccomp2 or python3 is missing; the python tool will refuse to run"
	$(BIN)/python -m pip install --quiet torch==$(TORCH_VERSION)
	$(BIN)/python -m pip install --quiet $(if $(wildcard ../shared/wheels),--find-links ../shared/wheels) -e '.[dev,local,llm,dense,postgres,reddit,scale]'
	@touch $(FULL)

demo: $(CORE)
	$(BIN)/pastcast demo --out runs/demo

lint: $(FULL)
	$(BIN)/ruff check --no-cache src tests benchmarks
	$(BIN)/ruff format --no-cache --check src tests benchmarks

typecheck: $(FULL)
	$(BIN)/mypy

unit: $(FULL)
	$(BIN)/pytest -q

test: lint typecheck unit

bench: $(CORE)
	$(BIN)/python benchmarks/env_overhead.py

clean:
	rm -rf $(VENV) runs .mypy_cache .pytest_cache .ruff_cache
