# Each target creates .venv when missing and installs what it needs, one line per step. The
# dependencies install while the extensions compile (two jobs at once); a step whose inputs
# did not change is not run again, and only the extensions whose sources changed recompile.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CONFIG ?= configs/quickstart.toml
# A local CPU wheel on these machines; any other torch spec pulls the CUDA build.
TORCH := torch==2.13.0
# pip prints its errors only, and does not byte-compile the packages it installs (one by one,
# 40% of the install's time); they are compiled after, once, on every core (BYTECODE), so that
# every process (and every Ray worker) starts from bytecode even where PYTHONDONTWRITEBYTECODE
# forbids Python to write it as it imports (that costs 11 s a start). A source's bytecode
# carries its time stamp: an edited module is compiled again, in memory, until the next install.
PIP := $(BIN)/pip install --quiet --quiet --disable-pip-version-check --no-compile
# files that fail to compile (test fixtures of newer Python's syntax) are skipped, as pip skips them
BYTECODE = $(BIN)/python -m compileall -q -q -j 0 $(1) || true
EXTRAS := test deep dev
EXTENSIONS := $(wildcard envs/simulator/*.pyx envs/simulator/*.pxd envs/simulator/learned_flow/*.pyx envs/simulator/learned_flow/*.pxd envs/data/*.pyx envs/data/*.pxd agents/*.pyx agents/*.pxd)
# two jobs at once, their output not held back: the install's steps print one line each, and
# a run's progress bar and a test session's dots show as they come (--output-sync would hold
# a command's whole output until it ends)
MAKEFLAGS += --jobs=2

.PHONY: run test bench lint reproduce clean docs FORCE

$(BIN)/python:
	@echo "[1/5] creating $(VENV), a virtual environment of $$($(PYTHON) --version)"
	@$(PYTHON) -m venv $(VENV)

$(VENV)/.tools: | $(BIN)/python
	@echo "[2/5] installing the build tools (setuptools, Cython, numpy)"
	@$(PIP) "setuptools>=77" "Cython>=3.0" "numpy>=1.26"
	@touch $@

# the project's dependencies and its extras, read from pyproject.toml (the project itself
# is installed last, once its extensions are built)
$(VENV)/.dependencies: pyproject.toml | $(VENV)/.tools
	@echo "[3/5] installing the dependencies ($(TORCH) for the CPU, ray, pandas, scipy, pytest, ...)"
	@$(BIN)/python -c 'import tomllib, sys; project = tomllib.load(open("pyproject.toml", "rb"))["project"]; print(*project["dependencies"], *(d for e in sys.argv[1:] for d in project["optional-dependencies"][e]), sep="\n")' $(EXTRAS) > $(VENV)/requirements.txt
	@$(PIP) $(TORCH) -r $(VENV)/requirements.txt
	@echo "      compiling them to bytecode"
	@$(call BYTECODE,$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))'))
	@touch $@

# build/namespace/tradearena links to the three folders under their installed name (setup.py's
# namespace): Cython's cimports and the API reference read the packages through it, so a
# build/ removed by hand is made again (FORCE) even when no extension changed
$(VENV)/.compiled: setup.py $(EXTENSIONS) $(if $(wildcard build/namespace/tradearena),,FORCE) | $(VENV)/.tools
	@echo "[4/5] compiling the extension modules (Cython, then C and C++ on every core; log: $(VENV)/compile.log)"
	@$(BIN)/python setup.py build_ext --inplace > $(VENV)/compile.log 2>&1 || { cat $(VENV)/compile.log; exit 1; }
	@touch $@

$(VENV)/.installed: $(VENV)/.dependencies $(VENV)/.compiled
	@echo "[5/5] installing tradearena (editable: the modules built in place, the command tradearena)"
	@$(PIP) --no-deps --no-build-isolation -e .
	@$(call BYTECODE,agents envs evaluation)
	@touch $@

# the docs extra (MkDocs, Material, mkdocstrings), installed once; not part of EXTRAS: the
# tests do not need it
$(VENV)/.docs: pyproject.toml | $(VENV)/.installed
	@echo "installing the docs extra (mkdocs, mkdocs-material, mkdocstrings)"
	@$(BIN)/python -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["docs"], sep="\n")' > $(VENV)/docs-requirements.txt
	@$(PIP) -r $(VENV)/docs-requirements.txt
	@touch $@

# the generated pages (experiment files from the schema that checks them, the market's fields
# from MarketSpec's docstrings), then the site into site/, any warning an error; the API
# reference reads the packages through build/namespace (made with the extensions)
docs: $(VENV)/.docs
	$(BIN)/python -m tradearena.evaluation.reports.reference docs/config.md
	$(BIN)/python -m tradearena.envs.spec_reference docs/market.md
	NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(BIN)/mkdocs build --strict --quiet

# the run directory is the config's (`[output] dir`, by default runs/<its name>), so that
# `make run CONFIG=configs/taker.toml` runs into runs/taker; the last line is the command that
# puts `tradearena` on the PATH of the user's shell (make cannot change its parent's)
run: $(VENV)/.installed
	$(BIN)/tradearena run $(CONFIG) --resume
	@echo "next: source $(BIN)/activate   # the tradearena command on the PATH (then: tradearena --help)"

# pytest-xdist runs the tests on every core (the Ray tests on one worker); the last lines
# are the slowest tests and the whole run's duration
test: $(VENV)/.installed
	$(BIN)/python -m pytest -n auto --dist loadgroup --durations=10

reproduce: $(VENV)/.installed
	$(BIN)/tradearena reproduce

bench: $(VENV)/.installed
	@for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) runs build site

FORCE:
