"""The rules of every m,n,k-game: ``rows`` x ``cols`` cells, ``win_length`` in a row wins.

Cells are numbered row by row; on tic-tac-toe (3, 3, 3)::

     0 | 1 | 2
    ---+---+---
     3 | 4 | 5
    ---+---+---
     6 | 7 | 8

A position is a plain ``int``: ``sum(cell[i] * 3**i)`` with 0 = empty, 1 = X, 2 = O. It is
immutable and hashable. One :class:`Rules` object per board answers every question about it
(whose turn, who won, which moves are legal, the next position, the board's symmetries), in three
regimes of one engine:

- boards of at most ``TABLE_CELLS`` cells (3x3 among them) answer from per-code tables built once,
  so a question at step time is one look-up;
- boards of at most ``SOLVED_CELLS`` cells compute the answers over arrays of int64 codes, and
  their reachable positions can be enumerated (and solved, :mod:`gym_tictactoe.solver`);
- bigger boards, up to 15 x 15, are played on cell arrays with wins checked only on the lines
  through the last move (``line_masks_through``); positions there are searched, not tabulated.

The module-level names (``CELLS``, ``NEXT``, ``play``, ...) are tic-tac-toe's: the tables and
methods of ``TICTACTOE = rules(3, 3, 3)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property
from itertools import product
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe.checks import check_int, is_integer

Position = int

EMPTY, X, O = 0, 1, 2
MARKS = {"X": X, "O": O}
MARK_NAMES = {X: "X", O: "O"}
NO_WINNER, BOTH_WIN = 0, 3
SWAP = np.array([EMPTY, O, X], dtype=np.int8)
EMPTY_BOARD: Position = 0

MAX_SIDE = 15  # free-style gomoku's board
TABLE_CELLS = 12  # 3**12 codes: per-code tables of a few tens of MB, built in well under a second
SOLVED_CELLS = 16  # 3**16 codes: one int8 per code (43 MB) holds every position's value
_INT64_CELLS = 39  # 3**39 < 2**63: codes of boards this small fit in int64 arrays
_CHUNK = 1 << 18  # codes per chunk when computing over arrays, to bound temporary memory


def win_lines(rows: int, cols: int, length: int) -> tuple[tuple[int, ...], ...]:
    """Every straight line of ``length`` cells on a ``rows`` x ``cols`` board, row-major cells."""
    steps = ((0, 1), (1, 0), (1, 1), (1, -1))
    lines = set()  # a set: with length 1 every direction gives the same one-cell line
    for r, c, (dr, dc) in product(range(rows), range(cols), steps):
        end_r, end_c = r + dr * (length - 1), c + dc * (length - 1)
        if 0 <= end_r < rows and 0 <= end_c < cols:
            lines.add(tuple((r + dr * i) * cols + c + dc * i for i in range(length)))
    return tuple(sorted(lines))


def check_board_size(rows: Any, cols: Any, win_length: Any) -> tuple[int, int, int]:
    """The three sizes as ints, or a ValueError saying what is allowed."""
    rows = check_int(rows, "rows", 1, MAX_SIDE)
    cols = check_int(cols, "cols", 1, MAX_SIDE)
    win_length = check_int(win_length, "win_length", 1, max(rows, cols),
                           note=f" (the longer side of a {rows}x{cols} board)")
    return rows, cols, win_length


def parse_board(text: str) -> tuple[int, int, int]:
    """``"4x4x3"`` (rows x cols x win length; ``"4x4"`` means win length 4) as three ints."""
    parts = text.lower().replace("\N{MULTIPLICATION SIGN}", "x").split("x")
    try:
        sizes = [int(part) for part in parts]
    except ValueError:
        sizes = []
    if len(sizes) == 2:
        sizes.append(max(sizes))
    if len(sizes) != 3:
        raise ValueError(f"a board is ROWSxCOLSxK, e.g. 3x3x3 or 4x4x3; got {text!r}")
    return check_board_size(*sizes)


@dataclass(frozen=True)
class Layer:
    """The reachable positions with one number of marks, sorted, and what is known of each."""

    codes: npt.NDArray[np.int64]
    mark: int  # the side to move in every unfinished position of the layer
    winner: npt.NDArray[np.int8]
    terminal: npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Tables:
    """Per-code tables of a board with at most ``TABLE_CELLS`` cells (every code has a row)."""

    cells: npt.NDArray[np.int8]  # (codes, cells)
    winner: npt.NDArray[np.int8]  # X, O, NO_WINNER, or BOTH_WIN where both have a line
    to_move: npt.NDArray[np.int8]  # X, O, or EMPTY where the mark counts allow no game
    terminal: npt.NDArray[np.bool_]
    # Empty cells of every unfinished code, even where nobody can be to move: an O agent's
    # observation (its own marks as 1) is such a code, and agents look its moves up here too.
    legal_mask: npt.NDArray[np.int8]
    next: npt.NDArray[np.int32]  # (codes, cells): the next code, -1 where no side may move there
    canonical: npt.NDArray[np.int64]  # the smallest code among a code's symmetric images


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

    def encode(self, board: Any) -> Position:
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

    def decode(self, code: Position) -> npt.NDArray[np.int8]:
        """The cells of a position (read-only on tabled boards, where it is a table row)."""
        code = self._check_code(code)
        if self.tabled:
            return self.tables.cells[code]
        if self.pow3 is not None:
            return (np.int64(code) // self.pow3 % 3).astype(np.int8)
        digits = []
        for _ in range(self.n_cells):
            code, digit = divmod(code, 3)
            digits.append(digit)
        return np.array(digits, dtype=np.int8)

    def legal_moves(self, code: Position) -> list[int]:
        """The empty cells of a position that is still being played, in increasing order."""
        if self.tabled:
            return np.flatnonzero(self.tables.legal_mask[self._check_code(code)]).tolist()
        cells = self.decode(code)
        return [] if self._cells_terminal(cells) else np.flatnonzero(cells == EMPTY).tolist()

    def play(self, code: Position, cell: int) -> Position:
        """The position after the side to move puts its mark on ``cell``."""
        mark = self.to_move(code)
        if mark == EMPTY:
            raise ValueError(f"position {code} cannot arise in a game (impossible mark counts)")
        legal = self.legal_moves(code)
        if not is_integer(cell) or int(cell) not in legal:
            raise ValueError(f"move {cell!r} is not legal here; legal moves: {legal}")
        return code + mark * self.pow3_int[int(cell)]

    def winner(self, code: Position) -> int:
        """X (1), O (2), 0 when nobody has a line, or BOTH_WIN (3) on impossible boards."""
        if self.tabled:
            return int(self.tables.winner[self._check_code(code)])
        return int(self._cells_winner(self.decode(code)[None])[0])

    def is_terminal(self, code: Position) -> bool:
        if self.tabled:
            return bool(self.tables.terminal[self._check_code(code)])
        return self._cells_terminal(self.decode(code))

    def to_move(self, code: Position) -> int:
        """The mark (1 = X, 2 = O) of the side to move; X moves first. 0 on impossible counts."""
        if self.tabled:
            return int(self.tables.to_move[self._check_code(code)])
        return int(_to_move(self.decode(code)[None])[0])

    def transform(self, code: Position, symmetry: int) -> Position:
        """The position under one of the board's symmetries (0 is the identity)."""
        return self.encode(self.decode(code)[self.symmetries[symmetry]])

    def canonical(self, code: Position) -> Position:
        """The smallest code among the position's symmetric images."""
        if self.tabled:
            return int(self.tables.canonical[self._check_code(code)])
        return min(self.transform(code, s) for s in range(len(self.symmetries)))

    def render_text(self, code: Position, first: int = 0) -> str:
        """The board as text: X, O and the number of each empty cell (counting from ``first``)."""
        return board_text(self.decode(code), self.cols, first)

    # --- arrays of int64 codes (boards of at most SOLVED_CELLS cells) -------------------------

    def cells_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.int8]:
        """(N, n_cells) cells of each code."""
        codes = self._codes(codes)
        if self.tabled:
            return self.tables.cells[codes]
        # Eight cells at a time from a table of every 8-digit base-3 number: two divisions a
        # code on 16 cells instead of thirty-two.
        groups = -(-self.n_cells // _GROUP)
        cells = np.empty((codes.size, groups * _GROUP), dtype=np.int8)
        rest = codes.copy()
        for group in range(groups):
            rest, low = np.divmod(rest, 3**_GROUP)
            cells[:, group * _GROUP : (group + 1) * _GROUP] = _DIGITS[low]
        return cells[:, : self.n_cells]

    def winner_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.int8]:
        codes = self._codes(codes)
        return self.tables.winner[codes] if self.tabled else self._facts(codes)[1]

    def to_move_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.int8]:
        codes = self._codes(codes)
        return self.tables.to_move[codes] if self.tabled else _to_move(self.cells_of(codes))

    def terminal_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        codes = self._codes(codes)
        return self.tables.terminal[codes] if self.tabled else self._facts(codes)[2]

    def legal_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.int8]:
        """(N, n_cells) int8: 1 where the cell is empty and the game is not over."""
        codes = self._codes(codes)
        return self.tables.legal_mask[codes] if self.tabled else self._facts(codes)[3]

    def next_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """(N, n_cells) int64: the code after the side to move plays each cell, -1 if it can't."""
        codes = self._codes(codes)
        if self.tabled:
            return self.tables.next[codes].astype(np.int64)
        return self._facts(codes)[4]

    # --- the tables, and the reachable positions ----------------------------------------------

    @cached_property
    def tables(self) -> Tables:
        """Per-code tables (boards of at most ``TABLE_CELLS`` cells), built on first use."""
        if not self.tabled:
            raise ValueError(f"the {self.name} board has {self.n_cells} cells: per-code tables "
                             f"exist for boards of at most {TABLE_CELLS} cells")
        codes = np.arange(self.n_codes, dtype=np.int64)
        cells = (codes[:, None] // self.pow3 % 3).astype(np.int8)
        winner, terminal, legal, nxt = self._facts_of_cells(codes, cells)
        canonical = np.full(self.n_codes, self.n_codes, dtype=np.int64)
        for perm in self.symmetries:  # one symmetry at a time bounds the temporary to one image
            np.minimum(canonical, cells[:, perm].astype(np.int64) @ self.pow3, out=canonical)
        tables = Tables(cells, winner, _to_move(cells), terminal, legal,
                        nxt.astype(np.int32), canonical)
        for table in vars(tables).values():
            table.setflags(write=False)
        return tables

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
        k, directions = self.win_length, ((0, 1), (1, 0), (1, 1), (1, -1))
        table = np.full((self.n_cells, 4, 2, max(k - 1, 1)), self.n_cells, dtype=np.intp)
        for cell, (d, (dr, dc)), (w, sign), step in product(
                range(self.n_cells), enumerate(directions), enumerate((1, -1)), range(1, k)):
            r, c = divmod(cell, self.cols)
            r, c = r + sign * step * dr, c + sign * step * dc
            if 0 <= r < self.rows and 0 <= c < self.cols:
                table[cell, d, w, step - 1] = r * self.cols + c
        table.setflags(write=False)
        return table

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

    def _facts(self, codes: npt.NDArray[np.int64]) -> tuple[npt.NDArray, ...]:
        """(cells, winner, terminal, legal, next) computed from the codes themselves."""
        cells = self.cells_of(codes)
        return (cells, *self._facts_of_cells(codes, cells))

    def _facts_of_cells(self, codes, cells) -> tuple[npt.NDArray, ...]:
        winner = self._cells_winner(cells)
        terminal = (winner != NO_WINNER) | (cells != EMPTY).all(axis=1)
        legal = ((cells == EMPTY) & ~terminal[:, None]).astype(np.int8)
        mark = _to_move(cells).astype(np.int64)
        nxt = np.where((legal == 1) & (mark[:, None] != EMPTY),
                       codes[:, None] + mark[:, None] * self.pow3, -1)
        return winner, terminal, legal, nxt

    def _cells_winner(self, cells: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
        winner = np.zeros(len(cells), dtype=np.int8)
        for start in range(0, len(cells), _CHUNK):
            on_line = cells[start : start + _CHUNK, self.line_array]  # (chunk, lines, length)
            x_wins = (on_line == X).all(axis=2).any(axis=1)
            o_wins = (on_line == O).all(axis=2).any(axis=1)
            winner[start : start + _CHUNK] = x_wins * X + o_wins * O
        return winner

    def _cells_terminal(self, cells: npt.NDArray[np.int8]) -> bool:
        return bool(self._cells_winner(cells[None])[0] != NO_WINNER or (cells != EMPTY).all())


_GROUP = 8
_DIGITS = (np.arange(3**_GROUP)[:, None] // 3 ** np.arange(_GROUP) % 3).astype(np.int8)


def _to_move(cells: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
    n_x, n_o = (cells == X).sum(axis=1), (cells == O).sum(axis=1)
    return np.where(n_x == n_o, X, np.where(n_x == n_o + 1, O, EMPTY)).astype(np.int8)


def _chunks(codes: npt.NDArray[np.int64]):
    for start in range(0, len(codes), _CHUNK):
        yield codes[start : start + _CHUNK]


def _symmetries(rows: int, cols: int) -> npt.NDArray[np.intp]:
    """The board's symmetries as cell permutations (new_board = board[perm]), identity first:
    the 8 of the square, or the 4 of a rectangle (2 or 1 when a side is 1), without repeats."""
    grid = np.arange(rows * cols).reshape(rows, cols)
    if rows == cols:
        images = []
        for k in range(4):
            rotated = np.rot90(grid, k)
            images += [rotated, rotated.T]
    else:
        images = [grid, grid[::-1], grid[:, ::-1], grid[::-1, ::-1]]
    perms: list[tuple[int, ...]] = []
    for image in images:
        perm = tuple(image.ravel().tolist())
        if perm not in perms:
            perms.append(perm)
    return np.array(perms, dtype=np.intp)


def board_text(cells: npt.ArrayLike, cols: int, first: int = 0) -> str:
    """Rows of X, O and the number of each empty cell (counting from ``first``), ruled apart."""
    cells = np.asarray(cells).ravel()
    width = len(str(len(cells) - 1 + first))
    marks = [MARK_NAMES.get(int(v), str(i + first)).center(width) for i, v in enumerate(cells)]
    rows = [" " + " | ".join(marks[r : r + cols]) for r in range(0, len(cells), cols)]
    rule = "\n" + "+".join(["-" * (width + 2)] * cols) + "\n"
    return rule.join(rows)


def rules(rows: int = 3, cols: int = 3, win_length: int = 3) -> Rules:
    """The (cached) rules of a ``rows`` x ``cols`` board with ``win_length`` in a row."""
    # Checked before the cache: 3.0 == 3 and True == 1 would find another board's entry.
    return _rules(*check_board_size(rows, cols, win_length))


@cache
def _rules(rows: int, cols: int, win_length: int) -> Rules:
    return Rules(rows, cols, win_length)


def swap_marks(cells: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
    """Exchange X and O, leaving empty cells: the board seen from the other side."""
    return SWAP[cells]


# --- tic-tac-toe, the default board: its tables and functions under their short names -------

TICTACTOE = rules(3, 3, 3)
ROWS, COLS, WIN_LENGTH = TICTACTOE.size
N_CELLS = TICTACTOE.n_cells
N_CODES = TICTACTOE.n_codes
POW3 = TICTACTOE.pow3
LINES = TICTACTOE.lines
LINE_ARRAY = TICTACTOE.line_array
SYMMETRIES = TICTACTOE.symmetries
INVERSE_SYMMETRIES = TICTACTOE.inverse_symmetries
_TABLES = TICTACTOE.tables
CELLS, WINNER, TO_MOVE, TERMINAL = _TABLES.cells, _TABLES.winner, _TABLES.to_move, _TABLES.terminal
LEGAL_MASK, NEXT, CANONICAL = _TABLES.legal_mask, _TABLES.next, _TABLES.canonical
LAYERS = TICTACTOE.layers
REACHABLE = TICTACTOE.reachable
IS_REACHABLE = np.zeros(N_CODES, dtype=bool)
IS_REACHABLE[REACHABLE] = True
IS_REACHABLE.setflags(write=False)

encode, decode, legal_moves, play = (TICTACTOE.encode, TICTACTOE.decode, TICTACTOE.legal_moves,
                                     TICTACTOE.play)
winner, is_terminal, to_move = TICTACTOE.winner, TICTACTOE.is_terminal, TICTACTOE.to_move
transform, canonical, render_text = TICTACTOE.transform, TICTACTOE.canonical, TICTACTOE.render_text


@cache
def _flows_to_the_end(board: Rules) -> tuple[dict[str, float], dict[str, float]]:
    """Mass sent from the empty board down every move, summed over the finished positions by
    result, in one walk: each position passes its mass to every child (the game counts), and a
    second mass an equal share to each (random play). The layers already say which positions
    ended and who won, so nothing is decoded but each parent's empty cells. Float64 sums: exact
    for game counts, which stay below 16! < 2**53 on solvable boards."""
    totals = ({"X": 0.0, "O": 0.0, "draw": 0.0}, {"X": 0.0, "O": 0.0, "draw": 0.0})
    masses = (np.ones(1), np.ones(1))
    layers = board.positions
    for layer, below in zip(layers, (*layers[1:], None), strict=True):
        for mark, name in ((X, "X"), (O, "O"), (NO_WINNER, "draw")):
            ended = layer.terminal & (layer.winner == mark)
            for total, mass in zip(totals, masses, strict=True):
                total[name] += float(mass[ended].sum())
        if below is None or below.codes.size == 0:
            break
        live = ~layer.terminal
        masses = _pass_down(board, layer.codes[live], layer.mark,
                            tuple(mass[live] for mass in masses), below.codes)
    return totals


def _pass_down(board: Rules, codes, mark: int, masses, below) -> tuple[npt.NDArray, ...]:
    """The masses of each position of the next layer (``below``, sorted) from its parents
    ``codes`` (all unfinished, ``mark`` to move): all of the first mass to every child, an
    equal share of the second."""
    counts, shares = np.zeros(below.size), np.zeros(below.size)
    for start in range(0, codes.size, _CHUNK):
        children = board.children_of(codes[start : start + _CHUNK], mark)
        legal = children >= 0
        index = np.searchsorted(below, children[legal])
        count, share = (mass[start : start + _CHUNK] for mass in masses)
        for total, weight in ((counts, count), (shares, share / legal.sum(axis=1))):
            weights = np.broadcast_to(weight[:, None], children.shape)[legal]
            total += np.bincount(index, weights, below.size)
    return counts, shares


def count_games(board: Rules = TICTACTOE) -> dict[str, int]:
    """Distinct complete games (move sequences) from the empty board, by result."""
    by_result = {name: int(count) for name, count in _flows_to_the_end(board)[0].items()}
    return {"games": sum(by_result.values()), **by_result}


def random_play_outcome(board: Rules = TICTACTOE) -> dict[str, float]:
    """Exact probabilities of "X", "O" and "draw" when both sides play uniformly random moves."""
    return {name: float(p) for name, p in _flows_to_the_end(board)[1].items()}
