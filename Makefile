# The two commands the README promises. Each installs what it needs on a fresh
# machine: a virtual environment with the package (and its lab extension, which
# needs Node.js and npm), and for the tests Debian's chromium and bubblewrap.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PANEL := jupyter_agent/jupyter/panel/static/panel.js

.PHONY: lab test tests test-fast lint typecheck install system-packages bytecode

# Containers often run as root, which Jupyter refuses without --allow-root.
ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

lab: $(STAMP) $(PANEL) bytecode
	@[ -n "$$ANTHROPIC_API_KEY" ] || echo "No ANTHROPIC_API_KEY: the tutorials run on their offline scripted replays."
	$(BIN)/jupyter lab --notebook-dir=notebooks $(ROOT_FLAG) $(LAB_ARGS)

# All checks: the linters first (they fail in seconds), then mypy beside the tests (each
# report printed whole when it ends).
test: $(STAMP) $(PANEL) system-packages
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory --jobs=2 --output-sync=target typecheck tests

# The tests: the JS unit tests, the browser tests and the others side by side, each spread
# over processes (scripts/run-tests); with PYTEST_ARGS (say, PYTEST_ARGS=tests/models), one
# pytest with those arguments.
tests: $(STAMP) $(PANEL) bytecode
ifeq ($(strip $(PYTEST_ARGS)),)
	./scripts/run-tests $(BIN)/python
else
	$(BIN)/python -m pytest $(PYTEST_ARGS)
endif

# Every linter and format check, Python's and TypeScript's (js/: prettier, eslint).
lint: $(STAMP)
	$(BIN)/python -m ruff check jupyter_agent tests benchmarks
	$(BIN)/python -m ruff format --check jupyter_agent tests benchmarks
	cd js && npm run --silent lint:check

# The edit loop: every test not marked slow (no browser, no real kernels, tutorials or
# builds), spread over processes.
test-fast: $(STAMP) $(PANEL) bytecode
	$(BIN)/python -m pytest --ignore=tests/browser -m "not slow" -n 3 -q $(PYTEST_ARGS)

# mypy --strict over the package, the tests and the benchmarks ([tool.mypy] in
# pyproject.toml); each folder's conftest.py on its own, as they share one module name.
typecheck: $(STAMP)
	$(BIN)/python -m mypy
	for conftest in tests/*/conftest.py; do \
		$(BIN)/python -m mypy --no-warn-unused-configs $$conftest || exit 1; done

install: $(STAMP) $(PANEL)

# The panel's bundle is built, not tracked: the install builds it, and this rebuilds it
# when a checkout lacks it or its sources changed.
$(PANEL): $(wildcard js/src/panel/*.ts) js/scripts/panel.js | $(STAMP)
	cd js && npm run --silent build:panel

# The distribution was called jupyter_agent before it became jupyter-in-kernel-agent: an
# older .venv drops that record first, since its files are ours too (-qq: silent if absent).
# The packages come through uv, which downloads them side by side: on this project's
# 2-core machine a fresh install took 165 s with uv and 990 s with pip alone. They are
# compiled to bytecode here, as pip does and uv does not by default: where
# PYTHONDONTWRITEBYTECODE is set (CI), every Python process (each kernel, each test
# process) otherwise compiled pandas, IPython and the SDKs from source again.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip uv
	$(BIN)/python -m pip uninstall -qq --yes jupyter_agent
	$(BIN)/python -m uv pip install --quiet --compile-bytecode --python $(BIN)/python -e ".[test]"
	touch $(STAMP)

# The package's own bytecode: an editable install is not compiled, and each kernel imports
# it (compileall writes only what changed).
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q jupyter_agent

system-packages:
	./scripts/ensure-system-packages
