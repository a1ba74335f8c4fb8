# The two commands the README promises. Each installs what it needs on a fresh
# machine: a virtual environment with the package (and its lab extension, which
# needs Node.js and npm), and for the tests Debian's chromium and bubblewrap.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTHON_PACKAGES := $(VENV)/.packages
JS_PACKAGES := js/node_modules/.installed
JS_LIB := js/lib/.built
PANEL := jupyter_agent/jupyter/panel/static/panel.js

.PHONY: lab test tests test-fast lint typecheck install system-packages bytecode

# Containers often run as root, which Jupyter refuses without --allow-root.
ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

lab: $(STAMP) bytecode
	@[ -n "$$ANTHROPIC_API_KEY" ] || echo "No ANTHROPIC_API_KEY: the tutorials run on their offline scripted replays."
	$(BIN)/jupyter lab --notebook-dir=notebooks $(ROOT_FLAG) $(LAB_ARGS)

# All checks, each step as soon as what it needs is there: the Python, npm and Debian
# packages install side by side; mypy starts once the Python packages are in (while js/
# builds), the linters once npm's are, the tests once the package is. Each report is
# printed whole when it ends.
test:
	$(MAKE) --no-print-directory --jobs=4 --output-sync=target lint typecheck tests

# The tests: the JS unit tests, the browser tests and the others side by side, each spread
# over processes (scripts/run-tests); with PYTEST_ARGS (say, PYTEST_ARGS=tests/models), one
# pytest with those arguments.
tests: $(STAMP) bytecode system-packages
ifeq ($(strip $(PYTEST_ARGS)),)
	./scripts/run-tests $(BIN)/python
else
	$(BIN)/python -m pytest $(PYTEST_ARGS)
endif

# Every linter and format check, Python's and TypeScript's (js/: prettier, eslint).
lint: $(PYTHON_PACKAGES) $(JS_PACKAGES)
	$(BIN)/python -m ruff check jupyter_agent tests benchmarks
	$(BIN)/python -m ruff format --check jupyter_agent tests benchmarks
	cd js && npm run --silent lint:check

# The edit loop: every test not marked slow (no browser, no real kernels, tutorials or
# builds), spread over processes.
test-fast: $(STAMP) bytecode
	$(BIN)/python -m pytest --ignore=tests/browser -m "not slow" -n 3 -q $(PYTEST_ARGS)

# mypy --strict over the package, the tests and the benchmarks ([tool.mypy] in
# pyproject.toml); each folder's conftest.py on its own, as they share one module name.
typecheck: $(PYTHON_PACKAGES)
	$(BIN)/python -m mypy
	for conftest in tests/*/conftest.py; do \
		$(BIN)/python -m mypy --no-warn-unused-configs $$conftest || exit 1; done

install: $(STAMP)

# The panel's bundle is built, not tracked: the install builds it, and this rebuilds it
# when a checkout lacks it or its sources changed. The lab extension's TypeScript builds
# beside it. Both build from the generated sources as tracked (protocol.ts, wire.ts: the JS
# tests fail when the schema gives others; `npm run build` makes them again).
$(PANEL): $(wildcard js/src/panel/*.ts) js/scripts/panel.js | $(JS_PACKAGES)
	cd js && npm run --silent build:panel

$(JS_LIB): $(wildcard js/src/*.ts js/src/panel/*.ts) js/tsconfig.json | $(JS_PACKAGES)
	cd js && npm run --silent build:ts
	touch $@

# The Python packages come through uv, which downloads them side by side (on this project's
# 2-core machine a fresh install took 165 s with uv, 990 s with pip alone), and are compiled
# to bytecode, as pip does and uv does not by default: where PYTHONDONTWRITEBYTECODE is set
# (CI), every kernel and test process otherwise compiled pandas, IPython and the SDKs again.
# The venv is made without pip and gets uv from the system's pip (7 s; bootstrapping pip
# into the venv and upgrading it took 26 s), or from its own pip where the system has none.
$(PYTHON_PACKAGES): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv --without-pip $(VENV)
	$(BIN)/python -m uv --version >/dev/null 2>&1 \
		|| $(PYTHON) -m pip --python $(BIN)/python install --quiet uv \
		|| { $(BIN)/python -m ensurepip && $(BIN)/python -m pip install --quiet uv; }
	$(BIN)/python -m uv pip install --quiet --compile-bytecode --python $(BIN)/python \
		pip -r pyproject.toml --extra test
	touch $@

$(JS_PACKAGES): js/package.json
	cd js && npm install --no-audit --no-fund --loglevel=error
	touch $@

# The lab extension (its build needs the Python packages), then the package, editable: its
# build hook is told that js/ is built. The distribution was called jupyter_agent before it
# became jupyter-in-kernel-agent: an older .venv drops that record first, since its files
# are ours too.
$(STAMP): $(PYTHON_PACKAGES) $(JS_LIB) $(PANEL)
	cd js && PATH="$(abspath $(BIN)):$$PATH" npm run --silent build:labextension:dev
	$(BIN)/python -m uv pip uninstall --quiet --python $(BIN)/python jupyter_agent
	HATCH_JUPYTER_BUILDER_SKIP_NPM=1 \
		$(BIN)/python -m uv pip install --quiet --python $(BIN)/python --no-deps -e .
	touch $@

# The package's own bytecode: an editable install is not compiled, and each kernel imports
# it (compileall writes only what changed).
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q jupyter_agent

system-packages:
	./scripts/ensure-system-packages
