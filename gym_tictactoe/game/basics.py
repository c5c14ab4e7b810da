"""What the rules of an m,n,k-game are built from: marks, board sizes, win lines, symmetries,
the layers and tables a :class:`~gym_tictactoe.game.engine.Rules` computes, and the plain
helpers its array methods share."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe.checks import check_int

Code = int  # a position's code: sum(cell[i] * 3**i), 0 empty, 1 X, 2 O

EMPTY, X, O = 0, 1, 2
MARKS = {"X": X, "O": O}
MARK_NAMES = {X: "X", O: "O"}
NO_WINNER, BOTH_WIN = 0, 3
SWAP = np.array([EMPTY, O, X], dtype=np.int8)
EMPTY_BOARD: Code = 0

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


def line_rays(rows: int, cols: int, win_length: int) -> npt.NDArray[np.intp]:
    """(cells, 4 directions, 2 ways, win_length - 1): the cells stepping away from each cell
    along each line direction, padded with ``rows * cols`` past the board's edge."""
    n_cells, k, directions = rows * cols, win_length, ((0, 1), (1, 0), (1, 1), (1, -1))
    table = np.full((n_cells, 4, 2, max(k - 1, 1)), n_cells, dtype=np.intp)
    for cell, (d, (dr, dc)), (w, sign), step in product(
            range(n_cells), enumerate(directions), enumerate((1, -1)), range(1, k)):
        r, c = divmod(cell, cols)
        r, c = r + sign * step * dr, c + sign * step * dc
        if 0 <= r < rows and 0 <= c < cols:
            table[cell, d, w, step - 1] = r * cols + c
    table.setflags(write=False)
    return table


def board_text(cells: npt.ArrayLike, cols: int, first: int = 0) -> str:
    """Rows of X, O and the number of each empty cell (counting from ``first``), ruled apart."""
    cells = np.asarray(cells).ravel()
    width = len(str(len(cells) - 1 + first))
    marks = [MARK_NAMES.get(int(v), str(i + first)).center(width) for i, v in enumerate(cells)]
    rows = [" " + " | ".join(marks[r : r + cols]) for r in range(0, len(cells), cols)]
    rule = "\n" + "+".join(["-" * (width + 2)] * cols) + "\n"
    return rule.join(rows)


def swap_marks(cells: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
    """Exchange X and O, leaving empty cells: the board seen from the other side."""
    return SWAP[cells]
