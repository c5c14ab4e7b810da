"""Exact game values of boards of 17 to 64 cells, proved on demand by the compiled search.

The Python edge of :mod:`.prover` and :mod:`.bitboard`: it checks the board and the position,
builds the board's bit masks from ``Rules.lines`` once, allocates the transposition table once
(its bytes checked before allocating), imports numba only when a proof is first asked for (so
``import gym_tictactoe`` and the tabled boards never load it), and turns an exhausted node budget
into ``None`` ("unknown"), never a guessed value.

    >>> from gym_tictactoe import game
    >>> from gym_tictactoe.game.proofs import Prover
    >>> prover = Prover(game.rules(4, 5, 4))
    >>> prover.value(game.EMPTY_BOARD)   # doctest: +SKIP
    0

Values are for the side to move: +1 it wins, 0 a draw, -1 it loses, with perfect play.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe.checks import check_int
from gym_tictactoe.game import EMPTY, NO_WINNER, O, Rules, X

MIN_CELLS, MAX_CELLS = 17, 64  # below: the table solver answers; above: no 64-bit board
DEFAULT_BUDGET = 10**9  # nodes; a node costs well under a microsecond
DEFAULT_TABLE_BYTES = 1 << 28
MAX_TABLE_BYTES = 1 << 34
_ENTRY_BYTES = 17  # two uint64 keys and one int8 of bounds
SYM_STONES = 64  # positions up to this many stones are keyed by their least symmetric image


class CoreUnavailable(RuntimeError):
    """The compiled core cannot run here: numba is missing or failed to compile it."""


def import_compiled(name: str) -> ModuleType:
    """The compiled module ``name``, imported (and numba with it) on first use; one
    CoreUnavailable line where numba is missing."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise CoreUnavailable(f"the compiled search core needs numba, which could not be "
                              f"imported ({error}): pip install 'numba>=0.60'") from None


def core() -> ModuleType:
    """The compiled prover module, imported (and numba with it) on first use."""
    return import_compiled("gym_tictactoe.game.prover")


def check_provable(rules: Rules, small: bool = False) -> None:
    """A ValueError unless the board has 17..64 cells (``small``: 1..64, for tests)."""
    low = 1 if small else MIN_CELLS
    if not low <= rules.n_cells <= MAX_CELLS:
        raise ValueError(f"proofs need a board of {low} to {MAX_CELLS} cells (one 64-bit word "
                         f"per side); the {rules.name} board has {rules.n_cells}"
                         + (". Boards of at most 16 cells are solved by tables (solver)"
                            if rules.n_cells < low else ""))


@dataclass(frozen=True)
class BitBoard:
    """A board's bit masks (see :mod:`.bitboard`), built once from its Rules."""

    full: np.uint64
    masks: npt.NDArray[np.uint64]
    line_cells: npt.NDArray[np.int64]
    inverse: npt.NDArray[np.int64]

    @classmethod
    def of(cls, rules: Rules) -> BitBoard:
        masks = np.array([sum(1 << c for c in line) for line in rules.lines], dtype=np.uint64)
        return cls(np.uint64(rules.full_mask), masks,
                   rules.line_array.astype(np.int64), rules.inverse_symmetries.astype(np.int64))

    def args(self) -> tuple:
        return self.full, self.masks, self.line_cells, self.inverse


def table_entries(table_bytes: Any) -> int:
    """How many entries fit ``table_bytes`` (checked: 1 KiB to 16 GiB)."""
    table_bytes = check_int(table_bytes, "table_bytes", 1 << 10, MAX_TABLE_BYTES)
    return table_bytes // _ENTRY_BYTES


def sides(rules: Rules, cells: npt.NDArray[np.int8]) -> tuple[np.uint64, np.uint64, int]:
    """(stones of the side to move, the other side's, the side to move) of an unfinished,
    reachable-looking position; a ValueError otherwise."""
    n_x, n_o = int((cells == X).sum()), int((cells == O).sum())
    if n_x not in (n_o, n_o + 1):
        raise ValueError(f"{n_x} X and {n_o} O stones: no game reaches this position")
    bits = [sum(1 << int(c) for c in np.flatnonzero(cells == mark)) for mark in (X, O)]
    mover = X if n_x == n_o else O
    me, opp = (bits[0], bits[1]) if mover == X else (bits[1], bits[0])
    return np.uint64(me), np.uint64(opp), mover


class Prover:
    """Proves positions of one board, keeping its transposition table between questions.

    ``budget``: nodes per question (an exhausted budget answers None). ``table_bytes``: the
    table's size, checked before it is allocated. ``small=True`` lets boards of fewer than 17
    cells in (the tests compare the prover with the table solver there).
    """

    def __init__(self, rules: Rules, budget: int = DEFAULT_BUDGET,
                 table_bytes: int = DEFAULT_TABLE_BYTES, small: bool = False,
                 sym_stones: int = SYM_STONES) -> None:
        check_provable(rules, small)
        self.rules, self.board = rules, BitBoard.of(rules)
        self.budget = check_int(budget, "budget", 1, 1 << 62)
        self.sym_stones = check_int(sym_stones, "sym_stones", -1, MAX_CELLS)
        entries = table_entries(table_bytes)
        self._core = core()
        self.tt = (np.zeros(entries, np.uint64), np.zeros(entries, np.uint64),
                   np.full(entries, -1, np.int8))
        rows = rules.n_cells + 1
        self.work = (np.zeros((rows, rules.n_cells), np.int64),
                     np.zeros((rows, rules.n_cells), np.int64),
                     np.zeros((rows, self._core.FRAME_INTS), np.int64),
                     np.zeros((rows, 4), np.uint64),
                     np.zeros((6, max(2 * len(rules.lines), rules.n_cells)), np.int64))
        self.nodes = 0  # summed over every question asked

    def value_of_cells(self, cells: npt.ArrayLike) -> int | None:
        """The value for the side to move of a board given as cells (0 empty, 1 X, 2 O), or
        None when the budget ran out."""
        code = self.rules.encode(cells)
        cells = self.rules.decode(code)
        me, opp, mover = sides(self.rules, cells)
        winner = self.rules.winner(code)
        if winner not in (NO_WINNER, X + O - mover):  # the side to move has a line, or both
            raise ValueError("the side to move has a line: no game reaches this position")
        if winner != NO_WINNER:
            return -1
        if (cells != EMPTY).all():
            return 0
        return self._prove(me, opp)

    def value(self, code: int) -> int | None:
        """The value for the side to move at a position code, or None (unknown)."""
        return self.value_of_cells(self.rules.decode(code))

    def _prove(self, me: np.uint64, opp: np.uint64) -> int | None:
        stats = np.array([0, self.budget, 0, self.sym_stones], dtype=np.int64)
        value = _interruptible(lambda: self._core.prove(me, opp, self.board.args(), self.tt,
                                                        self.work, stats), stats)
        self.nodes += int(stats[0])
        return None if value == self._core.UNKNOWN else int(value)

    def values(self, codes: npt.ArrayLike) -> npt.NDArray[np.int8]:
        """The value for the side to move of each position code (boards of at most 16 cells,
        where codes fit arrays), in one compiled call on the one table; ``budget`` is nodes for
        the whole batch, and 2 marks a position left unknown when it ran out."""
        cells = self.rules.cells_of(codes)
        n_x, n_o = (cells == X).sum(axis=1), (cells == O).sum(axis=1)
        if ((n_x != n_o) & (n_x != n_o + 1)).any():
            raise ValueError("a position's X and O counts differ by more than one X: "
                             "no game reaches it")
        bits = np.uint64(1) << np.arange(self.rules.n_cells, dtype=np.uint64)
        mover = np.where(n_x == n_o, X, O).astype(np.int8)[:, None]
        me = ((cells == mover) * bits).sum(axis=1, dtype=np.uint64)
        opp = ((cells == X + O - mover) * bits).sum(axis=1, dtype=np.uint64)
        out = np.zeros(len(cells), np.int8)
        stats = np.array([0, self.budget, 0, self.sym_stones], dtype=np.int64)
        _interruptible(lambda: self._core.prove_each(me, opp, self.board.args(), self.tt,
                                                     self.work, stats, out), stats)
        self.nodes += int(stats[0])
        if (out == -2).any():
            raise ValueError("the side to move has a line: no game reaches this position")
        return out

    def value_within(self, code: int, seconds: float, first_round: int = 1 << 20) -> int | None:
        """``value`` with a wall-clock budget as well: rounds of doubling node budgets (at most
        ``budget``) on the same table, which keeps what each unfinished round proved, until one
        finishes or the next would end past ``seconds``; then None."""
        budget, start, rounds = int(self.budget), time.perf_counter(), first_round
        try:
            while True:
                self.budget = min(rounds, budget)
                began = time.perf_counter()
                value = self.value(code)
                now = time.perf_counter()
                # The next round, twice the nodes, takes about twice as long as this one.
                if value is not None or self.budget == budget \
                        or now - start + 2 * (now - began) > seconds:
                    return value
                rounds *= 2
        finally:
            self.budget = budget

    def move_values(self, code: int) -> dict[int, int | None]:
        """Each legal move's value for the side to move (None where unknown)."""
        out = {}
        for cell in self.rules.legal_moves(code):
            child = self.rules.play(code, cell)
            value = self.value(child)
            winner = self.rules.winner(child)
            out[cell] = 1 if winner != NO_WINNER else (None if value is None else -value)
        return out


def _interruptible(search: Callable[[], int], stats: npt.NDArray[np.int64]) -> int:
    """``search()`` in a worker thread (the compiled search releases the GIL), so that Ctrl-C
    reaches this one: it zeroes the node budget, the search stops at its next node, and the
    KeyboardInterrupt goes on. numba's compile errors come back as one line."""
    found: list[Any] = []

    def run() -> None:
        try:
            found.append(search())
        except Exception as error:
            found.append(error)

    worker = threading.Thread(target=run, name="proof", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.05)
    except KeyboardInterrupt:
        stats[1] = 0  # BUDGET: the search sees it spent and returns
        worker.join()
        raise
    if isinstance(found[0], Exception):
        raise as_unavailable(found[0])
    return found[0]


def as_unavailable(error: Exception) -> Exception:
    """numba's typing and lowering errors as one line (CoreUnavailable), not pages; any other
    error as it is."""
    if type(error).__module__.startswith("numba"):
        return CoreUnavailable("the compiled search core failed to compile: "
                               f"{str(error).splitlines()[0]}")
    return error


def call_compiled(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` of a compiled kernel, compile errors as one line (as_unavailable)."""
    try:
        return function(*args)
    except Exception as error:
        raise as_unavailable(error) from None
