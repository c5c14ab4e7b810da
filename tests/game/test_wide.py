"""The multi-word bitboards (game/wide.py) against the rules: the win test through the last move,
the immediate threats and the forced block, on seeded random positions of boards from 3x3 to
15x15."""

from __future__ import annotations

import numpy as np
import pytest

from gym_tictactoe import game


def brute_threats(rules: game.Rules, board: np.ndarray, mark: int) -> set[int]:
    """The empty cells where ``mark`` would complete a line, by trying each."""
    found = set()
    for cell in np.flatnonzero(board == game.EMPTY):
        after = board.copy()
        after[cell] = mark
        if (after[rules.line_array] == mark).all(axis=1).any():
            found.add(int(cell))
    return found


@pytest.mark.slow
@pytest.mark.parametrize(("rows", "cols", "k"), [(15, 15, 5), (7, 7, 5), (9, 8, 4), (3, 3, 3)])
def test_wins_threats_and_blocks_agree_with_the_rules(rows, cols, k):
    wide = pytest.importorskip("gym_tictactoe.game.wide")
    rules, rng = game.rules(rows, cols, k), np.random.default_rng(rows * cols)
    masks, starts, through = wide.tables(rules)
    words = masks.shape[1]
    assert words == (rows * cols + 63) // 64
    scratch, checked = np.zeros(words, np.uint64), 0
    for _ in range(6):
        board = np.zeros(rules.n_cells, np.int8)
        for ply, cell in enumerate(rng.permutation(rules.n_cells)):
            mark = game.X if ply % 2 == 0 else game.O
            board[cell] = mark
            stones = wide.bits_of(np.flatnonzero(board == mark), words)
            won = bool((board[rules.line_array] == mark).all(axis=1).any())
            assert wide.wins_through(stones, int(cell), masks, starts, through) == won
            if won:
                break
            other = game.SWAP[mark]
            opp = wide.bits_of(np.flatnonzero(board == other), words)
            expected = brute_threats(rules, board, mark)
            assert wide.threats(stones, opp, masks, scratch) == len(expected)
            assert set(np.flatnonzero([wide.has(scratch, c) for c in range(rules.n_cells)])
                       .tolist()) == expected
            block = wide.forced_block(opp, stones, masks, scratch)
            assert block == (-1 if not expected else -2 if len(expected) > 1
                             else expected.pop())
            checked += 1
    assert checked > 20
