# The two commands the README promises. Each installs what it needs on a fresh
# machine: a virtual environment with the package (and its lab extension, which
# needs Node.js and npm), and for the tests Debian's chromium and bubblewrap.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: lab test tests test-fast typecheck install system-packages

# Containers often run as root, which Jupyter refuses without --allow-root.
ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

lab: $(STAMP)
	@[ -n "$$ANTHROPIC_API_KEY" ] || echo "No ANTHROPIC_API_KEY: the tutorials run on their offline scripted replays."
	$(BIN)/jupyter lab --notebook-dir=notebooks $(ROOT_FLAG) $(LAB_ARGS)

# All checks: ruff first (it fails in seconds), then mypy beside the tests (each report
# printed whole when it ends).
test: $(STAMP) system-packages
	$(BIN)/python -m ruff check jupyter_agent tests benchmarks
	$(MAKE) --no-print-directory --jobs=2 --output-sync=target typecheck tests

# The tests: the JS unit tests, the browser tests and the others side by side, each spread
# over processes (scripts/run-tests); with PYTEST_ARGS (say, PYTEST_ARGS=tests/models), one
# pytest with those arguments.
tests: $(STAMP)
ifeq ($(strip $(PYTEST_ARGS)),)
	./scripts/run-tests $(BIN)/python
else
	$(BIN)/python -m pytest $(PYTEST_ARGS)
endif

# The edit loop: every test not marked slow (no browser, no real kernels, tutorials or
# builds), spread over processes.
test-fast: $(STAMP) system-packages
	$(BIN)/python -m pytest --ignore=tests/browser -m "not slow" -n 3 -q $(PYTEST_ARGS)

# mypy over jupyter_agent/, strict for the framework layer ([tool.mypy] in pyproject.toml).
typecheck: $(STAMP)
	$(BIN)/python -m mypy

install: $(STAMP)

# The distribution was called jupyter_agent before it became jupyter-in-kernel-agent: an
# older .venv drops that record first, since its files are ours too (-qq: silent if absent).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip uninstall -qq --yes jupyter_agent
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

system-packages:
	./scripts/ensure-system-packages
