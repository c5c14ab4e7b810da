"""Pictures of a position: text (``ansi``), an image (``rgb_array``) and a window (``human``).

Text and images are pure NumPy functions of the position's code, so they never touch the
environment's random number generator and the same position always looks the same. Only
``Window`` needs pygame, and imports it when a window is first asked for, so rendering to text
or arrays works without the ``render`` extra.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from gymnasium.error import DependencyNotInstalled

from gym_tictactoe import game
from gym_tictactoe.checks import check_int, is_integer

BACKGROUND = (245, 241, 230)
GRID_COLOUR = (70, 70, 70)
X_COLOUR = (200, 60, 50)
O_COLOUR = (40, 90, 180)
MIN_CELL = 8  # below 8 pixels a cell, strokes and rings blur into blobs
MIN_SIZE = 3 * MIN_CELL
MAX_SIZE = 4096  # pixels: its per-pixel layout takes a few hundred MB; a typo must not ask more
# Shape of a mark as fractions of a cell: empty margin round it, stroke thickness.
MARK_MARGIN = 0.2
STROKE = 0.12
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


def ansi(board: Any, shape: Shape = (3, 3)) -> str:
    """The board as text: X, O and the number of each empty cell (the action that fills it)."""
    return game.board_text(board_cells(board, shape), shape[1]) + "\n"


class _Layout(NamedTuple):
    """Per-pixel masks for one image size, shared by every position drawn at that size."""

    cell: npt.NDArray[np.intp]  # the cell (row-major) each pixel lies in
    grid: npt.NDArray[np.bool_]
    x_mark: npt.NDArray[np.bool_]  # where an X would be drawn, in every cell
    o_mark: npt.NDArray[np.bool_]


@lru_cache(maxsize=8)
def _layout(size: int, rows: int, cols: int) -> _Layout:
    pixels = size / max(rows, cols)  # per cell; the longer side of the board spans ``size``
    height, width = round(pixels * rows), round(pixels * cols)
    y = ((np.arange(height) + 0.5) * rows / height)[:, None]  # pixel centres in cell units
    x = ((np.arange(width) + 0.5) * cols / width)[None, :]
    row, col = np.minimum(y.astype(np.intp), rows - 1), np.minimum(x.astype(np.intp), cols - 1)
    v, u = y - row, x - col  # position inside the pixel's cell, 0..1
    half_line = max(1.0, size / 160) / pixels  # at least 1 pixel, so lines survive small sizes
    grid = (_line_distance(y, rows) < half_line) | (_line_distance(x, cols) < half_line)
    inside = (np.minimum(u, v) > MARK_MARGIN) & (np.maximum(u, v) < 1 - MARK_MARGIN)
    diagonal = np.minimum(np.abs(u - v), np.abs(u + v - 1)) / np.sqrt(2)
    ring = np.abs(np.hypot(u - 0.5, v - 0.5) - (0.5 - MARK_MARGIN - STROKE / 2))
    layout = _Layout(row * cols + col, grid, inside & (diagonal < STROKE / 2),
                     ring < STROKE / 2)
    for mask in layout:
        mask.setflags(write=False)
    return layout


def _line_distance(t: npt.NDArray[np.float64], n: int) -> npt.NDArray[np.float64]:
    """Distance to the nearest inner grid line; the outer border is left undrawn."""
    return np.abs(t - np.clip(np.round(t), 1, max(n - 1, 1))) if n > 1 else np.full_like(t, 9.0)


@lru_cache(maxsize=256)
def _frame(cells: bytes, size: int, rows: int, cols: int) -> npt.NDArray[np.uint8]:
    layout = _layout(size, rows, cols)
    marks = np.frombuffer(cells, dtype=np.int8)[layout.cell]
    frame = np.empty((*layout.cell.shape, 3), dtype=np.uint8)
    frame[:] = BACKGROUND
    frame[layout.grid] = GRID_COLOUR
    frame[layout.x_mark & (marks == game.X)] = X_COLOUR
    frame[layout.o_mark & (marks == game.O)] = O_COLOUR
    frame.setflags(write=False)  # shared by every caller through the cache
    return frame


def rgb_array(board: Any, size: int = 240, shape: Shape = (3, 3)) -> npt.NDArray[np.uint8]:
    """The board as a uint8 image whose longer side is ``size`` pixels: grid, red X strokes,
    blue O rings. ``board`` is a position code or the cells of a ``shape`` board."""
    least = max(MIN_SIZE, MIN_CELL * max(shape))
    size = check_int(size, "size", least, MAX_SIZE,
                     note=f" pixels (at least {MIN_CELL} a cell on a {shape[0]}x{shape[1]} board)")
    cells = board_cells(board, shape)
    return _frame(cells.tobytes(), size, *shape).copy()


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
        self._screen: Any = None
        self._clock: Any = None

    def show(self, frame: npt.NDArray[np.uint8]) -> None:
        """Draw one ``(height, width, 3)`` frame, opening the window on the first call."""
        pygame = self._pygame
        if self._screen is None:
            pygame.display.init()
            pygame.display.set_caption("Tic-tac-toe")
            self._screen = pygame.display.set_mode((frame.shape[1], frame.shape[0]))
            self._clock = pygame.time.Clock()
        self._screen.blit(pygame.surfarray.make_surface(frame.swapaxes(0, 1)), (0, 0))
        pygame.event.pump()  # an unserviced event queue makes the OS report the window as hung
        pygame.display.flip()
        self._clock.tick(self.fps)

    def close(self) -> None:
        """Close the window if one was opened; safe to call more than once."""
        if self._screen is not None:
            self._pygame.display.quit()
            self._pygame.quit()
            self._screen = self._clock = None


class Screen:
    """``render()`` for an env's ``render_mode``: the text, the image, or the image shown in a
    ``Window`` opened on first use (``close`` closes it). Shared by the single-agent and the
    two-player env."""

    def __init__(self, render_mode: str | None, fps: int) -> None:
        self.render_mode, self.fps = render_mode, fps
        self.window: Window | None = None

    def render(self, cells: npt.NDArray[np.int8], shape: Shape) -> Any:
        if self.render_mode == "ansi":
            return ansi(cells, shape)
        frame = rgb_array(cells, shape=shape)
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
