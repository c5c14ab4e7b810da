"""The tables of the alpha-beta player's line-counting evaluation and threats, built once per
board in Python and read by the compiled search (:mod:`.negamax`).

A *line* is one of the board's straight windows of ``k`` cells (``game.win_lines``). The search
keeps one small int per line, ``a + b * (k + 1)`` for its ``a`` X and ``b`` O stones, so a move
touches only the lines through its cell (at most ``4 * k``) and:

* a line still open to one side (none of the other side's stones in it) is worth
  ``BASE ** (n - 1)`` to that side for its ``n >= 1`` stones; each side's sum over its open lines
  is kept up to date move by move, and the evaluation compares the two sums;
* a line holding ``k - 1`` stones of one side and none of the other is a *four* (gomoku's name):
  its empty cell wins on that side's next move;
* each empty cell's *gain* for each side, how much a stone there would raise the evaluation
  (plus ``FOUR_BONUS`` per four it makes), is kept up to date too, so ordering the moves, or
  evaluating every reply at the last ply, reads one number per cell.

Every table is indexed by a line's code: ``order[s, code]`` a stone of side ``s`` (0 X, 1 O)
on the line is worth that much to ``s`` for ordering; ``own_gain`` and ``other_loss`` change
the two open-line sums; ``gain_change[s, t, code]`` changes side ``t``'s gain of the line's
other cells when ``s`` puts a stone on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game

BASE = 6  # a line with one more stone is worth BASE times as much
TEMPO = 2  # the side about to move counts its own open lines this many times
# Added to a cell's ordering gain per four the move makes: above any sum of ordinary gains
# (< 2**45 even for k = 15) and, at most 4 k fours a cell, still inside 63 bits.
FOUR_BONUS = 1 << 50
ZOBRIST_SEED = 20261128  # the hash keys of the transposition table (two 64-bit keys a position)


@dataclass(frozen=True, eq=False)
class Geometry:
    """The fixed tables of one board spec (built once per spec by :func:`geometry`)."""

    rows: int
    cols: int
    k: int
    line_cells: npt.NDArray[np.int64]  # (lines, k) cells of every line
    cell_lines: tuple[tuple[int, ...], ...]  # the lines through each cell
    starts: npt.NDArray[np.int64]  # through[starts[c] : starts[c + 1]]: the lines through c
    through: npt.NDArray[np.int64]
    centre_distance: tuple[int, ...]  # squared distance to the centre, times 4 (whole numbers)
    weights: npt.NDArray[np.int64]  # weights[n]: an open line with n stones, n = 0..k
    order: npt.NDArray[np.int64]  # (2, codes), see the module's docstring
    own_gain: npt.NDArray[np.int64]  # (2, codes)
    other_loss: npt.NDArray[np.int64]  # (2, codes)
    gain_change: npt.NDArray[np.int64]  # (2 placing, 2 gaining, codes)
    steps: npt.NDArray[np.int64]  # a stone's step of a line's code: 1 for X, k + 1 for O
    fours: npt.NDArray[np.int64]  # the code of a four of X, of O
    nearness: npt.NDArray[np.int64]  # ordering's tie-break: nearer the centre, then lower cell
    zobrist: npt.NDArray[np.uint64]  # (2 keys, 2 sides, cells)
    symmetries: npt.NDArray[np.intp]  # (8 or 4, cells): the board's symmetries, board[perm]

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    def near(self, radius: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """For each cell, the cells within ``radius`` king moves of it, itself included, as
        (starts, cells): cell ``c``'s are ``cells[starts[c] : starts[c + 1]]``. Radius 0: none
        (then every empty cell is a candidate)."""
        return _near(self.rows, self.cols, radius)

    def move_classes(self, board: npt.NDArray[np.int8], moves: list[int]) -> dict[int, int]:
        """Each move's representative (its smallest equivalent cell) under the symmetries that
        leave ``board`` as it is: equivalent moves lead to equivalent positions. ``moves`` must
        be closed under those symmetries (all empty cells are; so are the cells that block)."""
        keep = self.symmetries[(board[self.symmetries] == board).all(axis=1)]
        # keep[s, i] is the cell that lands on i, so i is where keep[s, i] goes.
        images = np.argsort(keep, axis=1)
        return {move: int(images[:, move].min()) for move in moves}

    def centre_cells(self) -> list[int]:
        """The centre-most cells (1, 2 or 4 of them), increasing."""
        nearest = min(self.centre_distance)
        return [c for c, d in enumerate(self.centre_distance) if d == nearest]

    def four_cells(self, board: npt.NDArray[np.int8], mark: int) -> set[int]:
        """The empty cells where ``mark`` would complete a line on its next move."""
        on_line = board[self.line_cells]
        mine = (on_line == mark).sum(axis=1)
        four = (mine == self.k - 1) & ((on_line == game.SWAP[mark]).sum(axis=1) == 0)
        return {int(c) for c in self.line_cells[four][on_line[four] == game.EMPTY]}


@cache
def geometry(rows: int, cols: int, k: int) -> Geometry:
    """The tables of the ``rows`` x ``cols`` board with ``k`` in a row (arguments unchecked)."""
    lines = game.win_lines(rows, cols, k)
    cells = rows * cols
    through: list[list[int]] = [[] for _ in range(cells)]
    for index, line in enumerate(lines):
        for c in line:
            through[c].append(index)
    weights = np.array([0] + [BASE ** (n - 1) for n in range(1, k + 1)], dtype=np.int64)
    distance = tuple((2 * r - rows + 1) ** 2 + (2 * c - cols + 1) ** 2
                     for r in range(rows) for c in range(cols))
    order, own_gain, other_loss = _line_tables(k, [int(w) for w in weights])
    steps = np.array([1, k + 1], dtype=np.int64)
    return Geometry(
        rows, cols, k,
        line_cells=np.array(lines, dtype=np.int64).reshape(len(lines), k),
        cell_lines=tuple(tuple(t) for t in through),
        starts=np.cumsum([0] + [len(t) for t in through]).astype(np.int64),
        through=np.array([i for t in through for i in t], dtype=np.int64),
        centre_distance=distance,
        weights=weights, order=order, own_gain=own_gain, other_loss=other_loss,
        gain_change=_gain_changes(order, steps),
        steps=steps, fours=(k - 1) * steps,
        nearness=np.array([(1023 - d) << 8 | (255 - c) for c, d in enumerate(distance)],
                          dtype=np.int64),
        zobrist=np.random.default_rng(ZOBRIST_SEED).integers(
            0, 2**64, size=(2, 2, cells), dtype=np.uint64, endpoint=False),
        symmetries=_symmetries(rows, cols),
    )


def _line_tables(k: int, weights: list[int]) -> tuple[npt.NDArray[np.int64], ...]:
    """(order, own_gain, other_loss), each (2 sides, codes)."""
    size = k + 1
    order, own_gain, other_loss = (np.zeros((2, size * size), np.int64) for _ in range(3))
    for own in (0, 1):
        for code in range(size * size):
            counts = (code % size, code // size)
            mine, theirs = counts[own], counts[1 - own]
            gain = weights[mine + 1] - weights[mine] if theirs == 0 and mine < k else 0
            loss = weights[theirs] if mine == 0 else 0
            makes_four = theirs == 0 and mine == k - 2
            own_gain[own, code], other_loss[own, code] = gain, loss
            # The next side to move is the other one, so its lines weigh TEMPO times.
            order[own, code] = gain + TEMPO * loss + FOUR_BONUS * makes_four
    return order, own_gain, other_loss


def _gain_changes(order: npt.NDArray[np.int64], steps: npt.NDArray[np.int64]
                  ) -> npt.NDArray[np.int64]:
    size = order.shape[1]
    change = np.zeros((2, 2, size), np.int64)
    for side in (0, 1):
        step = int(steps[side])
        change[side, :, : size - step] = order[:, step:] - order[:, : size - step]
    return change


def _symmetries(rows: int, cols: int) -> npt.NDArray[np.intp]:
    """The square's 8 symmetries, or a rectangle's 4, as permutations: new = board[perm]."""
    grid = np.arange(rows * cols).reshape(rows, cols)
    if rows == cols:
        turns = [np.rot90(grid, k) for k in range(4)]
        images = turns + [t.T for t in turns]
    else:
        images = [grid, grid[::-1], grid[:, ::-1], grid[::-1, ::-1]]
    return np.array([image.ravel() for image in images], dtype=np.intp)


@cache
def _near(rows: int, cols: int, radius: int
          ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    near: list[list[int]] = []
    for r in range(rows if radius else 0):
        for c in range(cols):
            rs = range(max(0, r - radius), min(rows, r + radius + 1))
            cs = range(max(0, c - radius), min(cols, c + radius + 1))
            near.append([i * cols + j for i in rs for j in cs])
    starts = np.cumsum([0] + [len(n) for n in near] + [0] * (rows * cols - len(near)))
    return starts.astype(np.int64), np.array([c for n in near for c in n], dtype=np.int64)
