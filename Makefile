# a2a_lab developer commands. Only `python3` (>= 3.11) with pip is assumed.
#
#   make lab        create/update .venv and start JupyterLab on notebooks/
#   make test       create/update .venv and run the fast suite a developer runs before every
#                   commit (unit and property tests, doctests, notebook/jupytext pairing,
#                   code health): every test not marked `slow`
#   make test-all   the fast suite plus the `slow` tests (statistical validations, the large
#                   fuzz corpora, crash campaigns, notebooks on logs the project does not
#                   ship, the browser tests) and every notebook under strict nbval; CI runs it
#   make notebooks  re-execute every notebook and store its outputs (after editing one)
#   make lock       re-resolve requirements/lock.txt from scratch (a deliberate upgrade)
#   make bench      run every benchmarks/bench_*.py (numbers go to BENCHMARKS.md)
#   make phoenix    build .venv-phoenix (Arize Phoenix, the OTLP receiver of
#                   tests/otel/test_otlp_receiver.py) from requirements/phoenix-lock.txt
#   make clean      remove .venv and caches
#
# Variables: PYTHON (the interpreter that creates .venv), PYTEST_ARGS (extra pytest
# arguments, e.g. PYTEST_ARGS="-k loader -x"), LAB_ARGS (extra JupyterLab arguments),
# NOTEBOOKS (the notebooks `make notebooks` runs; all by default), BENCH_ARGS (arguments
# for every benchmark script, e.g. BENCH_ARGS="--repeat 1"), XDIST_ARGS (how `make test`
# spreads the suite over CPUs; XDIST_ARGS= runs it in one process).

PYTHON ?= python3
VENV ?= .venv
LOCK := requirements/lock.txt
BIN := $(VENV)/bin
# Written after a complete install; older than pyproject.toml or the lock means "reinstall".
STAMP := $(VENV)/.a2a-lab-installed
PIP := $(BIN)/python -m pip
PIP_FLAGS := --disable-pip-version-check --progress-bar off --quiet

# Stored notebook outputs are compared on every run, so the kernels must not see what
# differs between machines: the analyst's own log source and time zone, hash seeds and
# kernel specs installed outside the venv, and progress bars (they appear only on slow runs).
RUN_ENV := env -u A2A_LAB_LOGS -u A2A_LAB_TZ TZ=UTC PYTHONHASHSEED=0 JUPYTER_PREFER_ENV_PATH=1 A2A_LAB_PROGRESS=0
NBVAL_ARGS := --nbval --nbval-current-env --nbval-cell-timeout=600 \
	--nbval-sanitize-with notebooks/nbval-sanitize.cfg

PYTEST_ARGS ?=
# One worker per CPU (at most 4); a file's tests (a notebook's cells) stay on one worker.
# XDIST_ARGS= (empty) runs everything in one process.
XDIST_ARGS ?= -n logical --maxprocesses 4 --dist loadfile
LAB_ARGS ?=
NOTEBOOKS ?=
BENCH_ARGS ?=
# JupyterLab refuses to start as root unless told to (containers, CI machines).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: lab test test-all notebooks bench lock clean venv phoenix

# The OTLP receiver the receiver tests start (issue 26). Its own venv: Phoenix's
# dependencies conflict with the project's lock (python-dateutil < 3 through botocore).
PHOENIX_VENV ?= .venv-phoenix
PHOENIX_LOCK := requirements/phoenix-lock.txt

venv: $(STAMP)

$(STAMP): pyproject.toml $(LOCK)
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "a2a_lab needs Python >= 3.11; '$(PYTHON)' is $$($(PYTHON) --version 2>&1)" >&2; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install $(PIP_FLAGS) "$$(grep -E '^pip==' $(LOCK))"
	$(PIP) install $(PIP_FLAGS) --no-deps -r $(LOCK)
	$(PIP) install $(PIP_FLAGS) --no-deps --no-build-isolation -e .
	$(PIP) check
	touch $@

lab: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.root_dir=notebooks $(ALLOW_ROOT) $(LAB_ARGS)

test: $(STAMP)
	$(RUN_ENV) $(BIN)/python -m pytest -m "not slow" $(XDIST_ARGS) $(PYTEST_ARGS)

test-all: $(STAMP)
	$(RUN_ENV) $(BIN)/python -m pytest $(NBVAL_ARGS) $(XDIST_ARGS) $(PYTEST_ARGS)

notebooks: $(STAMP)
	$(RUN_ENV) $(BIN)/python tools/run_notebooks.py $(NOTEBOOKS)

bench: $(STAMP)
	@set -e; for script in benchmarks/bench_*.py; do \
		echo "== $$script"; $(BIN)/python "$$script" $(BENCH_ARGS); \
	done

# Resolves the newest releases pyproject.toml allows in a throw-away venv and freezes them
# (pip, setuptools and wheel included, the project itself excluded).
lock:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(PYTHON) -m venv "$$tmp/venv"; \
	"$$tmp/venv/bin/python" -m pip install $(PIP_FLAGS) --upgrade pip setuptools wheel; \
	"$$tmp/venv/bin/python" -m pip install $(PIP_FLAGS) -e '.[notebooks,test]'; \
	"$$tmp/venv/bin/python" -m pip check; \
	{ sed -n '/^#/p' $(LOCK); \
	  "$$tmp/venv/bin/python" -m pip freeze --all --exclude-editable; } > "$$tmp/lock.txt"; \
	mv "$$tmp/lock.txt" $(LOCK); \
	echo "$(LOCK): $$(grep -c '==' $(LOCK)) pinned packages"

phoenix: $(PHOENIX_VENV)/.installed

$(PHOENIX_VENV)/.installed: $(PHOENIX_LOCK)
	test -x $(PHOENIX_VENV)/bin/python || $(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/python -m pip install $(PIP_FLAGS) --no-deps -r $(PHOENIX_LOCK)
	$(PHOENIX_VENV)/bin/python -m pip check
	touch $@

clean:
	rm -rf $(VENV) $(PHOENIX_VENV) .pytest_cache .hypothesis .benchmarks
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
