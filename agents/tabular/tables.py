"""Where tabular Q-learning keeps Q(observation, cell) on each board, shared across symmetries.

An observation is the board seen by the side to move (1 its own mark, 2 the other's), named by
its base-3 code. A ``QIndex`` gives every observation it knows a *slot*, and every slot its row
of the agent's table and the column of each of its cells. With symmetry sharing a row belongs to
a class of symmetric observations (the lowest image code is the class's canonical board) and a
cell's column is the cell it becomes on the canonical board; when that board is symmetric itself,
equivalent cells share the lowest column, so they always hold one value.

Two layouts behind one interface:

- **dense**, boards of at most ``game.TABLE_CELLS`` (12) cells, 3x3 among them: every code is its
  own slot and its row is its canonical code, so the table has 3**cells rows, most of them never
  used (3x3: 19,683 rows, 627 of them reachable positions with a move to make).
- **compact**, 13-16 cells, where 3**16 rows of 16 float64 would take 5.5 GB: only the
  observations of the reachable positions with a move to make (``rules.positions``) are known.
  An X-to-move position's observation is its code; an O-to-move position's has X and O swapped,
  so it holds one fewer of its own marks than of the other's while an X-to-move one holds as
  many: the two sets never meet, and one int32 per code (3**cells of them) says where an
  observation goes: its row and the symmetry that takes it to its canonical board, or -1 for
  none. Rows are the distinct canonical boards in code order: 4x4x4 has 9,062,619 observations
  in 1,135,214 rows, 4x4x3 3,463,541 in 434,205. Memory on 4x4x4: the int32 per code 172 MB,
  the cell classes per row 18 MB, the agent's values and visit counts 145 + 145 MB; built in a
  few seconds (the positions, then one pass over them), once per process and board.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.game import Rules

MAX_CELLS = game.SOLVED_CELLS  # boards whose positions can be enumerated
CHUNK = 1 << 16  # codes per step of the vectorised passes: bounds their temporaries
Locate = Callable[[npt.ArrayLike], tuple[int, list[int], list[int]]]


@dataclass(frozen=True, eq=False)
class QIndex:
    """Where the values of each observation of one board live in the agent's table."""

    rules: Rules
    symmetric: bool
    n_rows: int

    def __deepcopy__(self, memo: dict) -> QIndex:
        return self  # read-only, and hundreds of MB on 16 cells: copies of an agent share it

    @property
    def shape(self) -> tuple[int, int]:
        """The shape of the agent's value and visit tables."""
        return self.n_rows, self.rules.n_cells

    def locate(self, codes: npt.NDArray[np.int64]) -> tuple[npt.NDArray, npt.NDArray, npt.NDArray]:
        """Per observation code: its row, its cells' columns, and whether the index knows it
        (unknown observations get row 0 and must be masked by the caller)."""
        raise NotImplementedError

    def locate_one(self, code: int) -> tuple[int, list[int]] | None:
        """One code's row and columns, or None when the index does not know it."""
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class DenseIndex(QIndex):
    """Every code of a board of at most 12 cells has its row and columns."""

    rows: npt.NDArray[np.int64]  # (codes,)
    columns: npt.NDArray[np.int8]  # (codes, cells)

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes + self.columns.nbytes

    def locate(self, codes):
        return self.rows[codes], self.columns[codes], np.ones(codes.shape, dtype=bool)

    def locate_one(self, code: int) -> tuple[int, list[int]] | None:
        if not 0 <= code < self.rules.n_codes:
            return None
        return int(self.rows[code]), self.columns[code].tolist()


@dataclass(frozen=True, eq=False)
class CompactIndex(QIndex):
    """The observations of positions with a move to make, on 13-16 cells. Per code one int32,
    ``row * symmetries + s`` with s the symmetry that takes the observation to its canonical
    board (-1: no such observation), and per row the class of each cell of the canonical board
    (its lowest equivalent cell): cell a of the observation has column
    ``cell_classes[row][inverse_symmetries[s][a]]``. Columns per observation would take 145 MB
    more on 4x4x4."""

    slots: npt.NDArray[np.int32]  # (codes,)
    cell_classes: npt.NDArray[np.int8]  # (rows, cells)

    @property
    def nbytes(self) -> int:
        return self.slots.nbytes + self.cell_classes.nbytes

    def locate(self, codes):
        slots = self.slots[codes]
        known = slots >= 0
        rows, symmetries = np.divmod(np.where(known, slots, 0), len(self.rules.symmetries))
        # Each row read whole (one cache line from a table of tens of MB), then its cells
        # permuted where it now lies: a training step's cheapest path.
        classes = self.cell_classes.take(rows, axis=0)
        at = self.rules.inverse_symmetries.take(symmetries, axis=0)
        at += block_offsets(len(codes), self.rules.n_cells)
        return rows, classes.take(at), known

    def locate_one(self, code: int) -> tuple[int, list[int]] | None:
        slot = int(self.slots[code]) if 0 <= code < self.rules.n_codes else -1
        if slot < 0:
            return None
        row, symmetry = divmod(slot, len(self.rules.symmetries))
        return row, self.cell_classes[row][self.rules.inverse_symmetries[symmetry]].tolist()


@lru_cache(maxsize=2)
def block_offsets(count: int, width: int) -> npt.NDArray[np.intp]:
    """(count, width): where each row of a (count, width) block starts in its flat form, for
    gathers row by row (read-only, kept for the last sizes asked: a training run asks one)."""
    offsets = np.repeat(np.arange(count, dtype=np.intp) * width, width).reshape(count, width)
    offsets.setflags(write=False)
    return offsets


def index(rules: Rules, symmetric: bool = True) -> QIndex:
    """The (cached) index of a solvable board: dense up to 12 cells, compact beyond."""
    if rules.n_cells > MAX_CELLS:
        raise ValueError(f"tabular Q-learning needs a board of at most {MAX_CELLS} cells; the "
                         f"{rules.name} board has {rules.n_cells}")
    if rules.tabled:
        return _dense(rules, symmetric)
    if not symmetric:
        raise ValueError(f"symmetric=False needs a board of at most {game.TABLE_CELLS} cells")
    return _compact(rules)


@cache
def symmetry_tables(symmetric: bool, rules: Rules
                    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int8]]:
    """Per code of a board of at most 12 cells: its row and, per cell, the column in that row.

    Without sharing every code is its own row and every cell its own column.
    """
    n, n_codes = rules.n_cells, rules.n_codes
    if not symmetric:
        rows = np.arange(n_codes, dtype=np.int64)
        columns = np.tile(np.arange(n, dtype=np.int8), (n_codes, 1))
    else:
        rows = rules.tables.canonical.astype(np.int64)
        columns = np.empty((n_codes, n), dtype=np.int8)
        for start in range(0, n_codes, CHUNK):
            part = slice(start, start + CHUNK)
            columns[part] = _columns(rules, _images(rules, rules.tables.cells[part]), rows[part])
    for table in (rows, columns):
        table.setflags(write=False)
    return rows, columns


@cache
def _dense(rules: Rules, symmetric: bool) -> DenseIndex:
    rows, columns = symmetry_tables(symmetric, rules)
    return DenseIndex(rules, symmetric, rules.n_codes, rows, columns)


@cache
def _compact(rules: Rules) -> CompactIndex:
    """Observations taken in the order of ``rules.positions`` (by layer, then absolute code)."""
    layers = [(layer.codes[~layer.terminal], layer.mark) for layer in rules.positions]
    total = sum(codes.size for codes, _ in layers)
    codes, canonical = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
    symmetry, done = np.empty(total, dtype=np.int8), 0
    for playing, mark in layers:
        for start in range(0, playing.size, CHUNK):
            cells = rules.cells_of(playing[start : start + CHUNK])
            if mark == game.O:  # seen from O's side
                cells = game.SWAP[cells]
            part, images = slice(done, done + len(cells)), _images(rules, cells)
            symmetry[part] = images.argmin(axis=1)  # the first symmetry reaching the minimum
            codes[part], canonical[part] = images[:, 0], images.min(axis=1)
            done += len(cells)
    # The rank of a canonical code among them all is its row: counted in the slot array (no
    # sort, no second array over 3**cells codes), which then takes its own values.
    slots = np.zeros(rules.n_codes, dtype=np.int32)
    slots[canonical] = 1
    classes = np.flatnonzero(slots)  # the canonical boards in code order, one per row
    np.cumsum(slots, out=slots)
    rows = slots[canonical] - 1
    del canonical
    slots.fill(-1)
    slots[codes] = rows * len(rules.symmetries) + symmetry
    cell_classes = np.concatenate([_columns(rules, _images(rules, rules.cells_of(part)), part)
                                   for part in np.array_split(classes, -(-classes.size // CHUNK))])
    for table in (slots, cell_classes):
        table.setflags(write=False)
    return CompactIndex(rules, True, classes.size, slots, cell_classes)


def _images(rules: Rules, cells: npt.NDArray[np.int8]) -> npt.NDArray[np.int64]:
    """(N, symmetries): the code of each board's image under each symmetry (identity first).
    The image puts cell a at ``inverse_symmetries[s][a]``, so its code weighs cell a by 3 to
    that power: one product with a (cells, symmetries) matrix of powers of 3."""
    return cells.astype(np.int64) @ _image_powers(rules)


@cache
def _image_powers(rules: Rules) -> npt.NDArray[np.int64]:
    return rules.pow3[rules.inverse_symmetries].T.copy()


def _columns(rules: Rules, images: npt.NDArray[np.int64],
             canonical: npt.NDArray[np.int64]) -> npt.NDArray[np.int8]:
    """(N, cells): where each cell lands on the canonical board. Symmetry s takes cell a to cell
    ``inverse_symmetries[s][a]`` of the image; when several symmetries reach the canonical board
    (it is symmetric itself), equivalent cells share the lowest."""
    inverse = rules.inverse_symmetries.astype(np.int8)
    reaches = images == canonical[:, None]
    columns = inverse[reaches.argmax(axis=1)]
    several = reaches.sum(axis=1) > 1  # few boards are symmetric: only they need the minimum
    if several.any():
        candidates = np.where(reaches[several][:, :, None], inverse[None], np.int8(rules.n_cells))
        columns[several] = candidates.min(axis=1)
    return columns


# --- look-ups for the training loop ---------------------------------------------------------


def locator(qindex: QIndex) -> Locate:
    """``locate(observation) -> (row, columns, legal cells)`` for an observation with a move to
    make, as plain Python values: the Python-object tables on 3x3, NumPy elsewhere."""
    if qindex.rules == game.TICTACTOE:
        return _tictactoe_locator(qindex.symmetric)
    return numpy_locator(qindex)


def numpy_locator(qindex: QIndex) -> Locate:
    """The look-up on any board: the code by a dot product, then the index's arrays."""
    rules, locate_one = qindex.rules, qindex.locate_one

    def locate(obs: npt.ArrayLike) -> tuple[int, list[int], list[int]]:
        cells = np.asarray(obs)
        try:
            found = locate_one(int(cells @ rules.pow3)) if cells.shape == (rules.n_cells,) else None
        except (ValueError, TypeError):
            found = None
        if found is None:
            raise ValueError(f"an observation is {rules.n_cells} cells of 0, 1 or 2 from a "
                             f"{rules.name} position with a move to make; got {obs!r}")
        return found[0], found[1], np.flatnonzero(cells == 0).tolist()

    return locate


@cache
def _loop_tables(symmetric: bool) -> tuple[dict[bytes, int], list, list, list]:
    """3x3's look-ups as plain Python objects, several times faster than NumPy scalar indexing:
    observation bytes -> code, and per code its row, columns and legal cells."""
    rules = game.TICTACTOE
    rows, columns = symmetry_tables(symmetric, rules)
    codes = {rules.tables.cells[code].tobytes(): code for code in range(rules.n_codes)}
    legal = [tuple(np.flatnonzero(mask).tolist()) for mask in rules.tables.legal_mask]
    return codes, rows.tolist(), [tuple(row) for row in columns.tolist()], legal


@cache
def _tictactoe_locator(symmetric: bool) -> Locate:
    codes, rows, columns, legal = _loop_tables(symmetric)

    def locate(obs: npt.ArrayLike) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
        try:
            code = codes[np.asarray(obs, dtype=np.int8).tobytes()]
        except (KeyError, ValueError, TypeError, OverflowError):
            raise ValueError(f"an observation is 9 cells of 0, 1 or 2; got {obs!r}") from None
        return rows[code], columns[code], legal[code]

    return locate
