"""Pictures of a position: text (``ansi``), an image (``rgb_array``) and a window (``human``).

Text and images are pure NumPy functions of the position (``text_board`` and ``picture``), so
they never touch the environment's random number generator and the same position always looks
the same. Both show the last move when told it, and the winning line. Only ``Window`` needs
pygame, and imports it when a window is first asked for, so rendering to text or arrays works
without the ``render`` extra.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium.error import DependencyNotInstalled

from gym_tictactoe import game
from gym_tictactoe.checks import check_int, is_integer
from gym_tictactoe.envs import picture, text_board
from gym_tictactoe.envs.picture import (  # noqa: F401  (the colours' names before picture.py)
    BACKGROUND,
    GRID_COLOUR,
    LAST_COLOUR,
    O_COLOUR,
    WIN_COLOUR,
    X_COLOUR,
)
from gym_tictactoe.game import notation

MIN_CELL, MAX_CELL = picture.MIN_CELL, picture.MAX_CELL
MAX_SIZE = 4096  # pixels: a typo must not ask for a picture of gigabytes
Shape = tuple[int, int]


def board_cells(board: Any, shape: Shape = (3, 3)) -> npt.NDArray[np.int8]:
    """The cells of ``board``: a position code (an int) or an array of ``rows * cols`` cells."""
    rows, cols = shape
    if is_integer(board):
        return game.rules(rows, cols, min(rows, cols)).decode(int(board))
    cells = np.asarray(board)
    if cells.shape != (rows * cols,) or cells.dtype.kind not in "iu" or np.ma.is_masked(
            board) or not np.isin(cells, (0, 1, 2)).all():
        raise ValueError(f"a {rows}x{cols} board is a position code or {rows * cols} cells of "
                         f"0, 1, 2; got {board!r}")
    return cells.astype(np.int8)


def _winning_lines(cells: npt.NDArray[np.int8], shape: Shape,
                   win_length: int | None) -> list[tuple[int, ...]]:
    """The lines to mark: none when the win length is not known (3 on 3x3, tic-tac-toe)."""
    if win_length is None and shape != (3, 3):
        return []  # guessing would mark lines that win nothing
    return notation.winning_lines(cells, game.rules(*shape, win_length or 3))


def _last(last: Any, shape: Shape) -> int | None:
    return check_int(last, "last", 0, shape[0] * shape[1] - 1, none=True,
                     note=" (the last move's cell)")


def ansi(board: Any, shape: Shape = (3, 3), *, last: int | None = None,
         win_length: int | None = None, colour: bool = False) -> str:
    """The board as text: X, O and the number of each empty cell (the action that fills it) on
    boards of up to 16 cells, a compact board with column letters and row numbers on bigger
    ones (``text_board``). ``last``: the last move's cell, shown in parentheses. With
    ``colour``, ANSI codes make the last move bold and the winning line (of ``win_length``,
    by default 3 on 3x3 and unmarked elsewhere) reversed."""
    cells = board_cells(board, shape)
    win = np.zeros(cells.size, dtype=bool)
    for line in _winning_lines(cells, shape, win_length) if colour else ():
        win[list(line)] = True
    return text_board.board_text(cells, shape, _last(last, shape), win, colour) + "\n"


def cell_size_for(size: Any, shape: Shape) -> int:
    """The largest cell size whose image fits in ``size`` pixels on its longer side."""
    smallest = picture.layout(shape, MIN_CELL)
    least = max(smallest.height, smallest.width)
    size = check_int(size, "size", least, MAX_SIZE,
                     note=f" pixels (at least {MIN_CELL} a cell on a {shape[0]}x{shape[1]} board)")
    for cell_size in range(min(MAX_CELL, size), MIN_CELL - 1, -1):
        spec = picture.layout(shape, cell_size)
        if max(spec.height, spec.width) <= size:
            return cell_size
    return MIN_CELL  # not reached: the smallest layout fits, as checked


def check_cell_size(cell_size: Any, shape: Shape = (3, 3)) -> int:
    """``cell_size`` as an int in range, or the board's default when it is None."""
    if cell_size is None:
        return picture.default_cell_size(shape)
    return check_int(cell_size, "cell_size", MIN_CELL, MAX_CELL,
                     note=" pixels a cell (or None: the board's default)")


def rgb_array(board: Any, size: int | None = None, shape: Shape = (3, 3), *,
              cell_size: int | None = None, last: int | None = None,
              win_length: int | None = None) -> npt.NDArray[np.uint8]:
    """The board as a uint8 ``(height, width, 3)`` image (``picture``): a frame and grid, red X
    strokes, blue O rings, the ``last`` move's cell tinted, the winning line struck through (of
    ``win_length``; by default 3 on 3x3 and none elsewhere), letters and numbers round boards
    of more than 16 cells. ``board`` is a position code or the cells of a ``shape`` board. Its
    scale: ``cell_size`` pixels a cell, or the largest that fits ``size`` pixels on the longer
    side; by default 80 pixels a cell up to 9x9, then less, about 720 pixels across."""
    if size is not None and cell_size is not None:
        raise ValueError("give size (pixels of the longer side) or cell_size, not both")
    cell_size = cell_size_for(size, shape) if size is not None else check_cell_size(
        cell_size, shape)
    cells = board_cells(board, shape)
    return picture.draw(cells, shape, cell_size, _last(last, shape),
                        _winning_lines(cells, shape, win_length))


class Window:
    """A pygame window showing frames at most ``fps`` times a second (``render_mode="human"``)."""

    def __init__(self, fps: int = 4) -> None:
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # keep stdout for the game
        try:
            import pygame
        except ImportError as error:
            raise DependencyNotInstalled(
                'pygame is not installed: install the render extra, pip install ".[render]" '
                'in a clone of gym-tictactoe'
            ) from error
        self._pygame = pygame
        self.fps = fps
        self.caption = "Tic-tac-toe"
        self._screen: Any = None
        self._clock: Any = None

    def show(self, frame: npt.NDArray[np.uint8]) -> None:
        """Draw one ``(height, width, 3)`` frame, opening the window on the first call."""
        pygame = self._pygame
        if self._screen is None:
            pygame.display.init()
            pygame.display.set_caption(self.caption)
            self._clock = pygame.time.Clock()
        size = (frame.shape[1], frame.shape[0])
        if self._screen is None or self._screen.get_size() != size:
            self._screen = pygame.display.set_mode(size)
        self._screen.blit(pygame.surfarray.make_surface(frame.swapaxes(0, 1)), (0, 0))
        pygame.event.pump()  # an unserviced event queue makes the OS report the window as hung
        pygame.display.flip()
        self._clock.tick(self.fps)

    @property
    def pygame(self) -> Any:
        """The pygame module (imported by the constructor), for a caller reading events."""
        return self._pygame

    def set_caption(self, caption: str) -> None:
        """The window's title (the game shows whose move it is and the score there)."""
        self.caption = caption
        if self._screen is not None:
            self._pygame.display.set_caption(caption)

    def close(self) -> None:
        """Close the window if one was opened; safe to call more than once."""
        if self._screen is not None:
            self._pygame.display.quit()
            self._pygame.quit()
            self._screen = self._clock = None


class Screen:
    """``render()`` for an env's ``render_mode``: the text, the image, or the image shown in a
    ``Window`` opened on first use (``close`` closes it). Shared by the single-agent and the
    two-player env. ``cell_size``: pixels a cell of the images (None: the board's default)."""

    def __init__(self, render_mode: str | None, fps: int, cell_size: int | None = None) -> None:
        self.render_mode, self.fps, self.cell_size = render_mode, fps, cell_size
        self.window: Window | None = None

    def render(self, cells: npt.NDArray[np.int8], shape: Shape, last: int | None = None,
               win_length: int | None = None) -> Any:
        if self.render_mode == "ansi":
            return ansi(cells, shape, last=last, win_length=win_length)
        frame = rgb_array(cells, shape=shape, cell_size=self.cell_size, last=last,
                          win_length=win_length)
        if self.render_mode == "rgb_array":
            return frame
        if self.window is None:
            self.window = Window(fps=self.fps)
        self.window.show(frame)
        return None

    def close(self) -> None:
        if self.window is not None:
            self.window.close()
            self.window = None
