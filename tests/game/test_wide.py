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
@pytest.mark.parametrize(("rows", "cols", "k"), [(15, 15, 5), (7, 7, 5), (9, 8, 4), (8, 8, 4),
                                             (3, 3, 3)])
def test_wins_threats_and_blocks_agree_with_the_rules(rows, cols, k):
    wide = pytest.importorskip("gym_tictactoe.game.wide")
    rules, rng = game.rules(rows, cols, k), np.random.default_rng(rows * cols)
    masks, _, _ = wide.tables(rules)
    rays, words = wide.rays(rules), masks.shape[1]
    assert words == (rows * cols + 63) // 64
    scratch, checked, lanes = np.zeros(words, np.uint64), 0, wide.lanes(rules)
    for _ in range(6):
        board, sides = np.zeros(rules.n_cells, np.int8), np.zeros((2, lanes[-1, 1]), np.uint64)
        for ply, cell in enumerate(rng.permutation(rules.n_cells)):
            mark = game.X if ply % 2 == 0 else game.O
            board[cell] = mark
            stones = wide.bits_of(np.flatnonzero(board == mark), words)
            won = bool((board[rules.line_array] == mark).all(axis=1).any())
            assert wide.wins_at(stones, int(cell), rays) == won
            assert wide.lane_wins(sides, ply % 2, int(cell), lanes) == won
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


@pytest.mark.parametrize(("rows", "cols", "k"), [(15, 15, 5), (6, 6, 4), (3, 3, 3), (2, 3, 1)])
def test_wins_on_boards_is_rules_wins_at(rows, cols, k):
    """The batched compiled win test (AlphaZero's search asks it) answers as ``Rules.wins_at``
    on boards with their -1 pad column, random stones and the last move's cell and mark."""
    wide = pytest.importorskip("gym_tictactoe.game.wide")
    rules, rng = game.rules(rows, cols, k), np.random.default_rng(rows + cols + k)
    boards = np.full((400, rules.n_cells + 1), -1, np.int8)
    boards[:, :-1] = rng.choice(3, (400, rules.n_cells), p=[0.3, 0.35, 0.35])
    cells = rng.integers(0, rules.n_cells, 400)
    marks = rng.integers(1, 3, 400).astype(np.int8)
    boards[np.arange(400), cells] = marks
    expected = rules.wins_at(boards, cells, marks)
    assert 0 < expected.sum() < 400 or k == 1
    assert (wide.wins_on_boards(boards, cells, marks, wide.rays(rules)) == expected).all()
