# Every target creates the virtual environment on first use, so a fresh
# machine with only Python 3.11+ (and make) needs nothing else.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev
# The demo needs the package alone (attrs is its one dependency), not the dev toolchain.
DEMO_STAMP := $(VENV)/.installed-package

.PHONY: demo test test-all lint redis-server test-thorough mutants mutation vector-mutation hunt random-report vector-coverage notebooks docs serve bench venv clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(DEMO_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e .
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(DEMO_STAMP)

venv: $(STAMP)

## make demo: run the chat example (installs only the package)
demo: $(DEMO_STAMP)
	$(PY) examples/chat.py

## make lint: ruff (check and format), mypy --strict on the package, and the import contracts (lint-imports)
lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(VENV)/bin/lint-imports

# The tests run their own redis-server on a free localhost port; install Debian's when it is missing.
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
	  echo "installing redis-server (Debian package) for the RedisStore tests"; \
	  apt-get update -qq && apt-get install -y -qq redis-server >/dev/null; }

## make test: lint and type checks, then the suite but its long tests, with the quick hypothesis profile (within five minutes on two cores)
test: lint redis-server
	$(PY) -m pytest -m "not slow" --hypothesis-profile=quick

## make test-all: lint and type checks, then every test, the long ones too, with the fast hypothesis profile (what CI runs)
test-all: lint redis-server
	$(PY) -m pytest

## make test-thorough: the property tests with many more examples
test-thorough: $(STAMP)
	$(PY) -m pytest --hypothesis-profile=thorough

## make mutation MODULE=conformance/runner.py: mutmut over one module with its narrow test selection (incremental: its cache is in .cache/mutation/); prints killed / total and each survivor, with the reason of those listed as equivalent in tests/mutation_equivalent.txt
mutation: $(STAMP)
	$(PY) tests/mutation.py $(MODULE)

## make vector-mutation MODULE=core/chat.py: mutmut over code a port reproduces (core/..., conformance/backend.py) with the conformance vectors as the only test (tests/vectors_alone.py); incremental (.cache/mutation/vectors__...), records the module's figures in tests/vector_mutation.json
vector-mutation: $(STAMP)
	$(PY) tests/mutation.py --vectors $(MODULE)

## make hunt MODULE=core/cut.py ID=64: the random mode against one mutant the vectors let live (a case it finds is printed as a vector)
hunt: $(STAMP)
	$(PY) tests/mutant_hunt.py $(MODULE) $(ID)

## make random-report: how many of serve --bug's injected bugs the random mode finds on its own
random-report: $(STAMP)
	$(PY) tests/random_mode_report.py

## make mutants: apply deliberate one-line bugs and show the spec (machines and properties) catches each
mutants: $(STAMP)
	$(PY) tests/mutants.py

## make vector-coverage: the core's branches the conformance vectors alone take, into docs/vector-coverage.md
vector-coverage: $(STAMP)
	$(PY) tests/vector_coverage.py --write

## make notebooks: rewrite and re-execute the notebooks from notebooks/build.py
notebooks: $(STAMP)
	$(PY) notebooks/build.py

## make docs: build the site into site/ (strict: any warning fails)
docs: $(STAMP)
	$(VENV)/bin/mkdocs build --strict

## make serve: the docs on http://127.0.0.1:8000 while you edit
serve: $(STAMP)
	$(VENV)/bin/mkdocs serve

## make bench: run the benchmarks, write docs/performance.md, docs/performance-tokenizers.md and their plots
bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) benchmarks/report.py
	$(PY) benchmarks/report.py chat

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .cache site
