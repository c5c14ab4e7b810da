# The two commands: `make train` (the main job) and `make test`. Both create .venv on first use.
# `make train` installs only what the tabular agent needs: the core (gymnasium, numpy) and the
# `train` extra (tqdm, matplotlib), no torch. `make test` installs everything, torch included,
# and the `examples` extra (TorchRL, tyro, Tianshou), whose scripts and clients the tests run on
# a tiny budget, and the `distributed` extra (ray), for the test of AlphaZero's self-play in Ray
# actors.
#
# TORCH_INDEX: a package index to search for torch besides the default one. The constraints file
# pins torch's version, not its build: from the default index, Linux gets the CUDA build and
# about 18 NVIDIA packages (several GB). PyTorch's CPU index has the CPU build, which pip then
# prefers (2.13.0+cpu sorts above 2.13.0):
#     make test TORCH_INDEX=https://download.pytorch.org/whl/cpu
# It is empty by default because the development machine keeps the CPU wheel locally.
PYTHON ?= python3
TORCH_INDEX ?=
VENV := .venv
PY := $(VENV)/bin/python
CORE := $(VENV)/.installed-core
ALL := $(VENV)/.installed-all
# -q: a fresh install otherwise prints about 150 lines; warnings and errors still show. pip 26
# shows the build backend's warnings for a local project, and setuptools warns on every editable
# install of a flat layout that a folder named like a package may shadow it: ours are the
# packages. -W drops that one notice, by its opening words.
PIP_INSTALL = $(VENV)/bin/python -W "ignore:Editable installation" -m pip install -q \
	-c constraints.txt \
	$(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX))

.PHONY: train test test-fast docs play bench clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip

# pip is quiet (-q): the echo lines say what comes and about how much, so a long silence is
# expected; the sizes are those of the development machine's .venv (du -sh).
$(CORE): pyproject.toml constraints.txt | $(VENV)/bin/python
	@echo "Installing gym-tictactoe and its train extra into $(VENV) (gymnasium, numpy, numba," \
		"tqdm, matplotlib; about 0.4 GB, no torch). pip is quiet meanwhile."
	$(PIP_INSTALL) -e ".[train]"
	touch $@

$(ALL): pyproject.toml constraints.txt | $(VENV)/bin/python
	@echo "Installing gym-tictactoe with the extras all, dev, docs, examples and distributed" \
		"into $(VENV): torch, ray, TorchRL, Tianshou, OpenSpiel, MkDocs and more, about 2.2 GB." \
		"pip is quiet meanwhile: minutes when the wheels are downloaded."
	$(PIP_INSTALL) -e ".[all,dev,docs,examples,distributed]"
	touch $@

train: $(CORE)
	$(PY) train.py

# A Ctrl-C at the prompt reaches make too; the trap keeps make from reporting the game's
# exit status 130 as an error (the game says "Interrupted." itself).
play: $(CORE)
	@trap 'exit 0' INT; $(PY) -m gym_tictactoe play

test: $(ALL)
	$(VENV)/bin/ruff check .
	$(PY) -m mypy
	$(PY) -m pytest
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

# The unit tier alone, for while you work: no test marked slow (training, proofs, sweeps of every
# board) or e2e (train.py, make, mkdocs and the examples run as processes: all of tests/e2e/).
# `make test` runs them all.
test-fast: $(ALL)
	$(PY) -m pytest -m "not slow and not e2e"

# The documentation site, into site/ (`make test` builds it too, strictly: a broken link or
# reference fails the build).
docs: $(ALL)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

bench: $(ALL)
	$(PIP_INSTALL) -e ".[bench]"
	$(PY) -m benchmarks speed --require-peers

clean:
	rm -rf $(VENV) runs site .pytest_cache .mypy_cache
