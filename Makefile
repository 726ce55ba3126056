# Each target creates .venv when missing and installs what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CONFIG ?= configs/quickstart.toml
# A local CPU wheel on these machines; any other torch spec pulls the CUDA build.
TORCH := torch==2.13.0

.PHONY: run test bench lint reproduce clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet $(TORCH)
	$(BIN)/pip install --quiet -e ".[test,deep,dev]"
	touch $@

run: $(VENV)/.installed
	$(BIN)/tradearena run $(CONFIG) --out runs/quickstart --resume

test: $(VENV)/.installed
	$(BIN)/python -m pytest

reproduce: $(VENV)/.installed
	$(BIN)/tradearena reproduce

bench: $(VENV)/.installed
	@for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) runs
