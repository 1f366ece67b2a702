# Every target sets up its own environment: `make demo` and `make test` work on a
# brand-new machine with only python3 on the PATH.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: install demo test lint lit pytest fuzz docs bench conformance clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml setup.py test/plugin/pyproject.toml examples/plugins/gemmini/pyproject.toml
	$(BIN)/python -m pip install -q -e '.[test]'
	$(BIN)/python -m pip install -q -e test/plugin
	$(BIN)/python -m pip install -q -e examples/plugins/gemmini
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" bash examples/demo.sh

lit: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/lit -sv -j $(JOBS) test examples/plugins/gemmini/test

pytest: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -n $(JOBS) test/unit

# The import layers (pyproject.toml [tool.importlinter]) are checked on a copy of the sources laid
# out as they install (the top-level folders become subpackages of ziggurat), then the code style.
LINT_LAYOUT := build/lint-layout
# the folders setup.py maps onto ziggurat.<folder>: every top-level package but ziggurat itself
SOURCE_FOLDERS := $(filter-out ziggurat,$(patsubst %/__init__.py,%,$(wildcard */__init__.py)))
lint: $(STAMP)
	rm -rf $(LINT_LAYOUT) && mkdir -p $(LINT_LAYOUT)
	cp -r ziggurat $(LINT_LAYOUT)/ziggurat
	for folder in $(SOURCE_FOLDERS); do cp -r $$folder $(LINT_LAYOUT)/ziggurat/$$folder; done
	cd $(LINT_LAYOUT) && PYTHONPATH=. $(CURDIR)/$(BIN)/lint-imports --no-cache $(CURDIR)/pyproject.toml
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: lint lit pytest

# The long fuzz campaign (10,000 cases; `make test` runs a sample): summary table at the end,
# failing inputs in test/fuzz/failures/.
fuzz: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" PYTHONPATH=test $(BIN)/python -m fuzz --jobs $(JOBS)

# Benchmarks and their targets (not part of `make test`): results and plots in benchmarks/results/.
# Every script runs even when an earlier one misses its target (each exits 1 then); the last
# line names those that did, and make fails.
# distributed_tuning starts local Ray instances: the ray extra is installed here (never by `make test`).
# gpu_validation measures only where torch (the models extra, a CUDA build) sees a GPU; elsewhere it
# says the comparison is pending and passes. TORCH_PYTHON (below), a Python with torch, lets
# compile_speed generate the corpus models of its per-GMAC target; without it that target is pending.
BENCHMARKS = scalesim_validation scalesim_bandwidth roofline_validation lowering_quality compile_speed kernels networks distributed_tuning gpu_validation
bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[test,bench,ray]'
	@missed=""; for script in $(BENCHMARKS); do \
	  echo "== benchmarks/$$script.py"; \
	  TORCH_PYTHON=$(TORCH_PYTHON) $(BIN)/python benchmarks/$$script.py || missed="$$missed $$script"; \
	done; \
	if [ -n "$$missed" ]; then echo "make bench: targets missed or runs failed in:$$missed"; exit 1; fi

# The onnx package's operator suite through the importer and the graph interpreter (the table of
# docs/onnx-operators.md; a sample of it runs in `make test`), then its light models compiled to npu
# code and simulated on davinci (minutes per model), then the full-size model corpus
# (examples/models/corpus.py, generated into benchmarks/results/corpus by TORCH_PYTHON, a Python with
# torch 2.13.0, onnxscript and onnxruntime) on davinci and tensorcore: the tables of
# docs/conformance.md, results in benchmarks/results/. Both run even when the first misses.
TORCH_PYTHON ?= python3
conformance: $(STAMP)
	$(BIN)/python -m ziggurat.testing.onnx_operator_suite --table docs/onnx-operators.md
	@status=0; \
	$(BIN)/python benchmarks/conformance.py --machine davinci || status=1; \
	$(BIN)/python benchmarks/conformance.py --corpus benchmarks/results/corpus --machine davinci,tensorcore \
	  --torch-python $(TORCH_PYTHON) || status=1; \
	exit $$status

# The documentation site (mkdocs, into site/): the dialect, pass and tool references are
# generated from the code into docs/reference/ first (neither is committed).
docs: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[docs]'
	$(BIN)/python -m ziggurat.tools.gen_docs docs/reference
	$(BIN)/mkdocs build --quiet

clean:
	rm -rf $(VENV) build *.egg-info site docs/reference
	find . -name Output -type d -prune -exec rm -rf {} +
