"""A position as an image (``rgb_array``, and the ``human`` window): pure NumPy, no fonts.

The geometry is in whole pixels, so every grid line has the same width and every cell the same
size: a cell is ``cell_size`` pixels from one grid line to the next. A frame (a line twice as
thick) surrounds the board; the last move's cell is tinted, the winning line struck through,
and boards of more than ``notation.COMPACT_CELLS`` cells get column letters and row numbers
round them, drawn from a built-in 5x7 bitmap font (a font file would make the pixels depend on
the FreeType version, and the tests compare pixels).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from gym_tictactoe.game import notation

BACKGROUND = (245, 241, 230)
GRID_COLOUR = (70, 70, 70)
X_COLOUR = (200, 60, 50)
O_COLOUR = (40, 90, 180)
LAST_COLOUR = (250, 222, 140)  # the tint of the last move's cell
WIN_COLOUR = (30, 150, 70)
LABEL_COLOUR = (90, 90, 90)
WIN_ALPHA = 0.8
MIN_CELL = 12  # below this strokes and rings blur into blobs
MAX_CELL = 256
# Shape of a mark as fractions of a cell: empty margin round it, stroke thickness.
MARK_MARGIN = 0.2
STROKE = 0.12
WIN_STROKE = 0.1
Shape = tuple[int, int]

# Glyphs 5 wide, 7 high: digits and the column letters a-o.
_FONT_ROWS = {
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.",
    "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ...#. ..#.. .#... #####",
    "3": "####. ....# ....# .###. ....# ....# ####.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.",
    "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": ".###. #.... #.... ####. #...# #...# .###.",
    "7": "##### ....# ...#. ..#.. .#... .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.",
    "9": ".###. #...# #...# .#### ....# ....# .###.",
    "a": "..... ..... .###. ....# .#### #...# .####",
    "b": "#.... #.... ####. #...# #...# #...# ####.",
    "c": "..... ..... .###. #.... #.... #...# .###.",
    "d": "....# ....# .#### #...# #...# #...# .####",
    "e": "..... ..... .###. #...# ##### #.... .###.",
    "f": "..##. .#..# .#... ###.. .#... .#... .#...",
    "g": "..... .#### #...# #...# .#### ....# .###.",
    "h": "#.... #.... #.##. ##..# #...# #...# #...#",
    "i": "..#.. ..... .##.. ..#.. ..#.. ..#.. .###.",
    "j": "...#. ..... ..##. ...#. ...#. #..#. .##..",
    "k": "#.... #.... #..#. #.#.. ##... #.#.. #..#.",
    "l": ".##.. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "m": "..... ..... ##.#. #.#.# #.#.# #...# #...#",
    "n": "..... ..... #.##. ##..# #...# #...# #...#",
    "o": "..... ..... .###. #...# #...# #...# .###.",
}
FONT = {char: np.array([[c == "#" for c in row] for row in rows.split()], dtype=bool)
        for char, rows in _FONT_ROWS.items()}


def default_cell_size(shape: Shape) -> int:
    """80 pixels a cell up to 9x9, then smaller so the board stays about 720 pixels across."""
    return max(32, min(80, 720 // max(shape)))


class Layout(NamedTuple):
    """Where things go in an image of one board at one cell size (all in pixels)."""

    shape: Shape
    cell: int  # grid line to grid line
    line: int  # width of an inner grid line
    frame: int  # width of the frame: the outer grid lines, twice as thick as the inner
    scale: int  # of the 5x7 font; 0 when the board has no labels
    left: int  # x of the board's first grid line (the frame lies outside it)
    top: int
    height: int
    width: int

    def cell_box(self, cell: int) -> tuple[int, int, int, int]:
        """(y0, y1, x0, x1) of the inside of ``cell``, between its grid lines."""
        row, col = divmod(cell, self.shape[1])
        y0, x0 = self.top + row * self.cell + self.line, self.left + col * self.cell + self.line
        return y0, self.top + (row + 1) * self.cell, x0, self.left + (col + 1) * self.cell

    def centre(self, cell: int) -> tuple[float, float]:
        y0, y1, x0, x1 = self.cell_box(cell)
        return (y0 + y1) / 2, (x0 + x1) / 2

    def cell_at(self, x: int, y: int) -> int | None:
        """The cell under pixel (x, y), or None off the board (labels, frame, margin)."""
        col, row = (x - self.left) // self.cell, (y - self.top) // self.cell
        if 0 <= row < self.shape[0] and 0 <= col < self.shape[1]:
            return int(row * self.shape[1] + col)
        return None


@lru_cache(maxsize=32)
def layout(shape: Shape, cell_size: int) -> Layout:
    """The layout of a ``shape`` board at ``cell_size`` pixels a cell."""
    rows, cols = shape
    line = max(1, cell_size // 40)
    frame = 2 * line
    scale = max(1, round(cell_size / 18)) if notation.compact(shape) else 0
    label = 11 * scale + cell_size // 4 if scale else 0  # two digits and a gap, then air
    margin = frame + max(cell_size // 6, label)
    return Layout(shape, cell_size, line, frame, scale, margin, margin,
                  2 * margin + rows * cell_size + line, 2 * margin + cols * cell_size + line)


@lru_cache(maxsize=32)
def mark_tiles(inside: int) -> tuple[npt.NDArray[np.float32], ...]:
    """How much of each pixel of a cell's inside (``inside`` pixels square) the X and the O
    cover, 0 to 1: antialiased by the pixel's distance to the stroke's edge."""
    centres = (np.arange(inside) + 0.5) / inside  # pixel centres, 0..1 across the cell
    v, u = centres[:, None], centres[None, :]
    m = MARK_MARGIN
    diagonals = np.minimum(_segment_distance(u, v, (m, m), (1 - m, 1 - m)),
                           _segment_distance(u, v, (m, 1 - m), (1 - m, m)))
    ring = np.abs(np.hypot(u - 0.5, v - 0.5) - (0.5 - m - STROKE / 2))
    tiles = tuple(_cover(distance * inside, STROKE / 2 * inside) for distance in (diagonals, ring))
    for tile in tiles:
        tile.setflags(write=False)
    return tiles


def _segment_distance(x, y, start: tuple[float, float], end: tuple[float, float]):
    """Distance from points (x, y) to the segment from ``start`` to ``end`` ((x, y) pairs)."""
    (x0, y0), (x1, y1) = start, end
    dx, dy = x1 - x0, y1 - y0
    t = np.clip(((x - x0) * dx + (y - y0) * dy) / max(dx * dx + dy * dy, 1e-12), 0, 1)
    return np.hypot(x - x0 - t * dx, y - y0 - t * dy)


def _cover(distance: npt.NDArray, half_width: float) -> npt.NDArray[np.float32]:
    return np.clip(half_width + 0.5 - distance, 0, 1).astype(np.float32)


def draw(cells: npt.NDArray[np.int8], shape: Shape, cell_size: int, last: int | None,
         lines: list[tuple[int, ...]]) -> npt.NDArray[np.uint8]:
    """The image of a position: ``cells`` absolute (0 empty, 1 X, 2 O), ``last`` the last
    move's cell or None, ``lines`` the winning lines to strike through."""
    spec = layout(shape, cell_size)
    image = _empty_board(spec).copy()
    if last is not None:
        y0, y1, x0, x1 = spec.cell_box(last)
        image[y0:y1, x0:x1] = LAST_COLOUR
    x_tile, o_tile = mark_tiles(cell_size - spec.line)
    for cell in np.flatnonzero(cells).tolist():
        y0, y1, x0, x1 = spec.cell_box(cell)
        tile, colour = (x_tile, X_COLOUR) if cells[cell] == 1 else (o_tile, O_COLOUR)
        _blend(image[y0:y1, x0:x1], tile, colour)
    for line in lines:
        _strike(image, spec, line)
    return image


@lru_cache(maxsize=8)
def _empty_board(spec: Layout) -> npt.NDArray[np.uint8]:
    """Background, grid, frame and labels: what every position of a layout shares."""
    image = np.empty((spec.height, spec.width, 3), dtype=np.uint8)
    image[:] = BACKGROUND
    _grid(image, spec)
    if spec.scale:
        _labels(image, spec)
    image.setflags(write=False)  # shared through the cache
    return image


def _blend(region: npt.NDArray[np.uint8], alpha: npt.NDArray, colour: tuple) -> None:
    """Paint ``colour`` over ``region`` (in place) with per-pixel opacity ``alpha``."""
    pixels = region.astype(np.float32)
    pixels += alpha[..., None] * (np.asarray(colour, dtype=np.float32) - pixels)
    region[:] = np.rint(pixels)


def _grid(image: npt.NDArray[np.uint8], spec: Layout) -> None:
    rows, cols = spec.shape
    right = spec.left + cols * spec.cell + spec.line
    bottom = spec.top + rows * spec.cell + spec.line
    for k in range(rows + 1):
        y = spec.top + k * spec.cell
        image[y : y + spec.line, spec.left : right] = GRID_COLOUR
    for k in range(cols + 1):
        x = spec.left + k * spec.cell
        image[spec.top : bottom, x : x + spec.line] = GRID_COLOUR
    f = spec.frame - spec.line  # the outer grid lines, thickened outwards into the frame
    image[spec.top - f : spec.top, spec.left - f : right + f] = GRID_COLOUR
    image[bottom : bottom + f, spec.left - f : right + f] = GRID_COLOUR
    image[spec.top : bottom, spec.left - f : spec.left] = GRID_COLOUR
    image[spec.top : bottom, right : right + f] = GRID_COLOUR


def _strike(image: npt.NDArray[np.uint8], spec: Layout, line: tuple[int, ...]) -> None:
    """A stroke through the centres of a winning line's cells, a little past each end."""
    (y0, x0), (y1, x1) = spec.centre(line[0]), spec.centre(line[-1])
    half = WIN_STROKE / 2 * spec.cell
    top, bottom = int(min(y0, y1) - spec.cell / 2), int(max(y0, y1) + spec.cell / 2)
    left, right = int(min(x0, x1) - spec.cell / 2), int(max(x0, x1) + spec.cell / 2)
    y = np.arange(top, bottom, dtype=np.float32)[:, None] + 0.5
    x = np.arange(left, right, dtype=np.float32)[None, :] + 0.5
    reach = 0.3 * spec.cell / max(np.hypot(y1 - y0, x1 - x0), 1.0)  # past the end cells' centres
    start = (x0 - reach * (x1 - x0), y0 - reach * (y1 - y0))
    end = (x1 + reach * (x1 - x0), y1 + reach * (y1 - y0))
    cover = _cover(_segment_distance(x, y, start, end), half) * WIN_ALPHA
    _blend(image[top:bottom, left:right], cover, WIN_COLOUR)


def _labels(image: npt.NDArray[np.uint8], spec: Layout) -> None:
    """Column letters above and below the board, row numbers left and right of it."""
    rows, cols = spec.shape
    gap = spec.frame + spec.cell // 8
    board_bottom = spec.top + rows * spec.cell + spec.line
    board_right = spec.left + cols * spec.cell + spec.line
    for col in range(cols):
        x = spec.left + col * spec.cell + spec.cell // 2
        for y, anchor in ((spec.top - gap, "bottom"), (board_bottom + gap, "top")):
            _text(image, notation.LETTERS[col], x, y, spec.scale, anchor)
    for row in range(rows):
        y = spec.top + row * spec.cell + spec.cell // 2
        label = notation.row_label(row, rows)
        _text(image, label, spec.left - gap, y, spec.scale, "right")
        _text(image, label, board_right + gap, y, spec.scale, "left")


def _text(image: npt.NDArray[np.uint8], text: str, x: int, y: int, scale: int,
          anchor: str) -> None:
    """``text`` in the bitmap font, ``scale`` pixels a dot, placed by ``anchor`` at (x, y)."""
    glyphs = [np.kron(FONT[char], np.ones((scale, scale), dtype=bool)) for char in text]
    spacer = np.zeros((7 * scale, scale), dtype=bool)
    bitmap = np.hstack([part for glyph in glyphs for part in (glyph, spacer)][:-1])
    height, width = bitmap.shape
    top = {"bottom": y - height, "top": y}.get(anchor, y - height // 2)
    left = {"right": x - width, "left": x}.get(anchor, x - width // 2)
    image[top : top + height, left : left + width][bitmap] = LABEL_COLOUR
