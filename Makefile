# Two commands for a fresh clone (Python 3.11):
#   make demo   install into .venv (when missing or stale) and run the demo
#   make test   install into .venv (with dev tools) and run the whole test suite
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: demo test install lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/auditor demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check auditor ledger migrations tests bench
	$(BIN)/ruff format --check auditor ledger migrations tests bench
	$(BIN)/mypy

clean:
	rm -rf .auditor .pytest_cache .mypy_cache .ruff_cache
