"""The Python edge of the compiled alpha-beta search (:mod:`.negamax`): it imports numba only
when a search is first run (so ``import gym_tictactoe`` never does), allocates one search's
scratch position and transposition table, and hands them to the compiled functions.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import numpy as np
import numpy.typing as npt

from gym_tictactoe.game.proofs import call_compiled, import_compiled
from gym_tictactoe.players.threats import Geometry

# Transposition-table slots, 48 bytes each (two 64-bit keys, depth, bound, score, move): the
# ceiling, 2**20 (48 MB), holds every position a search of 1,000,000 nodes stores (only the nodes
# whose moves are searched store one), and overwrites beyond.
MIN_TABLE, MAX_TABLE = 1 << 10, 1 << 20
KEPT_TABLE = 1 << 17  # tables up to this many slots (6 MB) are kept for the thread's next search
UNBOUNDED = 1 << 61  # no node budget (the exhaustive search of a solvable board)


def compiled() -> ModuleType:
    """The compiled search module, imported (and numba with it) on first use."""
    return import_compiled("gym_tictactoe.players.negamax")


def table_slots(budget: int | None, cells: int) -> int:
    """A power of two of at least twice the positions the search may store (each node stores
    at most one), so that no entry is lost; the exhaustive search of a small board gets room
    for its positions up to MAX_TABLE and overwrites beyond."""
    wanted = 3**cells if budget is None else budget + 2
    return int(min(MAX_TABLE, max(MIN_TABLE, 1 << (2 * wanted - 1).bit_length())))


def new_table(slots: int) -> tuple:
    """An empty transposition table: keys (slots, 2), (depth + 1, bound, score, move) (slots,
    4), and the list of used slots (its count first), a quarter of the table long."""
    return (np.zeros((slots, 2), np.uint64), np.zeros((slots, 4), np.int64),
            np.zeros(slots // 4 + 1, np.int64))


_kept = threading.local()  # per thread: slots -> an empty table


@contextmanager
def lent_table(core: ModuleType, slots: int) -> Iterator[tuple]:
    """An empty table of ``slots`` slots for one search, emptied afterwards and kept for the
    thread's next search when small (one per thread: no lock, nothing shared)."""
    tables = _kept.__dict__.setdefault("tables", {})
    table = tables.pop(slots, None) if slots <= KEPT_TABLE else None
    table = table if table is not None else new_table(slots)
    try:
        yield table
    finally:
        core.clear(table)
        if slots <= KEPT_TABLE:
            tables[slots] = table


class Search:
    """One search from one position: its scratch position, table and counters. ``table``: an
    empty table to use (from :func:`new_table`, emptied by the compiled ``clear`` after a
    search) instead of allocating one: a fresh one costs page faults a short search notices."""

    def __init__(self, core: ModuleType, geo: Geometry, board: npt.NDArray[np.int8],
                 near: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]], *,
                 budget: int | None, exhaustive: bool, width: int | None,
                 time_limit: float | None, table: tuple | None = None) -> None:
        self.core, cells, lines = core, geo.cells, geo.line_cells.shape[0]
        self.geo = (geo.line_cells, geo.starts, geo.through, geo.own_gain, geo.other_loss,
                    geo.gain_change, geo.steps, geo.fours, geo.nearness, geo.zobrist,
                    near[0], near[1], geo.order)
        self.pos = (np.zeros(lines, np.int64), np.zeros(2, np.int64),
                    np.zeros((2, lines), np.int64), np.zeros((2, 2), np.int64),
                    np.zeros((2, cells), np.int64), np.zeros(cells, np.int64),
                    np.zeros(cells, np.int64), np.zeros(2, np.uint64), np.zeros(2, np.int64))
        self.tt = table if table is not None else new_table(
            table_slots(None if exhaustive else budget, cells))
        width = cells if width is None or exhaustive else min(width, cells)
        counters = np.array([0, UNBOUNDED, 0, UNBOUNDED if budget is None else budget,
                             time_limit is not None, exhaustive, width], dtype=np.int64)
        floats = np.array([time.perf_counter(), time_limit or 0.0])
        self.run = (np.zeros((cells + 2, cells + 1), np.int64),
                    np.zeros((2, cells + 1), np.int64), counters, floats,
                    np.zeros((cells + 2, core.FRAME_INTS), np.int64))
        call_compiled(core.setup, board.astype(np.int64), self.geo, self.pos)

    @property
    def nodes(self) -> int:
        return int(self.run[2][self.core.NODES])

    def ordered(self) -> list[int]:
        """The root's candidate moves, best first (at most ``width``)."""
        n = call_compiled(self.core.ordered, -1, 0, self.geo, self.pos, self.run)
        return self.run[0][0, :n].tolist()

    def deepen(self, moves: list[int], max_depth: int) -> tuple[int, set[int], int]:
        """Iterative deepening over the root ``moves``: (best score, best moves, depth done)."""
        best_moves = np.zeros(len(moves), np.int64)
        best, count, done = call_compiled(self.core.deepen, np.array(moves, np.int64), max_depth,
                                          best_moves, self.geo, self.pos, self.tt, self.run)
        return int(best), set(best_moves[:count].tolist()), int(done)

