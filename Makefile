# The two commands: `make train` (the main job) and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: train test play bench clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e ".[all,dev]" -c constraints.txt
	touch $(STAMP)

train: $(STAMP)
	$(PY) train.py

play: $(STAMP)
	$(PY) -m gym_tictactoe play

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m pip install -e ".[bench]" -c constraints.txt
	$(PY) benchmarks/speed.py

clean:
	rm -rf $(VENV) runs .pytest_cache
