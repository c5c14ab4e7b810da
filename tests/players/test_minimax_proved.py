"""The ``minimax`` opponent on boards of 17 to 64 cells: the opening book (built once, cached,
checked) and the proved replies beyond it. Books are kept a ply or two deep here so that each
test builds its book in about a second."""

from __future__ import annotations

import json
import os
import warnings

import pytest

from gym_tictactoe import game
from gym_tictactoe.evaluation import UniformPolicy, play_games
from gym_tictactoe.game import book, proven
from gym_tictactoe.players.opponents import parse_opponent

R454, R554 = game.rules(4, 5, 4), game.rules(5, 5, 4)


@pytest.fixture
def small_books(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_TICTACTOE_CACHE", str(tmp_path))
    monkeypatch.setattr(book, "PLIES", {"4x5x4": 2, "5x5x4": 1})
    book.book.cache_clear()
    proven.proof_cache.cache_clear()
    yield tmp_path
    book.book.cache_clear()
    proven.proof_cache.cache_clear()


def _load(rules: game.Rules) -> tuple[dict[int, int], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = book.load_or_build(rules)
    return values, [str(w.message) for w in caught]


@pytest.mark.slow
def test_the_book_round_trips_and_holds_every_canonical_position(small_books):
    values, said = _load(R454)
    assert not said
    expected = sum(len(layer) for layer in book.layers(R454, 2))
    assert len(values) == expected and values[game.EMPTY_BOARD] == 0  # 4x5x4 is a draw
    assert book.read(book.book_path(R454), R454) == (2, values)
    again, said = _load(R454)
    assert again == values and not said


def test_building_a_book_is_said_once_through_logging(small_books, caplog):
    # The first minimax reply on 5x5x4 builds its book for a minute or more: say so, once.
    with caplog.at_level("WARNING", logger="gym_tictactoe"):
        _load(R454)
        _load(R454)
    said = [r.getMessage() for r in caplog.records if "opening book" in r.getMessage()]
    assert len(said) == 1 and "building the 4x5x4 opening book once" in said[0]


@pytest.mark.parametrize("content", [b"{not json", b'{"format": "x"}',
                                     json.dumps({"format": book.FORMAT, "board": "4x5x4",
                                                 "plies": 2, "values": {"0": 5}}).encode(),
                                     json.dumps({"format": book.FORMAT, "board": "4x5x4",
                                                 "plies": 1, "values": {"0": 0}}).encode()])
def test_a_corrupt_or_stale_book_warns_and_is_rebuilt(small_books, content):
    path = book.book_path(R454)
    path.write_bytes(content)
    values, said = _load(R454)
    assert len(said) == 1 and "rebuilding" in said[0]
    assert book.read(path, R454) == (2, values) and len(values) > 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_fifo_at_the_book_path_is_never_read_or_replaced(small_books):
    path = book.book_path(R454)
    os.mkfifo(path)
    values, said = _load(R454)
    assert len(said) == 1 and "without saving" in said[0] and values[game.EMPTY_BOARD] == 0
    assert path.is_fifo()


def test_best_of_keeps_only_what_is_proved():
    assert book.best_of({0: 0, 1: -1, 2: 0}) == [0, 2]
    assert book.best_of({0: None, 1: 1}) == [1]  # a proved win: nothing does better
    assert book.best_of({0: 0, 1: None}) is None  # the unknown move might win


@pytest.mark.parametrize(("rules", "seats", "games"), [(R454, "XO", 3), (R554, "X", 2)])
def test_minimax_never_loses_against_random(small_books, rules, seats, games):
    for seat in seats:  # the policy is random; the opponent is minimax
        record = play_games(UniformPolicy(seed=1), "minimax", games, seat, seed=3,
                            **rules.kwargs)
        assert record.wins == 0 and record.games == games


def test_the_spec_parser_takes_minimax_up_to_64_cells_and_refuses_beyond(small_books):
    player = parse_opponent("minimax:deterministic=true", R554)
    assert player.proved.fallbacks == 0 and player.solution is None
    with pytest.raises(ValueError, match=r"at most 64 cells.*use 'alphabeta'"):
        parse_opponent("minimax", game.rules(9, 9, 5))


def test_an_unproved_reply_falls_back_to_alphabeta_and_is_counted(small_books, monkeypatch):
    import numpy as np

    from gym_tictactoe.game.positions import from_board

    player = parse_opponent("minimax", R554)
    player.proved.budget = 1  # every proof beyond the book runs out
    cells = np.zeros(R554.n_cells, dtype=np.int8)
    cells[[0, 12]] = game.X, game.O  # two stones: beyond a one-ply book
    move = player.move(from_board(R554, cells, game.X), np.random.default_rng(0))
    assert cells[move] == game.EMPTY and player.proved.fallbacks == 1


def test_a_reply_within_the_book_asks_no_proof(small_books, monkeypatch):
    book.book(R454)  # built (2 plies): the moves of positions of at most 1 stone are in it

    def no_proof(rules):
        raise AssertionError("a proof was asked for inside the book")

    monkeypatch.setattr(proven, "prover", no_proof)
    one_stone = R454.play(game.EMPTY_BOARD, 7)
    assert book.best_of(book.move_values(one_stone, R454)) is not None
    with pytest.raises(AssertionError, match="inside the book"):
        book.move_values(R454.play(one_stone, 8), R454)  # two stones: beyond it
