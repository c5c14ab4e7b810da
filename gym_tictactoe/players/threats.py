"""Lines, threats and the line-counting evaluation of an m,n,k-game, for :mod:`.search`.

A *line* is one of the board's straight windows of ``k`` cells (``game.win_lines``). A search
position keeps one small int per line, ``a + b * (k + 1)`` for its ``a`` X and ``b`` O stones, so a
move touches only the lines through its cell (at most ``4 * k``) and:

* a line still open to one side (none of the other side's stones in it) is worth
  ``BASE ** (n - 1)`` to that side for its ``n >= 1`` stones; each side's sum over its open lines
  is kept up to date move by move, and the evaluation compares the two sums;
* a line holding ``k - 1`` stones of one side and none of the other is a *four* (gomoku's name):
  its empty cell wins on that side's next move. Each side's fours are a set of lines, so "can I
  win now" and "must I block, and where" are set look-ups, not scans.

* each empty cell's *gain*, how much a stone there would raise the evaluation for each side, is
  kept up to date too (a stone changes only the gains of the cells on its lines), so ordering
  the moves, or evaluating every reply at the last ply, reads one number per cell.

The occupied cells are also one Python int (bit ``c`` for cell ``c``, row-major), so a four's
empty cell is one mask operation away.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game

BASE = 6  # a line with one more stone is worth BASE times as much
TEMPO = 2  # the side about to move counts its own open lines this many times
# Added to a cell's ordering gain per four the move makes: above any sum of ordinary gains
# (< 2**45 even for k = 15), and the two sides' gains of a cell share one int, X's in the low bits.
FOUR_BONUS = 1 << 50
GAIN_SHIFT = 64
LOW = (1 << GAIN_SHIFT) - 1


@dataclass(frozen=True, eq=False)
class Geometry:
    """The fixed tables of one board spec (built once per spec by :func:`geometry`)."""

    rows: int
    cols: int
    k: int
    line_cells: npt.NDArray[np.intp]  # (lines, k) cells of every line
    line_masks: tuple[int, ...]  # every line as a bit mask of its cells
    lines: tuple[tuple[int, ...], ...]  # the cells of every line
    cell_lines: tuple[tuple[int, ...], ...]  # the lines through each cell
    cell_lines_padded: npt.NDArray[np.intp]  # (cells, 4k): cell_lines, then len(lines)
    # For each cell, (line, the line's other cells) of each line through it: a stone changes
    # the gains of the other cells only (its own is not read while it is occupied).
    line_neighbours: tuple[tuple[tuple[int, tuple[int, ...]], ...], ...]
    centre_distance: tuple[int, ...]  # squared distance to the centre, times 4 (whole numbers)
    weights: tuple[int, ...]  # weights[n]: an open line with n stones, n = 0..k
    sides: tuple[SideTables, SideTables]  # for X (0) and O (1) placing a stone
    # What place() and undo() read, by side and by whether gains are kept (if not, the gains
    # change by a table of zeros): step, four, other_four, sums_change, gains_change.
    placing: tuple[tuple[tuple, tuple], tuple[tuple, tuple]]
    symmetries: npt.NDArray[np.intp]  # (8 or 4, cells): the board's symmetries, board[perm]

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    def near_cells(self, radius: int) -> tuple[frozenset[int], ...]:
        """For each cell, the cells within ``radius`` steps (king moves) of it, itself included."""
        return _near_cells(self.rows, self.cols, radius)

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


@dataclass(frozen=True, eq=False)
class SideTables:
    """What placing one stone of a side does to a line, indexed by the line's code."""

    step: int  # the code's increase: 1 for X, k + 1 for O
    four: int  # the code of this side's four: k - 1 own stones, none of the other's
    other_four: int  # the code of the other side's four
    order_gain: tuple[int, ...]  # the move's worth to this side, for ordering (see gains)
    sums_change: tuple[int, ...]  # change of the packed open-line sums (see LinePosition.sums)
    gains_change: tuple[int, ...]  # change of the packed gains of each cell of the line


@cache
def geometry(rows: int, cols: int, k: int) -> Geometry:
    """The tables of the ``rows`` x ``cols`` board with ``k`` in a row (arguments unchecked)."""
    lines = game.win_lines(rows, cols, k)
    cells = rows * cols
    through: list[list[int]] = [[] for _ in range(cells)]
    for index, line in enumerate(lines):
        for c in line:
            through[c].append(index)
    weights = tuple([0] + [BASE ** (n - 1) for n in range(1, k + 1)])
    distance = tuple((2 * r - rows + 1) ** 2 + (2 * c - cols + 1) ** 2
                     for r in range(rows) for c in range(cols))
    sides = _with_gain_changes((_side_tables(k, weights, 0), _side_tables(k, weights, 1)))
    padded = np.full((cells, 4 * k), len(lines), dtype=np.intp)
    for c, t in enumerate(through):
        padded[c, : len(t)] = t
    return Geometry(
        rows, cols, k,
        line_cells=np.array(lines, dtype=np.intp).reshape(len(lines), k),
        line_masks=tuple(sum(1 << c for c in line) for line in lines),
        lines=lines,
        cell_lines=tuple(tuple(t) for t in through),
        cell_lines_padded=padded,
        line_neighbours=tuple(tuple((i, tuple(x for x in lines[i] if x != c)) for i in t)
                              for c, t in enumerate(through)),
        centre_distance=distance,
        weights=weights,
        sides=sides,
        placing=tuple(tuple((t.step, t.four, t.other_four, t.sums_change, changes)
                            for changes in ((0,) * (k + 1) ** 2, t.gains_change))
                      for t in sides),
        symmetries=_symmetries(rows, cols),
    )


def _side_tables(k: int, weights: tuple[int, ...], own: int) -> SideTables:
    size = k + 1
    steps = (1, size)
    codes = range(size * size)
    own_gain, other_loss, order_gain = [], [], []
    for code in codes:
        counts = (code % size, code // size)
        mine, theirs = counts[own], counts[1 - own]
        own_gain.append(weights[mine + 1] - weights[mine] if theirs == 0 and mine < k else 0)
        other_loss.append(weights[theirs] if mine == 0 else 0)
        makes_four = theirs == 0 and mine == k - 2
        # The next side to move is the other one, so its lines weigh TEMPO times (see static()).
        order_gain.append(own_gain[-1] + TEMPO * other_loss[-1] + FOUR_BONUS * makes_four)
    own_shift, other_shift = (0, GAIN_SHIFT) if own == 0 else (GAIN_SHIFT, 0)
    sums_change = [(g << own_shift) - (loss << other_shift)
                   for g, loss in zip(own_gain, other_loss, strict=True)]
    return SideTables(steps[own], (k - 1) * steps[own], (k - 1) * steps[1 - own],
                      tuple(order_gain), tuple(sums_change), ())


def _with_gain_changes(sides: tuple[SideTables, SideTables]) -> tuple[SideTables, SideTables]:
    """Fill in ``gains_change``, which needs both sides' ordering gains."""
    both = [x + (o << GAIN_SHIFT)
            for x, o in zip(sides[0].order_gain, sides[1].order_gain, strict=True)]
    size = len(both)
    return tuple(replace(side, gains_change=tuple(both[code + side.step] - both[code]
                                                  if code + side.step < size else 0
                                                  for code in range(size)))
                 for side in sides)


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
def _near_cells(rows: int, cols: int, radius: int) -> tuple[frozenset[int], ...]:
    near = []
    for r in range(rows):
        for c in range(cols):
            rs = range(max(0, r - radius), min(rows, r + radius + 1))
            cs = range(max(0, c - radius), min(cols, c + radius + 1))
            near.append(frozenset(i * cols + j for i in rs for j in cs))
    return tuple(near)


class LinePosition:
    """The scratch position of one search, changed in place by :meth:`place` and :meth:`undo`.

    Positions elsewhere in the package are immutable codes; a search makes and unmakes many
    thousands of moves, so it keeps one mutable position of its own, built from the board for that
    search and dropped after it. Besides the line codes, fours and open-line sums it keeps, move
    by move, what a search asks at every node: each cell's ordering gain for both sides (a stone
    changes only the gains of the cells on its lines) and the candidate cells, the empty cells
    within ``radius`` of a stone. ``side`` is the side to move: 0 for X, 1 for O.
    """

    __slots__ = ("_added", "code", "covered", "empties", "fours", "gains", "geo", "key", "near",
                 "occupied", "side", "stones", "sums")

    def __init__(self, geo: Geometry, board: npt.NDArray[np.int8], radius: int) -> None:
        on_line = board[geo.line_cells]
        xs, os = (on_line == game.X).sum(axis=1), (on_line == game.O).sum(axis=1)
        codes = xs + (geo.k + 1) * os
        weights = np.array(geo.weights, dtype=np.int64)
        self.geo = geo
        self.code = codes.tolist()
        # Both sides' sums in one int, X's in the low bits: one addition per line per move.
        x_sum, o_sum = int(weights[xs][os == 0].sum()), int(weights[os][xs == 0].sum())
        self.sums = x_sum + (o_sum << GAIN_SHIFT)
        self.fours = (set(np.flatnonzero((xs == geo.k - 1) & (os == 0)).tolist()),
                      set(np.flatnonzero((os == geo.k - 1) & (xs == 0)).tolist()))
        stones = np.flatnonzero(board).tolist()
        self.stones = set(stones)
        self.occupied = sum(1 << c for c in stones)
        self.key = sum(int(board[c]) << (2 * c) for c in stones)
        self.empties = geo.cells - len(stones)
        self.side = int(len(stones) % 2)
        self.gains = _cell_gains(geo, codes)
        self.near = geo.near_cells(radius)
        # The cells within radius of a stone, stones included, and what each move added to it.
        self.covered = set().union(*(self.near[c] for c in stones))
        self._added: list[frozenset[int]] = []

    def place(self, cell: int, gains: bool = True) -> None:
        """The side to move puts a stone on ``cell`` (an empty cell that does not win).

        ``gains=False`` leaves the cells' gains as they were, for a position that will only be
        evaluated: the matching :meth:`undo` must say the same. The gain of an occupied cell is
        left stale (and restored by undo): nothing asks for it.
        """
        side = self.side
        step, four, other_four, sums_change, gains_change = self.geo.placing[side][gains]
        code, mine, theirs = self.code, self.fours[side], self.fours[1 - side]
        cell_gains, sums = self.gains, self.sums
        for line, others in self.geo.line_neighbours[cell]:
            v = code[line]
            after = code[line] = v + step
            sums += sums_change[v]
            if v == other_four:
                theirs.discard(line)
            elif after == four:
                mine.add(line)
            change = gains_change[v]
            if change:
                for c in others:
                    cell_gains[c] += change
        self.sums = sums
        self.occupied |= 1 << cell
        self.key += (side + 1) << (2 * cell)
        self.empties -= 1
        self.side = 1 - side
        self.stones.add(cell)
        added = self.near[cell] - self.covered
        self.covered |= added
        self._added.append(added)

    def undo(self, cell: int, gains: bool = True) -> None:
        """Take back :meth:`place` (``cell`` must be the last stone placed; same ``gains``)."""
        side = self.side = 1 - self.side
        step, four, other_four, sums_change, gains_change = self.geo.placing[side][gains]
        code, mine, theirs = self.code, self.fours[side], self.fours[1 - side]
        cell_gains, sums = self.gains, self.sums
        for line, others in self.geo.line_neighbours[cell]:
            after = code[line]
            v = code[line] = after - step
            sums -= sums_change[v]
            if v == other_four:
                theirs.add(line)
            elif after == four:
                mine.discard(line)
            change = gains_change[v]
            if change:
                for c in others:
                    cell_gains[c] -= change
        self.sums = sums
        self.occupied ^= 1 << cell
        self.key -= (side + 1) << (2 * cell)
        self.empties += 1
        self.stones.discard(cell)
        self.covered -= self._added.pop()

    def four_cells(self, side: int) -> set[int]:
        """The cells where ``side`` would complete a line on its next move."""
        masks, free = self.geo.line_masks, ~self.occupied
        return {(masks[line] & free).bit_length() - 1 for line in self.fours[side]}

    def free_cells(self) -> list[int]:
        return [c for c in range(self.geo.cells) if not self.occupied >> c & 1]

    def candidates(self) -> set[int] | list[int]:
        """The empty cells within ``radius`` of a stone, or every empty cell if there are none."""
        return self.covered - self.stones or self.free_cells()

    def static(self) -> int:
        """The evaluation for the side to move: its open lines (TEMPO times, since it moves
        next) against the other side's."""
        x, o = self.sums & LOW, self.sums >> GAIN_SHIFT
        return TEMPO * o - x if self.side else TEMPO * x - o

    def base(self) -> int:
        """The side to move's view of the evaluation after its move, before the move's gain:
        a quiet move's child is worth ``base() + gain`` to the side moving (see order_gain)."""
        x, o = self.sums & LOW, self.sums >> GAIN_SHIFT
        return o - TEMPO * x if self.side else x - TEMPO * o


def _cell_gains(geo: Geometry, codes: npt.NDArray[np.int64]) -> list[int]:
    """Every cell's ordering gain for X and for O, as one int: X's + (O's << GAIN_SHIFT)."""
    per_cell = []
    for side in geo.sides:
        # One more line, worth 0, for the padding of cell_lines_padded.
        by_line = np.append(np.array(side.order_gain, dtype=np.int64)[codes], 0)
        per_cell.append(by_line[geo.cell_lines_padded].sum(axis=1).tolist())
    return [x + (o << GAIN_SHIFT) for x, o in zip(*per_cell, strict=True)]
