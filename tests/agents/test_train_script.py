"""The console script ``gym-tictactoe-train`` is train.py's command line under its own name, so an
installed package trains too (read from pyproject.toml, called in-process on --help and on a
usage error: nothing trains)."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script():
    """The function pyproject.toml's [project.scripts] names (read as text: no tomllib on 3.10)."""
    scripts = (ROOT / "pyproject.toml").read_text().split("[project.scripts]")[1].split("\n[")[0]
    entry = re.search(r'^gym-tictactoe-train = "([\w.]+):(\w+)"', scripts, re.M)
    assert entry is not None, scripts
    return getattr(importlib.import_module(entry[1]), entry[2])


def test_the_console_script_shows_train_py_flags_under_its_own_name(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["gym-tictactoe-train", "--help"])
    with pytest.raises(SystemExit) as stop:
        _script()()
    out = capsys.readouterr().out
    assert stop.value.code == 0 and out.startswith("usage: gym-tictactoe-train ")
    assert "--algo {q,maskable-ppo,ppo,dqn,alphazero}" in out and "--resume RUN" in out


def test_the_console_script_refuses_a_bad_flag_as_train_py_does(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["gym-tictactoe-train", "--algo", "q", "--timesteps", "5"])
    with pytest.raises(SystemExit) as stop:
        _script()()
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(
        "gym-tictactoe-train: error: --timesteps does not apply to --algo q")


def test_train_py_is_the_same_command_line():
    import train
    from agents.run import cli

    assert train.main is cli.main and train.parse_args is cli.parse_args
    assert len((ROOT / "train.py").read_text().splitlines()) <= 15
