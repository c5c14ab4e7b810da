"""Pictures of a position: text (``ansi``), an image (``rgb_array``) and a window (``human``).

Text and images are pure NumPy functions of the position's code, so they never touch the
environment's random number generator and the same position always looks the same. Only
``Window`` needs pygame, and imports it when a window is first asked for, so rendering to text
or arrays works without the ``render`` extra.
"""

from __future__ import annotations

import operator
import os
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from gymnasium.error import DependencyNotInstalled

from gym_tictactoe import game

BACKGROUND = (245, 241, 230)
GRID_COLOUR = (70, 70, 70)
X_COLOUR = (200, 60, 50)
O_COLOUR = (40, 90, 180)
MIN_SIZE = 3 * 8  # below 8 pixels a cell, strokes and rings blur into blobs
# Shape of a mark as fractions of a cell: empty margin round it, stroke thickness.
MARK_MARGIN = 0.2
STROKE = 0.12


def _check_code(code: int) -> int:
    code = operator.index(code)
    if not 0 <= code < game.N_CODES:
        raise ValueError(f"a position code is an int in [0, {game.N_CODES}); got {code!r}")
    return code


def ansi(code: int) -> str:
    """The board as text: X, O and the number of each empty cell (the action that fills it)."""
    return game.render_text(_check_code(code)) + "\n"


class _Layout(NamedTuple):
    """Per-pixel masks for one image size, shared by every position drawn at that size."""

    cell: npt.NDArray[np.intp]  # the cell (0..8) each pixel lies in
    grid: npt.NDArray[np.bool_]
    x_mark: npt.NDArray[np.bool_]  # where an X would be drawn, in every cell
    o_mark: npt.NDArray[np.bool_]


@lru_cache(maxsize=8)
def _layout(size: int) -> _Layout:
    n = game.ROWS  # the board is square
    centres = (np.arange(size) + 0.5) * n / size  # pixel centres in cell units
    y, x = centres[:, None], centres[None, :]
    row, col = np.minimum(y.astype(np.intp), n - 1), np.minimum(x.astype(np.intp), n - 1)
    v, u = y - row, x - col  # position inside the pixel's cell, 0..1
    half_line = max(1.0, size / 160) * n / size  # at least 1 pixel, so lines survive small sizes
    grid = (_line_distance(y, n) < half_line) | (_line_distance(x, n) < half_line)
    inside = (np.minimum(u, v) > MARK_MARGIN) & (np.maximum(u, v) < 1 - MARK_MARGIN)
    diagonal = np.minimum(np.abs(u - v), np.abs(u + v - 1)) / np.sqrt(2)
    ring = np.abs(np.hypot(u - 0.5, v - 0.5) - (0.5 - MARK_MARGIN - STROKE / 2))
    layout = _Layout(row * n + col, grid, inside & (diagonal < STROKE / 2), ring < STROKE / 2)
    for mask in layout:
        mask.setflags(write=False)
    return layout


def _line_distance(t: npt.NDArray[np.float64], n: int) -> npt.NDArray[np.float64]:
    """Distance to the nearest inner grid line; the outer border is left undrawn."""
    return np.abs(t - np.clip(np.round(t), 1, n - 1))


@lru_cache(maxsize=256)
def _frame(code: int, size: int) -> npt.NDArray[np.uint8]:
    layout = _layout(size)
    marks = game.CELLS[code][layout.cell]
    frame = np.empty((size, size, 3), dtype=np.uint8)
    frame[:] = BACKGROUND
    frame[layout.grid] = GRID_COLOUR
    frame[layout.x_mark & (marks == game.X)] = X_COLOUR
    frame[layout.o_mark & (marks == game.O)] = O_COLOUR
    frame.setflags(write=False)  # shared by every caller through the cache
    return frame


def rgb_array(code: int, size: int = 240) -> npt.NDArray[np.uint8]:
    """The board as a ``(size, size, 3)`` uint8 image: grid, red X strokes, blue O rings."""
    size = operator.index(size)
    if size < MIN_SIZE:
        raise ValueError(f"size must be at least {MIN_SIZE} pixels; got {size}")
    return _frame(_check_code(code), size).copy()


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
