"""The rules of every m,n,k-game: ``rows`` x ``cols`` cells, ``win_length`` in a row wins.

Cells are numbered row by row; on tic-tac-toe (3, 3, 3)::

     0 | 1 | 2
    ---+---+---
     3 | 4 | 5
    ---+---+---
     6 | 7 | 8

A position's code (``Code``) is a plain ``int``: ``sum(cell[i] * 3**i)`` with 0 = empty, 1 = X,
2 = O; immutable and hashable (a game's mutable state is :mod:`.positions`'). One
:class:`Rules` object per board answers every question about it (whose turn, who won, which moves
are legal, the next position, the board's symmetries), in three regimes of one engine:

- boards of at most ``TABLE_CELLS`` cells (3x3 among them) answer from per-code tables built once,
  so a question at step time is one look-up;
- boards of at most ``SOLVED_CELLS`` cells compute the answers over arrays of int64 codes, and
  their reachable positions can be enumerated (and solved, :mod:`gym_tictactoe.game.solver`);
- bigger boards, up to 15 x 15, are played on cell arrays with wins checked only on the lines
  through the last move (``line_masks_through``); positions there are searched, not tabulated.

``TICTACTOE = rules(3, 3, 3)`` is the default board; its tables and methods are its own
(``TICTACTOE.tables.cells``, ``TICTACTOE.play``, ...), as every tabled board's are.
"""

from __future__ import annotations

from functools import cache, cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe.checks import is_integer
from gym_tictactoe.game.basics import (
    _CHUNK,
    _INT64_CELLS,
    EMPTY,
    EMPTY_BOARD,
    NO_WINNER,
    SOLVED_CELLS,
    TABLE_CELLS,
    Code,
    Layer,
    O,
    Tables,
    X,
    _chunks,
    _symmetries,
    check_board_size,
    line_rays,
    win_lines,
)
from gym_tictactoe.game.regimes import (
    DigitRegime,
    Regime,
    TableRegime,
    cells_terminal,
    cells_winner,
)


class Rules:
    """The rules of one board: its lines, symmetries, and the answers to every rules question.

    Get one with :func:`rules` (cached per board). A value: two Rules of the same board are
    equal and hash alike, however they were built. Methods ending in ``_of`` take arrays of
    int64 codes (boards of at most ``SOLVED_CELLS`` cells, where codes index arrays); the others
    take one position and work on every board.
    """

    def __init__(self, rows: int = 3, cols: int = 3, win_length: int = 3) -> None:
        self.rows, self.cols, self.win_length = check_board_size(rows, cols, win_length)
        self.n_cells = self.rows * self.cols
        self.name = f"{self.rows}x{self.cols}x{self.win_length}"
        self.lines = win_lines(self.rows, self.cols, self.win_length)
        self.line_array = np.array(self.lines, dtype=np.intp).reshape(-1, self.win_length)
        self.tabled = self.n_cells <= TABLE_CELLS
        # The representation, chosen once: every question below is a look-up in per-code tables
        # or computed from the code's digits, and no method asks again which.
        self._regime: Regime = TableRegime(self) if self.tabled else DigitRegime(self)
        self.solvable = self.n_cells <= SOLVED_CELLS
        self.n_codes = 3**self.n_cells
        self.pow3_int = tuple(3**i for i in range(self.n_cells))
        fits = self.n_cells <= _INT64_CELLS
        self.pow3 = np.array(self.pow3_int, dtype=np.int64) if fits else None
        self.symmetries = _symmetries(self.rows, self.cols)
        # inverse_symmetries[s] maps a cell of the transformed board back to the original's.
        self.inverse_symmetries = np.argsort(self.symmetries, axis=1)
        through = [[sum(1 << c for c in line) for line in self.lines if cell in line]
                   for cell in range(self.n_cells)]
        # Bit masks of the lines through each cell: a move can only complete one of these.
        self.line_masks_through = tuple(tuple(masks) for masks in through)
        self.full_mask = (1 << self.n_cells) - 1
        for table in (self.line_array, self.symmetries, self.inverse_symmetries):
            table.setflags(write=False)

    def __repr__(self) -> str:
        return f"rules({self.rows}, {self.cols}, {self.win_length})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Rules):
            return NotImplemented
        return self.size == other.size

    def __hash__(self) -> int:
        return hash(self.size)

    def __reduce__(self) -> tuple:
        # Pickled and copied as a reference to the one cached Rules of the board: a deep copy
        # would rebuild (and keep) the board's tables and positions a second time.
        return rules, (self.rows, self.cols, self.win_length)

    def __deepcopy__(self, memo: dict) -> Rules:
        return self

    @property
    def shape(self) -> tuple[int, int]:
        return self.rows, self.cols

    @property
    def size(self) -> tuple[int, int, int]:
        return self.rows, self.cols, self.win_length

    @property
    def kwargs(self) -> dict[str, int]:
        """``{"rows": ..., "cols": ..., "win_length": ...}``: the keywords every layer takes."""
        return {"rows": self.rows, "cols": self.cols, "win_length": self.win_length}

    # --- one position, any board --------------------------------------------------------------

    def encode(self, board: Any) -> Code:
        """The code of a board: ``n_cells`` values 0 (empty), 1 (X) or 2 (O), row-major."""
        try:
            cells = np.asarray(board).ravel()
        except ValueError:  # ragged nested lists
            cells = np.empty(0)
        if cells.dtype.kind not in "iu" or np.ma.is_masked(board):  # floats, bools, strings
            cells = np.empty(0)  # and hidden (masked) values are not cells
        if cells.shape == (self.n_cells,) and ((cells >= 0) & (cells <= 2)).all():
            if self.pow3 is not None:
                return int(cells.astype(np.int64) @ self.pow3)
            return sum(int(v) * p for v, p in zip(cells.tolist(), self.pow3_int, strict=True))
        raise ValueError(f"a {self.rows}x{self.cols} board is {self.n_cells} cells of 0 (empty), "
                         f"1 (X) or 2 (O); got {board!r}")

    def decode(self, code: Code) -> npt.NDArray[np.int8]:
        """The cells of a position (read-only on tabled boards, where it is a table row)."""
        return self._regime.decode(self._check_code(code))

    def legal_moves(self, code: Code) -> list[int]:
        """The empty cells of a position that is still being played, in increasing order."""
        return self._regime.legal_moves(self._check_code(code))

    def play(self, code: Code, cell: int) -> Code:
        """The position after the side to move puts its mark on ``cell``."""
        mark = self.to_move(code)
        if mark == EMPTY:
            raise ValueError(f"position {code} cannot arise in a game (impossible mark counts)")
        legal = self.legal_moves(code)
        if not is_integer(cell) or int(cell) not in legal:
            raise ValueError(f"move {cell!r} is not legal here; legal moves: {legal}")
        return code + mark * self.pow3_int[int(cell)]

    def winner(self, code: Code) -> int:
        """X (1), O (2), 0 when nobody has a line, or BOTH_WIN (3) on impossible boards."""
        return self._regime.winner(self._check_code(code))

    def is_terminal(self, code: Code) -> bool:
        return self._regime.is_terminal(self._check_code(code))

    def to_move(self, code: Code) -> int:
        """The mark (1 = X, 2 = O) of the side to move; X moves first. 0 on impossible counts."""
        return self._regime.to_move(self._check_code(code))

    def transform(self, code: Code, symmetry: int) -> Code:
        """The position under one of the board's symmetries (0 is the identity)."""
        return self.encode(self.decode(code)[self.symmetries[symmetry]])

    def canonical(self, code: Code) -> Code:
        """The smallest code among the position's symmetric images."""
        return self._regime.canonical(self._check_code(code))

    # --- arrays of int64 codes (boards of at most SOLVED_CELLS cells) -------------------------

    def cells_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.int8]:
        """(N, n_cells) cells of each code."""
        return self._regime.cells_of(self._codes(codes))

    def winner_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.int8]:
        return self._regime.winner_of(self._codes(codes))

    def to_move_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.int8]:
        return self._regime.to_move_of(self._codes(codes))

    def terminal_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        return self._regime.terminal_of(self._codes(codes))

    def legal_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.int8]:
        """(N, n_cells) int8: 1 where the cell is empty and the game is not over."""
        return self._regime.legal_of(self._codes(codes))

    def next_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """(N, n_cells) int64: the code after the side to move plays each cell, -1 if it can't."""
        return self._regime.next_of(self._codes(codes))

    # --- the tables, and the reachable positions ----------------------------------------------

    @cached_property
    def tables(self) -> Tables:
        """Per-code tables (boards of at most ``TABLE_CELLS`` cells), built on first use."""
        return self._regime.tables

    @cached_property
    def positions(self) -> tuple[Layer, ...]:
        """Every position reachable from the empty board, by number of marks (0..n_cells), with
        who won and whether the game is over there: the solver and the exact evaluation walk
        these layers backwards."""
        self.check_solvable("enumerating every position")
        seen = np.zeros(self.n_codes, dtype=bool)  # one byte per code: 43 MB on 16 cells
        codes, layers = np.array([EMPTY_BOARD], dtype=np.int64), []
        for marks in range(self.n_cells + 1):
            layer = self._layer(codes, marks)
            layers.append(layer)
            for chunk in _chunks(layer.codes[~layer.terminal]):
                children = self.children_of(chunk, layer.mark).ravel()
                seen[children[children >= 0]] = True
            codes = np.flatnonzero(seen)  # sorted and unique, without np.unique's sort
            seen[codes] = False
        return tuple(layers)

    def _layer(self, codes: npt.NDArray[np.int64], marks: int) -> Layer:
        """The positions with ``marks`` marks: only the side that moved last can have a line."""
        mover = O if marks % 2 == 0 else X
        won = np.zeros(codes.size, dtype=bool)
        if marks:
            for start in range(0, codes.size, _CHUNK):
                on_line = self.cells_of(codes[start : start + _CHUNK])[:, self.line_array]
                won[start : start + _CHUNK] = (on_line == mover).all(axis=2).any(axis=1)
        terminal = won | (marks == self.n_cells)
        winner = np.where(won, mover, NO_WINNER).astype(np.int8)
        layer = Layer(codes.astype(np.int64), X if marks % 2 == 0 else O, winner, terminal)
        for array in (layer.codes, layer.winner, layer.terminal):
            array.setflags(write=False)
        return layer

    def children_of(self, codes: npt.ArrayLike, mark: int) -> npt.NDArray[np.int64]:
        """(N, n_cells): the code after ``mark`` plays each cell of unfinished positions
        ``codes`` where ``mark`` is to move, -1 on occupied cells. Cheaper than ``next_of``:
        no line is checked."""
        codes = self._codes(codes)
        empty = self.cells_of(codes) == EMPTY
        return np.where(empty, codes[:, None] + mark * self.pow3, -1)

    @property
    def layers(self) -> tuple[npt.NDArray[np.int64], ...]:
        """The reachable positions' codes, sorted, by number of marks."""
        return tuple(layer.codes for layer in self.positions)

    @cached_property
    def reachable(self) -> npt.NDArray[np.int64]:
        """Every position that can occur in a game, by layer then code."""
        reachable = np.concatenate(self.layers)
        reachable.setflags(write=False)
        return reachable

    @cached_property
    def rays(self) -> npt.NDArray[np.intp]:
        """(cells, 4 directions, 2 ways, win_length - 1): the cells stepping away from each cell
        along each line direction, padded with ``n_cells`` past the board's edge."""
        return line_rays(self.rows, self.cols, self.win_length)

    def wins_at(self, boards: npt.NDArray[np.int8], cells: npt.ArrayLike,
                marks: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Whether ``marks`` has a line through ``cells`` on each of ``boards``: (N, n_cells + 1)
        arrays whose last column holds -1, so the padding never extends a line. Counts the run
        of the mark both ways along each direction: a few gathers of N values per step."""
        cells, marks = np.asarray(cells, dtype=np.intp), np.asarray(marks)
        if self.win_length == 1:
            return np.ones(len(cells), dtype=bool)
        flat, width = boards.reshape(-1), boards.shape[1]
        base = np.arange(len(cells)) * width
        rays = self.rays[cells]  # (N, 4, 2, k - 1)
        won = np.zeros(len(cells), dtype=bool)
        for direction in range(4):
            run = np.ones(len(cells), dtype=np.int64)
            for way in range(2):
                going = np.ones(len(cells), dtype=bool)
                for step in range(self.win_length - 1):
                    going &= flat.take(base + rays[:, direction, way, step]) == marks
                    run += going
            won |= run >= self.win_length
        return won

    def check_solvable(self, what: str) -> None:
        if not self.solvable:
            raise ValueError(f"{what} needs a board of at most {SOLVED_CELLS} cells; the "
                             f"{self.name} board has {self.n_cells}. On bigger boards use "
                             "search (the 'alphabeta' opponent) and play games instead")

    # --- internals ----------------------------------------------------------------------------

    def _check_code(self, code: Any) -> int:
        if not is_integer(code):
            raise ValueError(f"a position code is an int; got {code!r}")
        if not 0 <= code < self.n_codes:
            raise ValueError(f"a {self.name} position code is an int in [0, 3**{self.n_cells}); "
                             f"got {code!r}")
        return int(code)

    def _codes(self, codes: npt.ArrayLike) -> npt.NDArray[np.int64]:
        self.check_solvable("arrays of position codes")
        return np.asarray(codes, dtype=np.int64).reshape(-1)

    def _cells_winner(self, cells: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
        return cells_winner(cells, self.line_array)

    def _cells_terminal(self, cells: npt.NDArray[np.int8]) -> bool:
        return cells_terminal(cells, self.line_array)


def rules(rows: int = 3, cols: int = 3, win_length: int = 3) -> Rules:
    """The (cached) rules of a ``rows`` x ``cols`` board with ``win_length`` in a row."""
    # Checked before the cache: 3.0 == 3 and True == 1 would find another board's entry.
    return _rules(*check_board_size(rows, cols, win_length))


@cache
def _rules(rows: int, cols: int, win_length: int) -> Rules:
    return Rules(rows, cols, win_length)


TICTACTOE = rules(3, 3, 3)
