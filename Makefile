# The two commands the README promises. Each installs what it needs on a fresh
# machine: a virtual environment with the package (and its lab extension, which
# needs Node.js and npm), and for the tests Debian's chromium.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: lab test install chromium

lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=notebooks

test: $(STAMP) chromium
	$(BIN)/python -m ruff check jupyter_agent tests benchmarks
	$(BIN)/python -m pytest $(PYTEST_ARGS)

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

chromium:
	./scripts/ensure-chromium
