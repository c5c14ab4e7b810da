"""The positions of a batch of boards, in the two forms of one engine (``game.Rules``): a
:data:`Batch`, as :mod:`.positions`' ``Position`` is one board's. The vector env keeps one and
hands it to its opponent's batch player with the indices of the boards that need a reply.

- :class:`CodeBoards` (boards of at most ``game.TABLE_CELLS`` cells, 3x3 among them): one int64
  code per board, and every rule of the game is one look-up over the whole batch in the board's
  tables.
- :class:`CellBoards` (bigger boards, up to 15x15): a row of cells per board plus its code where
  codes fit (solvable boards, for the solver's look-ups); a move is checked for a win only on the
  lines through it.

Both offer the same methods to the vector env and its opponents, named as a single position's
(:mod:`gym_tictactoe.game.positions`) with the boards as the first argument: ``clear``, ``place``,
``legal``, ``play``, ``terminal``, ``winner``, ``mask`` (and ``mask_bool``), ``view``, ``cells``,
``at``, ``moves``; ``codes`` where the board has codes (None in a ``CellBoards`` of a board too
big for them).

On boards of at most ``BIT_CELLS`` cells (4x4 among them) ``CellBoards`` also keeps each mark's
cells as the bits of an int64 per board, and a move wins when one of the few lines through its
cell is all set: a handful of operations over the batch, not a gather per cell of every ray.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.game.positions import views

Boards = npt.NDArray[np.intp]  # indices of boards in the batch
BIT_CELLS = 62  # bit 62 is never a cell there, so a line padded with it never completes


class CodeBoards:
    """A batch of positions of a tabled board, as codes."""

    def __init__(self, rules: game.Rules, num_envs: int) -> None:
        tables = self.tables = rules.tables
        self.rules, self.n = rules, rules.n_cells
        # np.take on flat or row-major tables gathers several times faster than fancy indexing.
        self._next = tables.next.ravel().astype(np.int64)
        self._legal = tables.legal_mask.ravel()
        self._legal_bool = tables.legal_mask.astype(bool)
        self._view_rows = views(rules).reshape(2 * rules.n_codes, self.n)  # (agent-1)*codes+code
        self._view_offset = np.array([0, 0, rules.n_codes])  # by agent mark
        self.codes = np.zeros(num_envs, dtype=np.int64)

    def clear(self, boards: Boards) -> None:
        self.codes[boards] = game.EMPTY_BOARD

    def place(self, boards: Boards, cells: npt.NDArray[np.int8],
              codes: npt.NDArray[np.int64]) -> None:
        """Unfinished positions on ``boards`` (random starts): their cells and codes."""
        self.codes[boards] = codes

    def legal(self, cells: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        """Whether each board's cell (0..n-1) is a legal move there now."""
        return self._legal.take(self.codes * self.n + cells) == 1

    def play(self, boards: Boards, cells: npt.ArrayLike) -> None:
        """The side to move on each of ``boards`` marks its cell (legal moves only)."""
        self.codes[boards] = self._next.take(self.codes[boards] * self.n + cells)

    def terminal(self, boards: Boards | None = None) -> npt.NDArray[np.bool_]:
        codes = self.codes if boards is None else self.codes.take(boards)
        return self.tables.terminal.take(codes)

    def winner(self) -> npt.NDArray[np.int8]:
        return self.tables.winner.take(self.codes)

    def mask(self) -> npt.NDArray[np.int8]:
        return self.tables.legal_mask.take(self.codes, axis=0)  # zeros at finished positions

    def mask_bool(self) -> npt.NDArray[np.bool_]:
        return self._legal_bool.take(self.codes, axis=0)

    def view(self, agents: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
        return self._view_rows.take(self.codes + self._view_offset.take(agents), axis=0)

    def cells(self, boards: Boards | None = None) -> npt.NDArray[np.int8]:
        codes = self.codes if boards is None else self.codes[boards]
        return self.tables.cells.take(codes, axis=0)

    def at(self, boards: Boards, cells: npt.NDArray[np.intp]) -> npt.NDArray[np.int8]:
        """The mark (0 empty, 1 X, 2 O) on each of ``boards`` at its cell."""
        return self.tables.cells[self.codes[boards], cells]

    def moves(self, board: int) -> list[int]:
        return self.rules.legal_moves(int(self.codes[board]))


class CellBoards:
    """A batch of positions of a board without tables, as rows of cells."""

    def __init__(self, rules: game.Rules, num_envs: int,
                 agents: npt.NDArray[np.int8] | None = None) -> None:
        self.rules, self.n = rules, rules.n_cells
        # One more column, always -1, that the padding of rules.rays points at.
        self.board = np.zeros((num_envs, self.n + 1), dtype=np.int8)
        self.board[:, -1] = -1
        # Each board as its agent sees it, kept up move by move: copying it is cheaper than
        # swapping marks on every board at every step.
        self.agents = np.full(num_envs, game.X, np.int8) if agents is None else agents
        self._view = np.zeros((num_envs, self.n), dtype=np.int8)
        self.codes = np.zeros(num_envs, dtype=np.int64) if rules.solvable else None
        self._winner = np.zeros(num_envs, dtype=np.int8)
        self._marks = np.zeros(num_envs, dtype=np.int64)  # marks on each board
        # Bits of each mark's cells, rows indexed by mark (X 1, O 2), where they fit an int64.
        self._bits = np.zeros((3, num_envs), dtype=np.int64) if self.n <= BIT_CELLS else None

    def clear(self, boards: Boards) -> None:
        self.board[boards, :-1] = game.EMPTY
        self._view[boards] = game.EMPTY
        self._winner[boards] = game.NO_WINNER
        self._marks[boards] = 0
        if self.codes is not None:
            self.codes[boards] = game.EMPTY_BOARD
        if self._bits is not None:
            self._bits[:, boards] = 0

    def place(self, boards: Boards, cells: npt.NDArray[np.int8],
              codes: npt.NDArray[np.int64] | None) -> None:
        """Unfinished positions on ``boards`` (random starts), seen by the agents already set
        for them: their absolute cells, and their codes where the board keeps codes."""
        self.board[boards, :-1] = cells
        own = cells == self.agents[boards, None]
        # int8 scalars: Python ints would make two int64 (boards, cells) temporaries
        one, two = np.int8(1), np.int8(2)
        self._view[boards] = np.where(cells == game.EMPTY, np.int8(0), np.where(own, one, two))
        self._winner[boards] = game.NO_WINNER
        self._marks[boards] = (cells != game.EMPTY).sum(axis=1)
        if self.codes is not None:
            self.codes[boards] = codes if codes is not None else cells @ self.rules.pow3
        if self._bits is not None:
            powers = np.left_shift(1, np.arange(self.n, dtype=np.int64))
            for mark in (game.X, game.O):
                self._bits[mark, boards] = (cells == mark).astype(np.int64) @ powers

    def legal(self, cells: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        free = self.board[np.arange(len(cells)), cells] == game.EMPTY
        return free & ~self.terminal()

    def play(self, boards: Boards, cells: npt.ArrayLike) -> None:
        cells = np.asarray(cells, dtype=np.intp)
        marks = np.where(self._marks[boards] % 2 == 0, game.X, game.O).astype(np.int8)
        self.board[boards, cells] = marks
        self._view[boards, cells] = np.where(marks == self.agents[boards], 1, 2)
        self._marks[boards] += 1
        if self.codes is not None:
            self.codes[boards] += marks * self.rules.pow3[cells]
        if self._bits is None:
            won = self.rules.wins_at(self.board[boards], cells, marks)
        else:
            won = self._wins(boards, cells, marks)
        self._winner[boards[won]] = marks[won]

    def _wins(self, boards: Boards, cells: npt.NDArray[np.intp],
              marks: npt.NDArray[np.int8]) -> npt.NDArray[np.bool_]:
        """Sets the bit of each move, and whether the mover now owns a line through it."""
        bits = self._bits[marks, boards] | np.left_shift(1, cells, dtype=np.int64)
        self._bits[marks, boards] = bits
        won = np.zeros(len(cells), dtype=bool)
        for lines in _lines_through(self.rules):  # each cell's j-th line, for j = 0, 1, ...
            line = lines.take(cells)
            won |= (bits & line) == line
        return won

    def terminal(self, boards: Boards | None = None) -> npt.NDArray[np.bool_]:
        winner, marks = (self._winner, self._marks) if boards is None else (
            self._winner[boards], self._marks[boards])
        return (winner != game.NO_WINNER) | (marks == self.n)

    def winner(self) -> npt.NDArray[np.int8]:
        return self._winner.copy()

    def mask(self) -> npt.NDArray[np.int8]:
        masks = (self.board[:, :-1] == game.EMPTY).astype(np.int8)
        masks[self.terminal()] = 0
        return masks

    def mask_bool(self) -> npt.NDArray[np.bool_]:
        return self.mask().astype(bool)

    def view(self, agents: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
        return self._view.copy()  # kept for self.agents, which is the env's ``agents``

    def cells(self, boards: Boards | None = None) -> npt.NDArray[np.int8]:
        return self.board[:, :-1].copy() if boards is None else self.board[boards, :-1]

    def at(self, boards: Boards, cells: npt.NDArray[np.intp]) -> npt.NDArray[np.int8]:
        return self.board[boards, cells]

    def moves(self, board: int) -> list[int]:
        if self.terminal()[board]:
            return []
        return np.flatnonzero(self.board[board, :-1] == game.EMPTY).tolist()


@cache
def _lines_through(rules: game.Rules) -> npt.NDArray[np.int64]:
    """(most lines through a cell, cells): the j-th line through each cell as a bit mask, cells
    on fewer lines padded with an impossible line (bit 62, no cell)."""
    masks = np.left_shift(1, rules.line_array.astype(np.int64)).sum(axis=1)
    members = np.zeros((len(masks), rules.n_cells), dtype=bool)
    members[np.arange(len(masks))[:, None], rules.line_array] = True
    depth = max(1, int(members.sum(axis=0).max()))
    table = np.full((depth, rules.n_cells), 1 << BIT_CELLS, dtype=np.int64)
    for cell in range(rules.n_cells):
        through = masks[members[:, cell]]
        table[: len(through), cell] = through
    table.setflags(write=False)
    return table


Batch = CodeBoards | CellBoards


def new_batch(rules: game.Rules, num_envs: int, agents: npt.NDArray[np.int8]) -> Batch:
    """``num_envs`` empty boards of ``rules`` in the board's representation; ``agents`` is the
    env's array of the agent's mark per board."""
    return CodeBoards(rules, num_envs) if rules.tabled else CellBoards(rules, num_envs, agents)
