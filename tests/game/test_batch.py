"""A batch of positions (``game.batch``): both representations answer alike, and batch players
are handed the batch itself, never a raw array."""

from __future__ import annotations

import numpy as np
import pytest

from gym_tictactoe import game
from gym_tictactoe.envs.vector import vectorize_opponent
from gym_tictactoe.game.batch import CellBoards, CodeBoards, new_batch
from gym_tictactoe.players.vector_opponents import TablePlayer

T3 = game.TICTACTOE


def _played(rules: game.Rules, moves: list[list[int]]):
    """A batch with ``moves[b]`` played on board b, by the batch's own ``play``."""
    batch = new_batch(rules, len(moves), np.full(len(moves), game.X, dtype=np.int8))
    boards = np.arange(len(moves))
    for step in range(max(len(m) for m in moves)):
        going = boards[[step < len(m) for m in moves]]
        batch.play(going, np.array([moves[b][step] for b in going], dtype=np.intp))
    return batch


@pytest.mark.parametrize("size", [(3, 3, 3), (5, 5, 4)])
def test_at_reads_the_cells_on_both_representations(size: tuple[int, int, int]) -> None:
    rules = game.rules(*size)
    batch = _played(rules, [[0, 4, 8], [4], []])
    assert isinstance(batch, CodeBoards if rules.tabled else CellBoards)
    boards = np.array([0, 0, 1, 2, 0])
    cells = np.array([0, 4, 4, 4, 1], dtype=np.intp)
    assert batch.at(boards, cells).tolist() == [game.X, game.O, game.X, game.EMPTY, game.EMPTY]
    assert batch.at(boards, cells).tolist() == batch.cells(boards)[np.arange(5), cells].tolist()


def test_a_table_player_answers_the_batch_as_it_answers_its_codes() -> None:
    batch = _played(T3, [[0], [4, 0], [], [1, 2, 3]])
    player = vectorize_opponent("random", 4, T3)
    assert isinstance(player, TablePlayer)
    boards = np.array([3, 0, 2])
    through_batch = player.reply(batch, boards, np.random.default_rng(7))
    on_codes = player.on_codes(batch.codes[boards], np.random.default_rng(7))
    assert through_batch.tolist() == on_codes.tolist()
    assert all(batch.at(boards, through_batch.astype(np.intp)) == game.EMPTY)


def test_a_table_player_refuses_a_batch_without_codes() -> None:
    player = vectorize_opponent("random", 1, T3)
    batch = new_batch(game.rules(5, 5, 4), 1, np.full(1, game.X, dtype=np.int8))
    assert batch.codes is None
    with pytest.raises(ValueError, match="the 5x5x4 board has none"):
        player.reply(batch, np.arange(1), np.random.default_rng(0))
