# Two entry points for a fresh machine: `make test` and `make demo`. Everything they need is
# installed into .venv by the rules below.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# llama.cpp's default native build crashed (SIGSEGV in the AMX matmul) on these Xeons: build portable.
export CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
export FORCE_CMAKE := 1

.PHONY: install test lint demo bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The first install builds llama.cpp from source (about 5 minutes on 2 cores); later ones reuse pip's wheel cache.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	@echo "Installing jevalkit with its test, notebook and local-model extras."
	@echo "A first install compiles llama.cpp (llama-cpp-python): about 5 minutes on 2 cores."
	$(BIN)/python -m pip install --progress-bar on -e ".[test,notebooks,local]"
	touch $@

install: $(VENV)/.installed

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: lint
	$(BIN)/python -m pytest

demo: install
	$(BIN)/python -m jevalkit.demo

bench: install
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
