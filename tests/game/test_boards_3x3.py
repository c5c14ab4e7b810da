"""Tic-tac-toe byte for byte as before boards of any size: the digests that
``tests/data/record_3x3.py`` records (tables, solver, heuristic, game counts, and seeded games
against every 3x3 opponent in the single and the vector env), recomputed with the code under test
and compared with ``tests/data/3x3_digests.json``, recorded from commit c760140."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

import gym_tictactoe

DATA = Path(__file__).parents[1] / "data"
EXPECTED: dict[str, str] = json.loads((DATA / "3x3_digests.json").read_text())


def load_recorder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("record_3x3", DATA / "record_3x3.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RECORDER = load_recorder()


@pytest.fixture(scope="module")
def current() -> dict[str, str]:
    return RECORDER.digests()


def test_the_recorder_reads_the_package_under_test_and_the_fixture_covers_everything(current):
    assert RECORDER.gym_tictactoe is gym_tictactoe
    assert set(current) == set(EXPECTED)
    names = {name.split(" ")[1] for name in EXPECTED if name.startswith("single ")}
    assert names == {"random", "minimax", "heuristic", "montecarlo", "epsilon:epsilon=0.3",
                     "random+minimax*2"}
    assert all(f"vector {n} {m}" in EXPECTED for n in names - {"montecarlo"} for m in "XO")


def test_the_recorded_games_are_long_and_seed_dependent():
    trace = RECORDER.single_trace("minimax", "random", seed=0)
    ends = [step for step in trace if len(step) == 5 and step[2]]
    assert len(ends) == RECORDER.EPISODES and len(trace) > 3 * RECORDER.EPISODES
    other = RECORDER.single_trace("minimax", "random", seed=1)
    assert RECORDER.json_digest(trace) != RECORDER.json_digest(other)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_3x3_is_byte_identical_to_before_the_generalisation(current, name):
    assert current[name] == EXPECTED[name]
