# Every target sets up its own environment: `make demo` and `make test` work on a
# brand-new machine with only python3 on the PATH.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: install demo test lit pytest fuzz docs bench conformance clean

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

test: lit pytest

# The long fuzz campaign (10,000 cases; `make test` runs a sample): summary table at the end,
# failing inputs in test/fuzz/failures/.
fuzz: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" PYTHONPATH=test $(BIN)/python -m fuzz --jobs $(JOBS)

# Benchmarks and their targets (not part of `make test`): results and plots in benchmarks/results/.
# Every script runs even when an earlier one misses its target (each exits 1 then); the last
# line names those that did, and make fails.
BENCHMARKS = scalesim_validation roofline_validation lowering_quality compile_speed kernels networks
bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[test,bench]'
	@missed=""; for script in $(BENCHMARKS); do \
	  echo "== benchmarks/$$script.py"; \
	  $(BIN)/python benchmarks/$$script.py || missed="$$missed $$script"; \
	done; \
	if [ -n "$$missed" ]; then echo "make bench: targets missed or runs failed in:$$missed"; exit 1; fi

# The onnx package's light models compiled to npu code and simulated on davinci (not part of
# `make test`; minutes per model): the table of docs/conformance.md, results in benchmarks/results/.
conformance: $(STAMP)
	$(BIN)/python benchmarks/conformance.py --machine davinci

# The documentation site (mkdocs, into site/): the dialect, pass and tool references are
# generated from the code into docs/reference/ first (neither is committed).
docs: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[docs]'
	$(BIN)/python -m ziggurat.tools.gen_docs docs/reference
	$(BIN)/mkdocs build --quiet

clean:
	rm -rf $(VENV) build *.egg-info site docs/reference
	find . -name Output -type d -prune -exec rm -rf {} +
