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
- **compact**, 13-16 cells, where 3**16 rows of 16 float64 would take 5.5 GB: the slots are the
  observations of the reachable positions with a move to make (``rules.positions``). An X-to-move
  position's observation is its code; an O-to-move position's has X and O swapped, so it holds one
  fewer of its own marks than of the other's while an X-to-move one holds as many: the two sets
  never meet, and one int32 array over the 3**cells codes maps an observation to its slot (-1 for
  none). Rows are the distinct canonical boards in code order: 4x4x4 has 9,062,619 slots in
  1,135,214 rows, 4x4x3 3,463,541 slots in 434,205 rows. Memory on 4x4x4: the slot array 172 MB,
  rows and columns per slot 36 + 145 MB, the agent's values and visit counts 145 + 145 MB; built
  in a few seconds (the positions, then one pass over them), once per process and board.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.game import Rules

MAX_CELLS = game.SOLVED_CELLS  # boards whose positions can be enumerated
CHUNK = 1 << 16  # codes per step of the vectorised passes: bounds their temporaries
Locate = Callable[[npt.ArrayLike], tuple[int, list[int], list[int]]]


@dataclass(frozen=True, eq=False)
class QIndex:
    """Slots of observations on one board, and the row and columns of each slot."""

    rules: Rules
    symmetric: bool
    n_rows: int
    rows: npt.NDArray[np.integer]  # (slots,)
    columns: npt.NDArray[np.integer]  # (slots, cells)
    slots: npt.NDArray[np.int32] | None  # per code; None: every code is its own slot (dense)

    def __deepcopy__(self, memo: dict) -> QIndex:
        return self  # read-only, and hundreds of MB on 16 cells: copies of an agent share it

    @property
    def shape(self) -> tuple[int, int]:
        """The shape of the agent's value and visit tables."""
        return self.n_rows, self.rules.n_cells

    def locate(self, codes: npt.NDArray[np.int64]) -> tuple[npt.NDArray, npt.NDArray, npt.NDArray]:
        """Per observation code: its row, its cells' columns, and whether it has a slot at all
        (unknown observations get row 0 and must be masked by the caller)."""
        if self.slots is None:
            return self.rows[codes], self.columns[codes], np.ones(codes.shape, dtype=bool)
        slots = self.slots[codes]
        known = slots >= 0
        slots = np.where(known, slots, 0)
        return self.rows[slots], self.columns[slots], known


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
def symmetry_tables(symmetric: bool = True, rules: Rules = game.TICTACTOE
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
def _dense(rules: Rules, symmetric: bool) -> QIndex:
    rows, columns = symmetry_tables(symmetric, rules)
    return QIndex(rules, symmetric, rules.n_codes, rows, columns, None)


@cache
def _compact(rules: Rules) -> QIndex:
    """Slots in the order of ``rules.positions`` (by layer, then absolute code)."""
    layers = [(layer.codes[~layer.terminal], layer.mark) for layer in rules.positions]
    total = sum(codes.size for codes, _ in layers)
    codes = np.empty(total, dtype=np.int64)  # observation codes, then canonical codes
    columns = np.empty((total, rules.n_cells), dtype=np.int8)
    canonical = np.empty(total, dtype=np.int64)
    done = 0
    for playing, mark in layers:
        for start in range(0, playing.size, CHUNK):
            cells = rules.cells_of(playing[start : start + CHUNK])
            if mark == game.O:  # seen from O's side
                cells = game.SWAP[cells]
            part = slice(done, done + len(cells))
            images = _images(rules, cells)
            codes[part], canonical[part] = images[:, 0], images.min(axis=1)
            columns[part] = _columns(rules, images, canonical[part])
            done += len(cells)
    # The rank of each canonical code among them all is its row: counted in the slot array
    # (no sort, no second array over 3**cells codes), which then takes its own values.
    slots = np.zeros(rules.n_codes, dtype=np.int32)
    slots[canonical] = 1
    np.cumsum(slots, out=slots)
    rows = slots[canonical] - 1
    slots.fill(-1)
    slots[codes] = np.arange(total, dtype=np.int32)
    for table in (rows, columns, slots):
        table.setflags(write=False)
    return QIndex(rules, True, int(rows.max()) + 1, rows, columns, slots)


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
    if qindex.rules is game.TICTACTOE:
        return _tictactoe_locator(qindex.symmetric)
    return numpy_locator(qindex)


def numpy_locator(qindex: QIndex) -> Locate:
    """The look-up on any board: the code by a dot product, then array look-ups."""
    rules, slots, rows, columns = qindex.rules, qindex.slots, qindex.rows, qindex.columns
    pow3, n_codes = rules.pow3, rules.n_codes

    def locate(obs: npt.ArrayLike) -> tuple[int, list[int], list[int]]:
        cells = np.asarray(obs)
        try:
            code = int(cells @ pow3)
        except (ValueError, TypeError):
            code = -1
        slot = -1 if not 0 <= code < n_codes else code if slots is None else int(slots[code])
        if slot < 0 or cells.shape != (rules.n_cells,):
            raise ValueError(f"an observation is {rules.n_cells} cells of 0, 1 or 2 from a "
                             f"{rules.name} position with a move to make; got {obs!r}")
        return int(rows[slot]), columns[slot].tolist(), np.flatnonzero(cells == 0).tolist()

    return locate


@cache
def _loop_tables(symmetric: bool) -> tuple[dict[bytes, int], list, list, list]:
    """3x3's look-ups as plain Python objects, several times faster than NumPy scalar indexing:
    observation bytes -> code, and per code its row, columns and legal cells."""
    rows, columns = symmetry_tables(symmetric)
    codes = {game.CELLS[code].tobytes(): code for code in range(game.N_CODES)}
    legal = [tuple(np.flatnonzero(mask).tolist()) for mask in game.LEGAL_MASK]
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
