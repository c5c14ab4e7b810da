"""Proved answers through the front ends on boards of 17 to 64 cells: the solver's functions,
``facts``, the proof cache on disk and its trust rules."""

from __future__ import annotations

import json
import os
import warnings

import pytest

from gym_tictactoe import game
from gym_tictactoe.cli import main as cli_main
from gym_tictactoe.game import proofcache, proven, solver
from gym_tictactoe.game.proofcache import ProofCache

RULES = game.rules(4, 5, 4)


def _code(rules: game.Rules, x_cells: list[int], o_cells: list[int]) -> int:
    cells = [0] * rules.n_cells
    for c in x_cells:
        cells[c] = game.X
    for c in o_cells:
        cells[c] = game.O
    return rules.encode(cells)


def test_solver_functions_answer_on_a_proved_board_and_keep_the_value():
    assert solver.value(game.EMPTY_BOARD, RULES) == 0  # 4x5x4 is a draw
    assert ProofCache(RULES).get(game.EMPTY_BOARD) == 0  # kept on disk
    # X to move with three in a row on the top row (cells 0-2; 3 is free): it wins at once.
    code = _code(RULES, [0, 1, 2], [5, 6, 7])
    assert solver.value(code, RULES) == 1
    assert solver.value_keeping_moves(code, RULES) == [3]
    assert solver.best_moves(code, RULES) == [3]


def test_a_second_question_is_a_look_up(monkeypatch):
    solver.value(game.EMPTY_BOARD, RULES)

    def no_proof(*args, **kwargs):
        raise AssertionError("proved again")

    monkeypatch.setattr(proven.prover(RULES), "value", no_proof)
    assert solver.value(game.EMPTY_BOARD, RULES) == 0


def test_an_exhausted_budget_is_unknown_and_not_kept(monkeypatch):
    rules = game.rules(5, 5, 4)
    monkeypatch.setattr(proven.prover(rules), "budget", 10)
    code = _code(rules, [12], [])
    assert solver.value(code, rules) is None
    assert solver.value_keeping_moves(code, rules) is None
    assert ProofCache(rules).get(code) is None


def test_boards_over_64_cells_are_refused_in_one_line():
    with pytest.raises(ValueError, match=r"17 to 64 cells.*9x9x5 board has 81"):
        solver.value(game.EMPTY_BOARD, game.rules(9, 9, 5))


def test_facts_gives_the_proved_value(capsys):
    assert cli_main(["facts", "--board", "4x5x4"]) == 0
    assert "draw (proved)" in capsys.readouterr().out
    assert cli_main(["facts", "--board", "9x9x5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "17 to 64 cells" in err


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_TICTACTOE_CACHE", str(tmp_path))
    return tmp_path


def _fresh_cache() -> tuple[ProofCache, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache = ProofCache(RULES)
    return cache, [str(w.message) for w in caught]


def test_the_proof_cache_keeps_values_under_the_canonical_code(cache_dir):
    cache, said = _fresh_cache()
    assert not said
    corner, other_corner = _code(RULES, [0], []), _code(RULES, [19], [])
    cache.put(corner, -1)
    again, _ = _fresh_cache()
    assert again.get(other_corner) == -1  # a symmetric image: the same entry


@pytest.mark.parametrize("content", [b"{not json", b'{"format": "x"}',
                                     json.dumps({"format": proofcache.FORMAT, "board": "5x5x4",
                                                 "values": {}}).encode(),
                                     json.dumps({"format": proofcache.FORMAT, "board": "4x5x4",
                                                 "values": {"0": 2}}).encode()])
def test_a_corrupt_or_foreign_cache_is_ignored_with_a_warning_then_replaced(cache_dir, content):
    path = proofcache.proofs_path(RULES)
    path.write_bytes(content)
    cache, said = _fresh_cache()
    assert len(said) == 1 and "unusable" in said[0] and cache.values == {}
    cache.put(game.EMPTY_BOARD, 0)
    assert proofcache.read(path, RULES) == {0: 0}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_fifo_or_a_link_is_ignored_and_never_replaced(cache_dir):
    path = proofcache.proofs_path(RULES)
    os.mkfifo(path)
    cache, said = _fresh_cache()
    assert len(said) == 1 and "not a regular file" in said[0]
    cache.put(game.EMPTY_BOARD, 0)  # no write: the pipe stays
    assert path.is_fifo()
    path.unlink()
    target = cache_dir / "elsewhere.json"
    target.write_text("{}")
    path.symlink_to(target)
    cache, said = _fresh_cache()
    assert len(said) == 1 and "symbolic link" in said[0]
    cache.put(game.EMPTY_BOARD, 0)
    assert path.is_symlink() and target.read_text() == "{}"


def test_the_cache_is_bounded(cache_dir, monkeypatch):
    monkeypatch.setattr(proofcache, "MAX_ENTRIES", 1)
    cache, _ = _fresh_cache()
    cache.put(game.EMPTY_BOARD, 0)
    cache.put(_code(RULES, [0], []), -1)
    assert cache.values == {0: 0}
