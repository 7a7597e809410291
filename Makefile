# Two commands do all set-up:  `make run` (the embedded workflow + report) and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= all
# Where pip takes torch==2.13.0 from. Empty: pip's own configuration decides (on a machine
# whose pip points at PyPI that is the CUDA build, several GB; here it is the CPU wheel on
# disk). Set it to choose explicitly, e.g. https://download.pytorch.org/whl/cpu for the CPU
# build or https://download.pytorch.org/whl/cu128 for a CUDA 12.8 build on a GPU machine.
TORCH_INDEX_URL ?=
# Installed without their dependencies (see the install recipe).
NO_DEPS := mini-dust3r==0.1.2
# One thread per process: on 2 cores, oversubscribed OpenMP makes small tensors ~100x slower.
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1
export NUMBA_NUM_THREADS ?= 1
export OMP_WAIT_POLICY ?= passive

.PHONY: install run replicate test rehearsal mutation report lint clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, pinned: a looser spec (or a dependency asking for torch) pulls a CUDA build
	$(BIN)/pip install --quiet torch==2.13.0 $(if $(TORCH_INDEX_URL),--index-url $(TORCH_INDEX_URL))
	$(BIN)/python -c "import torch; print(torch.__version__)" > $(VENV)/torch-version
	$(BIN)/pip install --quiet -e '.[dev]'
	# DUSt3R's model code for the 3R-Adapter tests (tests/r3_adapter/test_dust3r_real.py);
	# its declared extras (torchvision, gradio, rerun, opencv) are a demo UI it never imports
	$(BIN)/pip install --quiet --no-deps $(NO_DEPS)
	$(BIN)/python -c "import torch; print(torch.__version__)" | diff - $(VENV)/torch-version \
		|| { echo "installing the project replaced torch $$(cat $(VENV)/torch-version)"; exit 1; }
	# pip check, less what the --no-deps packages declare but never import
	@broken=$$($(BIN)/pip check 2>&1 | grep -v -e '^No broken requirements found' \
		-e '^mini-dust3r [^ ]* requires [^ ]*, which is not installed\.$$'); \
		if [ -n "$$broken" ]; then echo "$$broken"; exit 1; fi
	touch $@

install: $(BIN)/.installed

run: install
	$(BIN)/snakemake --workflow-profile workflow/profiles/local --cores $(CORES)
	$(BIN)/snakemake --report results/report.html
	@echo "Results: results/claims.md and results/report.html"

# The whole default again on an independent seed set (every seed + 1000), in its own folder,
# then results/replication.md: each claim's verdict on both seed sets and on the pooled seeds
REPLICATE_DIR ?= replication/seeds_b
replicate: run
	$(BIN)/snakemake -s $(CURDIR)/Snakefile --workflow-profile workflow/profiles/local \
		--cores $(CORES) --directory $(REPLICATE_DIR) \
		--configfile $(CURDIR)/config/config.yaml $(CURDIR)/config/overlays/seeds_b.yaml
	$(BIN)/python -m repro.common.replication report results $(REPLICATE_DIR)/results \
		--output results/replication.md

test: install
	$(BIN)/python -m pytest

# The full-scale rehearsal: config/full.yaml with config/overlays/rehearsal.yaml, on the CPU,
# every download a stand-in in the real format served from 127.0.0.1 (tests/rehearsal/run.py);
# ends with $(REHEARSAL_DIR)/results/claims.md, the report and $(REHEARSAL_DIR)/record.json,
# from which tests/rehearsal/readiness.py writes the readiness table of docs/full_scale.md.
REHEARSAL_DIR ?= rehearsal
REHEARSAL_CORES ?= 2
rehearsal: install
	$(BIN)/python -m tests.rehearsal.run --workdir $(REHEARSAL_DIR) --cores $(REHEARSAL_CORES)
	$(BIN)/python -m tests.rehearsal.readiness $(REHEARSAL_DIR)/record.json docs/full_scale.md

# Mutation score of the modules listed in benchmarks/mutation.yaml, with their unit tests
# (slow, minutes per module: not part of `make test`). mutmut goes into its own folder on
# PYTHONPATH, not into the venv. One module or paper: make mutation MUTATION_ARGS=sbd
MUTMUT_DIR ?= .mutmut
MUTATION_ARGS ?=
mutation: install
	PYTHONPATH=$(abspath $(MUTMUT_DIR)) $(BIN)/python -c "import mutmut" 2>/dev/null \
		|| $(BIN)/pip install --quiet --target $(MUTMUT_DIR) mutmut==3.8.1
	PYTHONPATH=$(abspath $(MUTMUT_DIR)) $(BIN)/python benchmarks/mutation.py $(MUTATION_ARGS)

lint: install
	$(BIN)/ruff check src scripts tests benchmarks
	$(BIN)/snakefmt --check Snakefile rules
	$(BIN)/snakemake --lint

clean:
	rm -rf results .snakemake replication rehearsal
