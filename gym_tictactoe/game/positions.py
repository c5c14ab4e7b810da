"""The state of one game on any board, behind one interface; the board's ``Rules`` picks how.

:func:`new_position` (an empty board) and :func:`from_board` (any cells) give

- a :class:`TablePosition` on boards of at most ``game.TABLE_CELLS`` cells (3x3 among them): the
  position's code, and every rule one look-up in the board's tables;
- a :class:`StonePosition` on bigger boards (up to 15x15): the cells and a bit mask of each
  side's marks, so a move is checked only against the lines through it; its code is kept where
  the board is solved (at most ``game.SOLVED_CELLS`` cells), for the solver's look-ups.

Both answer alike: ``rules``, ``code`` (None where the board has no codes), ``mark`` (the side
to move), ``winner``, ``terminal``, ``cells`` (absolute, a view to copy before keeping) and
``grid`` (the same as ``(rows, cols)``); ``play(cell) -> bool``, ``undo(cell)``, ``clear()``,
``legal(cell)``, ``moves()``, ``mask()``, ``view(mark)`` and ``copy()``. The envs, the AEC
env, the command line's games and the players use this type and never ask which regime they are
in. A batch of positions is :mod:`.batch`'s ``Batch``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe import checks, game
from gym_tictactoe.game import basics


@cache
def views(rules: game.Rules) -> npt.NDArray[np.int8]:
    """(2, codes, cells): every code from each side's point of view (1 = own mark, 2 = the
    other's); tabled boards only."""
    cells = rules.tables.cells
    table = np.stack([cells, game.SWAP[cells]])
    table.setflags(write=False)
    return table


@cache
def step_lists(rules: game.Rules) -> tuple[list, list[bool], list[int]]:
    """Python-list copies of the tables a move reads on a tabled board: a list look-up returns a
    plain int or bool in a fraction of the time of a NumPy scalar look-up and its conversion.
    ``next[code][cell]`` is -1 when the move is illegal; only reachable codes get a row of their
    own (a game never reaches another), which keeps the cost for 3x3 to about a millisecond; the
    others share one row of -1."""
    tables = rules.tables
    nxt: list[list[int]] = [[-1] * rules.n_cells] * rules.n_codes
    rows = tables.next[rules.reachable].tolist()
    for code, row in zip(rules.reachable.tolist(), rows, strict=True):
        nxt[code] = row
    return nxt, tables.terminal.tolist(), tables.winner.tolist()


def as_cell(action: Any, n_cells: int) -> int | None:
    """The cell an action names, or None when it is not an integer 0..n_cells-1."""
    if type(action) is int:  # the common case first; bool is not an int action
        return action if 0 <= action < n_cells else None
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
        action = action.reshape(())[()]
    if not checks.is_integer(action):  # also a masked element: np.ma.masked is no integer
        return None
    return int(action) if 0 <= action < n_cells else None


class TablePosition:
    """A position of a tabled board: its code; each rule is a look-up. Mutable (a game's state)."""

    __slots__ = ("_grids", "_lists", "_next", "_tables", "_terminals", "_views", "_winners",
                 "code", "mark", "rules", "terminal", "winner")

    def __init__(self, rules: game.Rules, code: game.Code = game.EMPTY_BOARD) -> None:
        self.rules = rules
        # What every question reads, fetched once per game rather than per question.
        (self._next, self._terminals, self._winners, self._tables, self._views,
         self._lists, to_move, self._grids) = _table_parts(rules)
        self.code = code
        self.mark: int = to_move[code]
        self.winner: int = self._winners[code]
        self.terminal: bool = self._terminals[code]

    @property
    def cells(self) -> npt.NDArray[np.int8]:
        return self._tables.cells[self.code]

    @property
    def grid(self) -> npt.NDArray[np.int8]:
        return self._grids[self.code]

    def legal(self, cell: int) -> bool:
        """Whether ``cell`` (an int 0..n-1) is a legal move now."""
        return self._next[self.code][cell] >= 0

    def play(self, cell: int) -> bool:
        """The side to move marks ``cell`` (an int 0..n-1) if that is a legal move; whether it
        was (an illegal move changes nothing)."""
        code = self._next[self.code][cell]
        if code < 0:
            return False
        self.code, self.mark = code, 3 - self.mark  # X + O - mark: the other side
        self.winner, self.terminal = self._winners[code], self._terminals[code]
        return True

    def clear(self) -> None:
        """Back to the empty board, X to move (a new game in the same object)."""
        self.code, self.mark, self.winner, self.terminal = game.EMPTY_BOARD, game.X, 0, False

    def undo(self, cell: int) -> None:
        """Take back the last move, ``cell`` (no check: search's own bookkeeping)."""
        self.mark = 3 - self.mark
        self.code -= self.mark * self.rules.pow3_int[cell]
        self.winner, self.terminal = game.NO_WINNER, False

    def moves(self) -> Sequence[int]:
        """The legal moves, increasing (none once the game is over)."""
        return self._lists[self.code]

    def mask(self) -> npt.NDArray[np.int8]:
        """A new int8 array, 1 on the legal moves."""
        return self._tables.legal_mask[self.code].copy()

    def view(self, mark: int) -> npt.NDArray[np.int8]:
        """A new array of the board seen by ``mark``: 1 its own marks, 2 the other side's."""
        return self._views[mark][self.code].copy()

    def copy(self) -> TablePosition:
        twin = TablePosition(self.rules, self.code)
        twin.mark = self.mark
        return twin


class _LegalLists(dict):
    """Each code's legal moves as a tuple, listed on first use: indexing a tuple is much cheaper
    than a NumPy row's nonzero()."""

    def __init__(self, rules: game.Rules) -> None:
        super().__init__()
        self.legal_mask = rules.tables.legal_mask

    def __missing__(self, code: int) -> tuple[int, ...]:
        moves = self[code] = tuple(self.legal_mask[code].nonzero()[0].tolist())
        return moves


@cache
def _table_parts(rules: game.Rules) -> tuple:
    by_mark = (None, *views(rules))  # one array per mark: a 1-d index is the cheaper one
    tables = rules.tables
    return (*step_lists(rules), tables, by_mark, _LegalLists(rules), tables.to_move.tolist(),
            tables.cells.reshape(-1, *rules.shape))


class StonePosition:
    """A position of a board without tables: its cells and a bit mask of each side's marks, so
    that a move is checked only against the lines through it. Mutable (a game's state)."""

    def __init__(self, rules: game.Rules) -> None:
        self.rules = rules
        self.cells = np.zeros(rules.n_cells, dtype=np.int8)
        self.clear()

    def clear(self) -> None:
        """Back to the empty board, X to move (a new game in the same object)."""
        self.cells[:] = game.EMPTY
        self.bits = [0, 0, 0]  # by mark; index 0 unused
        # Kept where the solver can use it (at most 16 cells): a code of 225 cells is a 357-bit
        # int whose update would cost more than the rest of the move.
        self.code: int | None = game.EMPTY_BOARD if self.rules.solvable else None
        self.mark = game.X
        self.winner = game.NO_WINNER
        self.terminal = False

    @classmethod
    def at(cls, rules: game.Rules, cells: npt.NDArray[np.int8]) -> StonePosition:
        """The position with these absolute cells (0 empty, 1 X, 2 O)."""
        stones = cls(rules)
        stones.cells[:] = cells
        stones.bits = [0, *(sum(1 << int(c) for c in np.flatnonzero(cells == mark))
                            for mark in (game.X, game.O))]
        if stones.code is not None:
            stones.code = rules.encode(cells)
        stones.mark = int(basics._to_move(stones.cells[None])[0]) or game.X
        stones.winner = int(rules._cells_winner(stones.cells[None])[0])
        stones.terminal = stones.winner != game.NO_WINNER or bool(stones.cells.all())
        return stones

    @property
    def grid(self) -> npt.NDArray[np.int8]:
        return self.cells.reshape(self.rules.shape)

    def legal(self, cell: int) -> bool:
        return not self.terminal and self.cells[cell] == game.EMPTY

    def play(self, cell: int) -> bool:
        """As :meth:`TablePosition.play`."""
        if self.terminal or self.cells[cell] != game.EMPTY:
            return False
        mark = self.mark
        self.cells[cell] = mark
        bits = self.bits[mark] = self.bits[mark] | (1 << cell)
        if self.code is not None:
            self.code += mark * self.rules.pow3_int[cell]
        self.mark = 3 - mark
        for line in self.rules.line_masks_through[cell]:
            if bits & line == line:
                self.winner, self.terminal = mark, True
                return True
        if self.bits[1] | self.bits[2] == self.rules.full_mask:
            self.terminal = True
        return True

    def undo(self, cell: int) -> None:
        """Take back the last move, ``cell`` (no check: search's own bookkeeping)."""
        mark = self.mark = 3 - self.mark
        self.cells[cell] = game.EMPTY
        self.bits[mark] &= ~(1 << cell)
        if self.code is not None:
            self.code -= mark * self.rules.pow3_int[cell]
        self.winner, self.terminal = game.NO_WINNER, False

    def moves(self) -> Sequence[int]:
        """The legal moves, increasing (none once the game is over)."""
        if self.terminal:
            return ()
        rules = self.rules
        if rules.solvable:  # a table of every bit mask's cells beats NumPy's call overhead
            free = rules.full_mask & ~(self.bits[game.X] | self.bits[game.O])
            return cells_of_masks(rules.n_cells)[free]
        return np.flatnonzero(self.cells == game.EMPTY)

    def mask(self) -> npt.NDArray[np.int8]:
        if self.terminal:
            return np.zeros(self.rules.n_cells, dtype=np.int8)
        return (self.cells == game.EMPTY).view(np.int8)

    def view(self, mark: int) -> npt.NDArray[np.int8]:
        return self.cells.copy() if mark == game.X else game.SWAP[self.cells]

    def copy(self) -> StonePosition:
        twin = StonePosition.at(self.rules, self.cells)
        twin.mark = self.mark
        return twin


@cache
def cells_of_masks(n_cells: int) -> list[tuple[int, ...]]:
    """For every bit mask of ``n_cells`` bits (at most 2**16 of them), its set bits in order."""
    masks: list[tuple[int, ...]] = [()]
    for cell in range(n_cells):
        masks += [cells + (cell,) for cells in masks]
    return masks


Position = TablePosition | StonePosition


def new_position(rules: game.Rules) -> Position:
    """The empty board of ``rules``, X to move, in the board's representation."""
    return TablePosition(rules) if rules.tabled else StonePosition(rules)


def code_of(position: Position) -> game.Code:
    """The position's code, computed where the position keeps none (boards of over 16 cells)."""
    return position.rules.encode(position.cells) if position.code is None else position.code


def from_board(rules: game.Rules, board: Any, mark: int | None = None) -> Position:
    """The position with these absolute cells (0 empty, 1 X, 2 O; a ValueError otherwise);
    ``mark``, when given, is the side to move (a player's ``act`` is told whose move it is)."""
    cells = np.asarray(board)
    if cells.shape != (rules.n_cells,) or cells.dtype.kind not in "iu" \
            or np.ma.is_masked(board) or not ((cells >= 0) & (cells <= 2)).all():
        raise ValueError(f"a {rules.name} board is {rules.n_cells} cells of 0 (empty), 1 (X) or "
                         f"2 (O); got {board!r}")
    cells = cells.astype(np.int8)
    position = TablePosition(rules, rules.encode(cells)) if rules.tabled \
        else StonePosition.at(rules, cells)
    if mark is not None:
        position.mark = int(mark)
    return position
