"""A position as text (the env's ``ansi`` render and the terminal game's board).

Small boards show the number of each empty cell (the env's action), ruled apart::

     X | 1 | 2
    ---+---+---
     3 |(O)| 5
    ---+---+---
     6 | 7 | 8

Boards of more than ``notation.COMPACT_CELLS`` cells are compact, two characters a cell, with
column letters and row numbers for gomoku notation (``h8``)::

        a b c d e f
     6  . . . . . .  6
     5  . . X . . .  5
     4  . . .(O). .  4

The last move is put in parentheses. With ``colour=True`` (a terminal) the last move is bold and
the cells of a winning line are shown in reverse video.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.game import notation

BOLD, REVERSE, RESET = "\x1b[1m", "\x1b[7m", "\x1b[0m"


def board_text(cells: npt.NDArray[np.int8], shape: tuple[int, int], last: int | None = None,
               win: npt.NDArray[np.bool_] | None = None, colour: bool = False) -> str:
    """The board's rows, no newline at the end. ``last``: the cell of the last move, put in
    parentheses; ``win``: a mask of the cells on a winning line (shown only with ``colour``)."""
    marks = _marks(cells, shape, last, win, colour)
    if notation.compact(shape):
        return _compact(marks, shape, last)
    return _numbered(marks, shape, last)


def _marks(cells: npt.NDArray[np.int8], shape: tuple[int, int], last: int | None,
           win: npt.NDArray[np.bool_] | None, colour: bool) -> list[str]:
    """Each cell's text: X, O, and on small boards the empty cell's number (else a dot)."""
    compact = notation.compact(shape)
    width = 1 if compact else len(str(cells.size - 1))
    marks = [game.MARK_NAMES.get(int(value), "." if compact else str(cell)).center(width)
             for cell, value in enumerate(cells.tolist())]
    if colour:
        for cell in np.flatnonzero(win) if win is not None else ():
            marks[cell] = f"{REVERSE}{marks[cell]}{RESET}"
        if last is not None:
            marks[last] = f"{BOLD}{marks[last]}{RESET}"
    return marks


def _numbered(marks: list[str], shape: tuple[int, int], last: int | None) -> str:
    cols = shape[1]
    padded = [f"({mark})" if cell == last else f" {mark} " for cell, mark in enumerate(marks)]
    rows = ["|".join(padded[r : r + cols]).rstrip() for r in range(0, len(marks), cols)]
    width = len(str(len(marks) - 1))
    rule = "\n" + "+".join(["-" * (width + 2)] * cols) + "\n"
    return rule.join(rows)


def _compact(marks: list[str], shape: tuple[int, int], last: int | None) -> str:
    rows, cols = shape
    letters = "    " + " ".join(notation.LETTERS[:cols])
    lines = [letters]
    for row in range(rows):
        label = notation.row_label(row, rows)
        text = ""
        for col in range(cols):
            cell = row * cols + col
            text += "(" if cell == last else ")" if cell - 1 == last and col else " "
            text += marks[cell]
        text += ")" if last == row * cols + cols - 1 else " "
        lines.append(f"{label:>2} {text} {label}")
    lines.append(letters)
    return "\n".join(lines)
