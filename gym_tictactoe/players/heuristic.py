"""Seed 003's rule-based player on any board: for a position, the moves of the first rule that
applies, for the side to move.

Rules in order: win now; block the opponent's win; make a double threat (a move that leaves two
lines one mark short of a win); take a cell where the opponent could make one; the board's centre
cell(s); on tic-tac-toe-like boards (square, a win spans a side) a corner opposite one of the
opponent's, then any corner; last, the empty cells nearest the centre. On 3x3 this is exactly
seed 003's list (the last rule leaves only sides there).

``candidates`` answers for arrays of boards; ``table`` holds the answer for every code of a
tabled board, so the player is a look-up at step time there.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.game import Rules

# Boards per chunk: the (boards, lines, length) temporaries take about this many bytes at most
# (about 9 KB a board on 15x15).
_CHUNK_BYTES = 32 * 2**20


@cache
def _geometry(rules: Rules) -> tuple[npt.NDArray, ...]:
    """Per board: line membership (lines x cells), centre cells, centre distance, corners and
    the corner opposite each corner (-1 elsewhere)."""
    # float32, so that counting lines through cells is a BLAS product (NumPy multiplies integer
    # matrices without BLAS, 2 ms a board on 15x15); the counts, at most 4 * k, stay exact.
    membership = np.zeros((len(rules.lines), rules.n_cells), dtype=np.float32)
    for line, cells in enumerate(rules.lines):
        membership[line, list(cells)] = 1
    row, col = np.divmod(np.arange(rules.n_cells), rules.cols)
    distance = (row - (rules.rows - 1) / 2) ** 2 + (col - (rules.cols - 1) / 2) ** 2
    centre = distance == distance.min()
    last_row, last_col = rules.rows - 1, rules.cols - 1
    corners = [0, last_col, last_row * rules.cols, rules.n_cells - 1]
    opposite = np.full(rules.n_cells, -1)
    if rules.rows == rules.cols == rules.win_length:  # corners sit on both diagonals
        opposite[corners] = corners[::-1]
    return membership, centre, distance, opposite


def _rules(rules: Rules, cells: npt.NDArray[np.int8], me: npt.NDArray) -> list[npt.NDArray]:
    membership, centre, distance, opposite = _geometry(rules)
    them = game.SWAP[me]
    on_line = cells[:, rules.line_array]
    mine = (on_line == me[:, None, None]).sum(axis=2, dtype=np.int8)
    theirs = (on_line == them[:, None, None]).sum(axis=2, dtype=np.int8)
    free = (on_line == game.EMPTY).sum(axis=2, dtype=np.int8)
    k = rules.win_length

    def through(condition: npt.NDArray[np.bool_]) -> npt.NDArray[np.float32]:
        """For each board and cell, how many lines satisfying ``condition`` pass it."""
        return condition.astype(np.float32) @ membership

    is_corner = opposite >= 0
    facing = np.zeros(cells.shape, dtype=bool)  # a corner across from the opponent's
    facing[:, is_corner] = cells[:, opposite[is_corner]] == them[:, None]
    nearest = np.broadcast_to(distance, cells.shape)
    return [
        through((mine == k - 1) & (free == 1)) > 0,
        through((theirs == k - 1) & (free == 1)) > 0,
        through((mine == k - 2) & (free == 2)) >= 2,
        through((theirs == k - 2) & (free == 2)) >= 2,
        np.broadcast_to(centre, cells.shape),
        facing,
        np.broadcast_to(is_corner, cells.shape),
        nearest == np.where(cells == game.EMPTY, nearest, np.inf).min(axis=1, keepdims=True),
    ]


def candidates(rules: Rules, cells: npt.NDArray[np.int8],
               marks: npt.NDArray[np.int8]) -> npt.NDArray[np.bool_]:
    """(N, cells) mask of the player's moves on boards ``cells`` (N, cells) for the side
    ``marks`` (N,) to move; empty rows for finished boards."""
    cells = np.asarray(cells, dtype=np.int8).reshape(-1, rules.n_cells)
    marks = np.broadcast_to(np.asarray(marks, dtype=np.int8), (len(cells),))
    chosen = np.zeros(cells.shape, dtype=bool)
    per_board = len(rules.lines) * (rules.win_length + 16) + 32 * rules.n_cells
    chunk = max(1, _CHUNK_BYTES // per_board)
    for start in range(0, len(cells), chunk):
        part = slice(start, start + chunk)
        chosen[part] = _first_rule(rules, cells[part], marks[part])
    return chosen


def _first_rule(rules: Rules, cells, marks) -> npt.NDArray[np.bool_]:
    empty = cells == game.EMPTY
    winner = rules._cells_winner(cells)
    chosen = np.zeros(cells.shape, dtype=bool)
    undecided = empty.any(axis=1) & (winner == game.NO_WINNER)
    for rule in _rules(rules, cells, marks):
        moves = rule & empty
        applies = undecided & moves.any(axis=1)
        chosen[applies] = moves[applies]
        undecided &= ~applies
    return chosen


@cache
def table(rules: Rules) -> npt.NDArray[np.bool_]:
    """(codes, cells) mask of the player's candidate moves for every code of a tabled board;
    empty for finished games."""
    tables = rules.tables
    chosen = candidates(rules, tables.cells, tables.to_move)
    chosen.setflags(write=False)
    return chosen
