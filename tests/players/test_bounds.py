"""What one reply or one reset may allocate (issue 16): Monte Carlo playouts in chunks and random
starts on big boards. Measured with tracemalloc on small cases, never timed."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from gym_tictactoe import game
from gym_tictactoe.game import starts
from gym_tictactoe.players import heuristic, montecarlo, opponents
from gym_tictactoe.players.montecarlo import (
    MonteCarloOpponent,
    playout_chunk,
    random_playouts_cells,
)


def peak_bytes(run) -> tuple[object, int]:
    """``run()``'s result and the most memory it held at once (NumPy reports to tracemalloc)."""
    tracemalloc.start()
    try:
        result = run()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_playout_chunks_fit_the_budget():
    for cells in (1, 16, 49, 225):
        chunk = playout_chunk(cells)
        assert chunk >= 1
        assert chunk * montecarlo.PLAYOUT_ROW_BYTES * (cells + 1) <= montecarlo.PLAYOUT_BYTES
    # a whole reply at the default 50 playouts is one chunk on every board
    assert playout_chunk(225) >= 225 * 50


def test_montecarlo_plays_its_playouts_in_chunks(monkeypatch):
    """10,000 playouts on 15x15 took 5.5 GB in one array; the rows are now played in chunks of at
    most PLAYOUT_BYTES. Here a 1 MB budget on 7x7: 14,700 playouts, about 8 MB unchunked."""
    player, board = MonteCarloOpponent(300, rows=7, cols=7, win_length=4), np.zeros(49, np.int8)
    monkeypatch.setattr(montecarlo, "PLAYOUT_BYTES", 2**20)
    move, peak = peak_bytes(lambda: player.act(board, 1, np.random.default_rng(0)))
    assert board[move] == 0 and peak < 2 * 2**20


@pytest.mark.parametrize(("rows", "cols", "k", "playouts"), [
    (4, 4, 3, 50), (5, 5, 4, 30), (7, 7, 4, 200), (15, 15, 5, 3)])
def test_a_reply_in_one_chunk_draws_as_one_array(rows, cols, k, playouts):
    """Seeded replies that fit in one chunk (every board at the default 50 playouts) draw what
    the playouts of all moves in one array draw."""
    player, mark = MonteCarloOpponent(playouts, rows=rows, cols=cols, win_length=k), 1
    board = np.zeros(rows * cols, np.int8)
    board[0], board[rows * cols // 2] = 1, 2
    moves = np.flatnonzero(board == 0)
    played = np.repeat(moves, playouts)
    starts = np.repeat(board[None], played.size, axis=0)
    starts[np.arange(played.size), played] = mark
    rng, expected = np.random.default_rng(7), np.random.default_rng(7)
    winners = random_playouts_cells(starts, played, mark, expected, player.rules)
    assert player.act(board, mark, rng) == player._best(moves, winners, mark, expected)


def test_playouts_on_boards_without_tables_play_to_the_end():
    """Each playout finishes its game: on 3x3 after X in the centre about 2 in 3 random games are
    won (X about 0.7, O 0.2, draws 0.1). Before, a precedence slip (``~won & n > 1``) stopped
    every playout after one move, so nearly all of them counted as draws."""
    rules = game.rules(3, 3, 3)
    boards = np.zeros((4000, 9), np.int8)
    boards[:, 4] = game.X
    winners = random_playouts_cells(boards, np.full(4000, 4), game.X, np.random.default_rng(0),
                                    rules)
    shares = np.bincount(winners, minlength=3) / winners.size
    assert shares[0] < 0.25 and shares[game.X] > 0.5 and shares[game.O] > 0.1


def test_playouts_are_bounded_per_reply_on_big_boards():
    """A reply plays ``playouts`` games after each empty cell: 10,000 a move would take about
    ten minutes on 15x15, so the limit there is 2**24 // 225**2 = 331."""
    assert MonteCarloOpponent(331, rows=15, cols=15, win_length=5).playouts == 331
    assert MonteCarloOpponent(10_000, rows=6, cols=6, win_length=4).playouts == 10_000
    with pytest.raises(ValueError, match=r"playouts must be an integer from 1 to 331 on the "
                                         r"15x15x5 board \(a reply plays that many games"):
        opponents.parse_opponent("montecarlo:playouts=10000", game.rules(15, 15, 5))


def test_the_heuristic_on_many_big_boards_works_in_bounded_chunks():
    """The vector env's heuristic answers for a whole batch; on 15x15 its temporaries took about
    22 KB a board at once (16,384 boards a chunk). Chunks now hold at most about 32 MB."""
    rules = game.rules(15, 15, 5)
    cells = starts.random_play(rules, np.random.default_rng(0), 2048)
    marks = starts.side_to_move(cells)
    chosen, peak = peak_bytes(lambda: heuristic.candidates(rules, cells, marks))
    # random starts are unfinished games: each has a candidate, and only on empty cells
    assert chosen.any(axis=1).all() and not (chosen & (cells != 0)).any()
    assert peak < heuristic._CHUNK_BYTES + 4 * 2**20


def reference_random_play(rules: game.Rules, rng: np.random.Generator, size: int) -> np.ndarray:
    """The move-by-move version random_play replaced: each move checked for a win in turn."""
    n = rules.n_cells
    order = np.argsort(rng.random((size, n)), axis=1)
    lengths = rng.integers(0, n, size=size)
    board = np.zeros((size, n + 1), dtype=np.int8)
    board[:, -1] = -1
    going = np.arange(size)
    for ply in range(int(lengths.max(initial=0))):
        going = going[lengths[going] > ply]
        cells, mark = order[going, ply], game.X if ply % 2 == 0 else game.O
        trial = board[going]
        trial[np.arange(going.size), cells] = mark
        wins = rules.wins_at(trial, cells, np.full(going.size, mark, dtype=np.int8))
        board[going[~wins], cells[~wins]] = mark
        going = going[~wins]
    return board[:, :-1]


@pytest.mark.parametrize(("rows", "cols", "k"), [(15, 15, 5), (5, 4, 4), (7, 7, 4), (5, 5, 1),
                                                 (6, 3, 3), (1, 15, 15)])
def test_random_starts_are_those_of_the_move_by_move_version(rows, cols, k, monkeypatch):
    """Finishing boards from the ranks of their cells gives the same boards from the same draws,
    in one chunk or in several."""
    rules = game.rules(rows, cols, k)
    expected = reference_random_play(rules, np.random.default_rng(5), 700)
    assert np.array_equal(starts.random_play(rules, np.random.default_rng(5), 700), expected)
    monkeypatch.setattr(starts, "START_CHUNK_BYTES", 50_000)
    assert np.array_equal(starts.random_play(rules, np.random.default_rng(5), 700), expected)


def test_random_starts_on_big_boards_work_in_bounded_chunks():
    """1 M random starts on 15x15 took 5.7 GB (float64 noise and int64 orders for every board at
    once); now a chunk's temporaries stay within START_CHUNK_BYTES, beside the boards."""
    rules, size = game.rules(15, 15, 5), 20_000
    boards, peak = peak_bytes(lambda: starts.random_play(rules, np.random.default_rng(0), size))
    assert boards.shape == (size, 225) and boards.dtype == np.int8
    assert peak < starts.START_CHUNK_BYTES + 2 * boards.nbytes
