"""How a person names a cell, and which cells a picture of a position marks.

Three ways to name a cell, accepted on every board:

- its number, ``0`` to ``rows * cols - 1`` row by row from the top left (the env's action);
- ``row col``, each counted from 0 at the top left;
- gomoku notation, as on a go or renju board: a column letter from ``a`` at the left and a row
  number from ``1`` at the *bottom*, so ``h8`` is the centre of a 15x15 board.

Boards of more than ``COMPACT_CELLS`` cells are drawn with column letters and row numbers (text
and pictures), the cell numbers being too long to read there.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from gym_tictactoe import game

LETTERS = "abcdefghijklmno"  # one per column of the widest board (game.MAX_SIDE)
COMPACT_CELLS = 16  # up to 4x4 a cell's number is short enough to print in the cell
_GOMOKU = re.compile(r"([a-z])\s*(\d+)")


def compact(shape: tuple[int, int]) -> bool:
    """Whether a board of this shape is drawn with letters and numbers round it."""
    return shape[0] * shape[1] > COMPACT_CELLS


def cell_name(cell: int, shape: tuple[int, int]) -> str:
    """The cell as a person reads it off the board: its number on small boards, ``h8`` on
    compact ones."""
    rows, cols = shape
    if not compact(shape):
        return str(cell)
    row, col = divmod(cell, cols)
    return f"{LETTERS[col]}{rows - row}"


def row_label(row: int, rows: int) -> str:
    """The number written beside a row (counted from the top, from 0): 1 is the bottom row."""
    return str(rows - row)


def parse_cell(text: str, shape: tuple[int, int]) -> int:
    """The cell named by ``text``: a number, ``row col`` or ``h8``; ValueError saying what is
    allowed otherwise (whether the cell is free is the caller's question)."""
    rows, cols = shape
    centre = cell_name_any(rows // 2 * cols + cols // 2, shape)
    hint = (f"type a cell 0-{rows * cols - 1}, 'row col' (rows 0-{rows - 1}, cols 0-{cols - 1}), "
            f"or a letter a-{LETTERS[cols - 1]} and a row 1-{rows} (as {centre}), or q")
    words = text.strip().lower().replace(",", " ")
    match = _GOMOKU.fullmatch(words)
    if match:
        col, row = LETTERS.find(match[1]), rows - int(match[2])
        if 0 <= col < cols and 0 <= row < rows:
            return row * cols + col
        raise ValueError(f"{words.replace(' ', '')} is not on the board: {hint}")
    try:
        numbers = [int(word) for word in words.split()]
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not a cell: {hint}") from None
    if len(numbers) == 2 and 0 <= numbers[0] < rows and 0 <= numbers[1] < cols:
        return numbers[0] * cols + numbers[1]
    if len(numbers) == 1 and 0 <= numbers[0] < rows * cols:
        return numbers[0]
    if numbers:
        raise ValueError(f"{' '.join(map(str, numbers))} is not a cell: {hint}")
    raise ValueError(f"{text.strip()!r} is not a cell: {hint}")


def centre_cells(shape: tuple[int, int]) -> tuple[int, ...]:
    """The centre-most cells, row by row: one on an odd-by-odd board, two where one side is
    even, four on an even-by-even board (6x6 has c4, d4, c3 and d3)."""
    rows, cols = shape
    middle_rows = sorted({(rows - 1) // 2, rows // 2})
    middle_cols = sorted({(cols - 1) // 2, cols // 2})
    return tuple(row * cols + col for row in middle_rows for col in middle_cols)


def centre_phrase(shape: tuple[int, int]) -> str:
    """``d4 is the centre``, or every centre cell where there are several (``c4, d4, c3 and
    d3 are the centre cells``), named as ``cell_name`` names them."""
    names = [cell_name(cell, shape) for cell in centre_cells(shape)]
    if len(names) == 1:
        return f"{names[0]} is the centre"
    return f"{', '.join(names[:-1])} and {names[-1]} are the centre cells"


def cell_name_any(cell: int, shape: tuple[int, int]) -> str:
    """``cell`` in gomoku notation, on any board."""
    row, col = divmod(cell, shape[1])
    return f"{LETTERS[col]}{shape[0] - row}"


def winning_lines(cells: Any, rules: game.Rules) -> list[tuple[int, ...]]:
    """The lines of ``win_length`` cells all of one mark (each from one end to the other)."""
    board = np.asarray(cells).ravel()
    marks = board[rules.line_array]
    full = (marks[:, 0] != game.EMPTY) & (marks == marks[:, :1]).all(axis=1)
    return [rules.lines[i] for i in np.flatnonzero(full)]
