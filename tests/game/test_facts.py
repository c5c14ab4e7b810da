"""``facts`` on a board of more than 12 cells (issue 19): it says what it is doing the first time,
keeps its numbers beside the solution, and later answers from them without solving or counting
anything; a damaged numbers file is recounted with a warning, never trusted."""

from __future__ import annotations

import json
import os
import warnings

import pytest

from gym_tictactoe import cli, game
from gym_tictactoe.game import facts as facts_module
from gym_tictactoe.game import solver

BOARD = game.rules(1, 13, 4)  # 13 cells: the smallest board with a disk cache, solved in ~1 s
EXPECTED = {  # as the walk before the one-pass rewrite counted them (bit for bit)
    "board": "1 x 13, 4 in a row wins",
    "value of the empty board, perfect play": "draw in 13 plies",
    "distinct games (move sequences)": "5,267,858,688",
}


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_TICTACTOE_CACHE", str(tmp_path))
    return tmp_path


def fail(*args, **kwargs):
    raise AssertionError("facts solved or counted again instead of reading its cache")


def test_the_first_run_says_so_and_later_runs_read_the_numbers(cache_dir, monkeypatch):
    said = []
    first = dict(facts_module.facts(BOARD, said.append))
    assert [line.split(" (")[0] for line in said] == [
        "solving the 1x13x4 board", "counting the positions and games of the 1x13x4 board"]
    assert {key: first[key] for key in EXPECTED} == EXPECTED
    games = game.count_games(BOARD)
    assert first["  won by X / won by O / drawn"] == (
        f"{games['X']:,} / {games['O']:,} / {games['draw']:,}")
    assert (cache_dir / "facts-1x13x4.json").exists()
    for name in ("count_games", "random_play_outcome"):
        monkeypatch.setattr(game, name, fail)
    monkeypatch.setattr(solver, "solve", fail)
    said.clear()
    assert dict(facts_module.facts(BOARD, said.append)) == first and said == []


def test_with_the_solution_cached_only_the_counting_is_announced(cache_dir):
    facts_module.cache.load_or_build(BOARD, solver.build)  # as an earlier solve leaves it
    said = []
    facts_module.facts(BOARD, said.append)
    assert len(said) == 1 and said[0].startswith("counting the positions and games")


DAMAGE = [
    ("not json {", "Expecting value"),
    (json.dumps([1, 2]), "not a gym-tictactoe facts v1 file for the 1x13x4 board"),
    ("board", "not a gym-tictactoe facts v1 file for the 1x13x4 board"),
    ("extra key", "its keys are"),
    ("negative", "counts are not all non-negative integers"),
    ("bool", "counts are not all non-negative integers"),
    ("missing game count", "counts are not all non-negative integers"),
    ("probability", "random-play probabilities are not three floats in [0, 1]"),
    ("value", "its game value 2 is not -1, 0 or 1"),
    ("huge", "more than the 4,096 a facts file can need"),
    ("[" * 2000 + "]" * 2000, "it nests deeper than a facts file does"),
]


def damaged(good: dict, how: str) -> str:
    data = json.loads(json.dumps(good))
    if how == "board":
        data["board"] = "4x4x3"
    elif how == "extra key":
        data["note"] = 1
    elif how == "negative":
        data["terminal"] = -5
    elif how == "bool":
        data["plies"] = True
    elif how == "missing game count":
        del data["games"]["draw"]
    elif how == "probability":
        data["random"]["X"] = 1.5
    elif how == "value":
        data["value"] = 2
    elif how == "huge":
        data["pad"] = "x" * 10_000
    else:
        return how
    return json.dumps(data)


@pytest.mark.parametrize(("how", "reason"), DAMAGE, ids=[how[:20] for how, _ in DAMAGE])
def test_a_damaged_numbers_file_is_recounted_with_a_warning(cache_dir, how, reason):
    first = facts_module.facts(BOARD)
    path = cache_dir / "facts-1x13x4.json"
    path.write_text(damaged(json.loads(path.read_text()), how))
    with pytest.warns(UserWarning, match="recounting the 1x13x4 facts: the cache file .*"
                                         "is unusable") as caught:
        assert facts_module.facts(BOARD) == first
    assert reason in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # rewritten: read back without a word
        assert facts_module.facts(BOARD) == first


@pytest.mark.parametrize(("thing", "warning"), [
    ("folder", "counting the 1x13x4 facts without the cache: .* is a folder"),
    ("pipe", "counting the 1x13x4 facts without the cache: .* named pipe"),
    ("dangling link", "could not keep the 1x13x4 facts .* refusing to write through it"),
])
def test_anything_but_a_file_there_is_left_alone_and_the_numbers_counted(cache_dir, thing,
                                                                         warning):
    path = cache_dir / "facts-1x13x4.json"
    if thing == "folder":
        path.mkdir()
    elif thing == "pipe":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no named pipes here")
        os.mkfifo(path)  # reading it would block until a writer came
    else:
        path.symlink_to(cache_dir / "nowhere.json")
    with pytest.warns(UserWarning, match=warning):
        lines = dict(facts_module.facts(BOARD))
    assert lines["board"] == EXPECTED["board"]
    assert os.path.lexists(path) and not path.is_file()  # never replaced


def test_a_read_only_cache_warns_and_still_answers(cache_dir, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(facts_module.files, "atomic_path", refuse)
    with pytest.warns(UserWarning, match="could not keep the 1x13x4 facts in .*read-only"):
        lines = dict(facts_module.facts(BOARD))
    assert lines["board"] == EXPECTED["board"]


def test_the_command_prints_progress_on_stderr_only_the_first_time(cache_dir, capsys):
    assert cli.main(["facts", "--board", "1x13x4"]) == 0
    first = capsys.readouterr()
    assert "solving the 1x13x4 board" in first.err and "counting" in first.err
    assert "5,267,858,688" in first.out and "solving" not in first.out
    assert cli.main(["facts", "--board", "1x13x4"]) == 0
    again = capsys.readouterr()
    assert again.err == "" and again.out == first.out


def test_tabled_boards_are_computed_without_a_file_or_a_word(cache_dir):
    said = []
    lines = dict(facts_module.facts(game.TICTACTOE, said.append))
    assert lines["positions up to symmetry"] == "765" and said == []
    assert list(cache_dir.iterdir()) == []
