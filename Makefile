# Every target creates the virtual environment on first use, so a fresh
# machine with only Python 3.11+ (and make) needs nothing else.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev

.PHONY: demo test test-thorough mutants venv clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

## make demo: run the end-to-end chat example
demo: $(STAMP)
	$(PY) examples/chat.py

## make test: the whole test suite
test: $(STAMP)
	$(PY) -m pytest

## make test-thorough: the property tests with many more examples
test-thorough: $(STAMP)
	$(PY) -m pytest --hypothesis-profile=thorough

## make mutants: apply deliberate one-line bugs and show the state machines catch each
mutants: $(STAMP)
	$(PY) tests/mutants.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis site
