"""The board as tree search sees it: bit masks, the cells that win at once, random playouts.

A search state is a tuple ``(mine, theirs, my_wins, their_wins, near)`` of bit masks (bit ``c``
is cell ``c``, row-major): the stones of the side to move and of the other side, the empty cells
where each side would complete a line, and the cells a move is looked for in (every cell on
boards of at most ``FULL_WIDTH_CELLS`` cells; elsewhere those within ``radius`` king moves of a
stone, as the alpha-beta player does). Python ints are values, so a child is a new small tuple:
no board array is copied per simulation. A move only changes the lines through its cell, so the
winning cells of a child are updated from its parent's on those lines alone.

Random playouts (uniformly random moves to the end of the game, seed 002's) run in Python on
boards of at most ``PYTHON_PLAYOUT_CELLS`` cells. On bigger boards a playout is one random order
of the empty cells, taken in turn by the two sides: the winner is the side whose line is
complete first in that order, which NumPy finds over every line at once. Both give the same
distribution of results as playing random moves one by one.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.game.positions import cells_of_masks
from gym_tictactoe.players.search import FULL_WIDTH_CELLS

State = tuple[int, int, int, int, int]
PYTHON_PLAYOUT_CELLS = 36  # measured: beyond 6 x 6 the NumPy playout is the faster
_FLOATS = 4096  # uniform draws taken from the generator at once (one call instead of thousands)


class Stream:
    """Uniform floats from one ``numpy.random.Generator``, drawn a block at a time: a Python
    playout takes one per move, and asking NumPy for each would cost more than the move."""

    __slots__ = ("_floats", "_next", "rng")

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng, self._floats, self._next = rng, [], 0

    def take(self, n: int) -> list[float]:
        if self._next + n > len(self._floats):
            self._floats = self.rng.random(max(n, _FLOATS)).tolist()
            self._next = 0
        start = self._next
        self._next += n
        return self._floats[start:self._next]


class SearchBoard:
    """One board's bit-mask tables and the operations of a tree search on its states."""

    def __init__(self, rules: game.Rules, radius: int = 1) -> None:
        self.rules, self.n_cells = rules, rules.n_cells
        self.full = rules.full_mask
        self.through = rules.line_masks_through
        self.line_array = rules.line_array
        self.narrow = self.n_cells > FULL_WIDTH_CELLS
        self.near = _near_masks(rules.rows, rules.cols, radius)
        self.centre = sum(1 << c for c in _centre_cells(rules.rows, rules.cols))
        self.python_playouts = self.n_cells <= PYTHON_PLAYOUT_CELLS
        self._bytes = (self.n_cells + 7) // 8
        self._line_masks = [sum(1 << c for c in line) for line in rules.lines]

    def root(self, cells: npt.NDArray[np.int8], mark: int) -> State:
        """The state of an unfinished game with these absolute cells, ``mark`` to move."""
        return self.root_bits(_bits(cells == mark), _bits((cells != mark) & (cells != game.EMPTY)))

    def root_bits(self, mine: int, theirs: int) -> State:
        """The state of an unfinished game from the bit masks of the side to move's stones and
        the other side's."""
        if mine | theirs == self.full or any(
                side & line == line for side in (mine, theirs) for line in self._line_masks):
            raise ValueError("the game is over on this board: there is no move to search")
        near = self.full
        if self.narrow:
            near = 0
            for cell in self.cells(mine | theirs):
                near |= self.near[cell]
        return (mine, theirs, self._wins(mine, theirs), self._wins(theirs, mine), near)

    def child(self, state: State, cell: int) -> State:
        """The state after the side to move plays ``cell`` (empty, and not a winning cell)."""
        mine, theirs, my_wins, their_wins, near = state
        bit = 1 << cell
        mine |= bit
        wins = my_wins & ~bit
        # Only lines through the new stone can have become one stone short of a line.
        for line in self.through[cell]:
            rest = line & ~mine
            if rest & (rest - 1) == 0 and not rest & theirs:
                wins |= rest
        return (theirs, mine, their_wins & ~bit, wins, near | self.near[cell] if self.narrow
                else near)

    def moves(self, state: State) -> list[int]:
        """The candidate moves of a state: every empty cell, or on boards of more than
        ``FULL_WIDTH_CELLS`` cells those near a stone (the centre on an empty board)."""
        mine, theirs, _, _, near = state
        free = self.full & ~(mine | theirs)
        if self.narrow:
            free &= near if mine | theirs else self.centre
        return self.cells(free)

    def full_board(self, state: State) -> bool:
        return state[0] | state[1] == self.full

    def view(self, state: State) -> npt.NDArray[np.int8]:
        """The board from the side to move's point of view: 1 its stones, 2 the other's (what a
        network evaluator reads)."""
        return (self.unpack(state[0]) + 2 * self.unpack(state[1])).astype(np.int8)

    def cells(self, mask: int) -> list[int]:
        """The cells of a bit mask, increasing."""
        if self.n_cells <= 16:
            return list(cells_of_masks(self.n_cells)[mask])
        found = []
        while mask:
            low = mask & -mask
            found.append(low.bit_length() - 1)
            mask ^= low
        return found

    def unpack(self, mask: int) -> npt.NDArray[np.uint8]:
        raw = np.frombuffer(mask.to_bytes(self._bytes, "little"), dtype=np.uint8)
        return np.unpackbits(raw, bitorder="little")[: self.n_cells]

    def playout(self, state: State, stream: Stream) -> int:
        """The result of one uniformly random game from ``state`` for the side to move there:
        1 win, -1 loss, 0 draw."""
        if self.python_playouts:
            return self._python_playout(state, stream)
        return self._numpy_playout(state, stream.rng)

    def _python_playout(self, state: State, stream: Stream) -> int:
        sides = [state[0], state[1]]
        free = self.cells(self.full & ~(sides[0] | sides[1]))
        n, side, through = len(free), 0, self.through
        for draw in stream.take(n):
            pick = int(draw * n)
            n -= 1
            cell = free[pick]
            free[pick] = free[n]  # the cell drawn leaves the pool
            stones = sides[side] = sides[side] | (1 << cell)
            for line in through[cell]:
                if stones & line == line:
                    return 1 - 2 * side
            side ^= 1
        return 0

    def _numpy_playout(self, state: State, rng: np.random.Generator) -> int:
        owner = self.unpack(state[0]) + 2 * self.unpack(state[1])
        order = rng.permutation(np.flatnonzero(owner == 0))
        turn = np.zeros(self.n_cells, dtype=np.int32)  # stones already there: turn 0
        turn[order] = np.arange(1, order.size + 1)
        owner[order[0::2]] = 1  # the side to move takes the 1st, 3rd, ... cells of the order
        owner[order[1::2]] = 2
        on_line = owner[self.line_array]
        whole = (on_line == on_line[:, :1]).all(axis=1)
        done = turn[self.line_array].max(axis=1)  # when the line's last cell was taken
        never = order.size + 1
        first = [int(np.where(whole & (on_line[:, 0] == side), done, never).min())
                 for side in (1, 2)]
        return 0 if first[0] == first[1] else (1 if first[0] < first[1] else -1)

    def _wins(self, mine: int, theirs: int) -> int:
        """The empty cells where ``mine`` would complete a line (from scratch: the root only)."""
        wins = 0
        for mask in self._line_masks:
            rest = mask & ~mine
            if rest and rest & (rest - 1) == 0 and not rest & theirs:
                wins |= rest
        return wins


def _bits(where: Any) -> int:
    return sum(1 << int(c) for c in np.flatnonzero(where))


@cache
def _near_masks(rows: int, cols: int, radius: int) -> tuple[int, ...]:
    """For each cell, the bit mask of the cells within ``radius`` king moves of it."""
    masks = []
    for r in range(rows):
        for c in range(cols):
            masks.append(sum(1 << (i * cols + j)
                             for i in range(max(0, r - radius), min(rows, r + radius + 1))
                             for j in range(max(0, c - radius), min(cols, c + radius + 1))))
    return tuple(masks)


def _centre_cells(rows: int, cols: int) -> list[int]:
    rs = {(rows - 1) // 2, rows // 2}
    cs = {(cols - 1) // 2, cols // 2}
    return sorted(r * cols + c for r in rs for c in cs)
