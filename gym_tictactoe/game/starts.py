"""Exploring starts: episodes that begin at a random position instead of the empty board.

A game started from the empty board rarely reaches the positions off the agent's own line, so a
learner never sees them; starting some episodes at a random position, the agent playing the
side to move there, shows it the rest of the game.

- On boards of at most ``game.SOLVED_CELLS`` (16) cells the start is drawn uniformly from every
  reachable position that is not finished (4,520 on 3x3, the empty board among them).
- On bigger boards the positions cannot be enumerated: the start is the empty board after a
  random number of uniformly random moves (the number uniform in ``0..cells-1``), stopping before
  a move that would win. So it is not uniform over positions: it favours the ones that many move
  orders reach, and boards where the first moves often win stop early.

Every draw comes from the generator passed in (the env's ``np_random``). ``StartWeights`` replaces
the uniform draw on solvable boards with any distribution over their unfinished positions (a
learner putting its starts where its play is still wrong).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.checks import check_choice, check_number
from gym_tictactoe.game import Rules

STARTS = ("empty", "random")
# random_play works on chunks of boards whose temporaries take at most about this many bytes.
START_CHUNK_BYTES = 32 * 2**20


def check_start(start: Any, name: str = "start") -> str:
    return check_choice(start, name, STARTS)


def check_start_probability(probability: Any) -> float:
    """A float in [0, 1]: the chance that an episode of a ``start="random"`` env starts at a
    random position."""
    return check_number(probability, "start_probability", 0.0, 1.0)


def random_starts(rng: np.random.Generator, size: int, start: str,
                  probability: float) -> npt.NDArray[np.bool_] | None:
    """Which of ``size`` new episodes start at a random position; None when none can (the
    default, ``start="empty"``, draws nothing from ``rng``). A coin is drawn only when the
    probability is strictly between 0 and 1."""
    if start == "empty" or probability == 0.0:
        return None
    if probability == 1.0:
        return np.ones(size, dtype=bool)
    return rng.random(size) < probability


@cache
def start_codes(rules: Rules) -> npt.NDArray[np.int64]:
    """Every reachable position of a solvable board that is not finished, by layer then code."""
    rules.check_solvable("enumerating the start positions")
    codes = np.concatenate([layer.codes[~layer.terminal] for layer in rules.positions])
    codes.setflags(write=False)
    return codes


def draw_starts(rules: Rules, rng: np.random.Generator, size: int
                ) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int64] | None]:
    """``size`` random start positions: their absolute cells ``(size, cells)`` and, on solvable
    boards, their codes (see the module docstring for how they are drawn)."""
    if rules.solvable:
        pool = start_codes(rules)
        codes = pool[rng.integers(0, pool.size, size=size)]
        return rules.cells_of(codes), codes
    return random_play(rules, rng, size), None


class StartWeights:
    """A start distribution on a solvable board: ``weights`` (finite, >= 0, not all 0) over
    ``codes``, reachable unfinished positions; ``codes=None`` means ``start_codes(rules)``, in its
    order. A code may appear more than once (its weights add up). Anything else is a one-line
    ValueError or TypeError, before any draw."""

    def __init__(self, rules: Rules, weights: npt.ArrayLike,
                 codes: npt.ArrayLike | None = None) -> None:
        if not rules.solvable:
            raise ValueError(f"start weights need a board of at most {game.SOLVED_CELLS} cells, "
                             f"whose positions are enumerated; {rules.name} has "
                             f"{rules.n_cells}: leave them None there (uniform starts)")
        self.rules = rules
        self.codes = start_codes(rules) if codes is None else _check_codes(rules, codes)
        weights = _as_array(weights, "start weights", "fi")
        if weights.shape != self.codes.shape:
            what = "start_codes(rules), " if codes is None else "codes, "
            raise ValueError(f"start weights must have shape {self.codes.shape}, one per "
                             f"position of {what}got shape {weights.shape}")
        weights = weights.astype(np.float64)
        largest = weights.max(initial=0.0)
        if not np.isfinite(weights).all() or (weights < 0).any() or not largest > 0:
            raise ValueError("start weights must be finite numbers >= 0, not all 0; got "
                             f"{weights.min(initial=0.0)} to {largest} (NaN: "
                             f"{np.isnan(weights).any()})")
        with np.errstate(over="ignore"):
            self.cumulative = np.cumsum(weights)
        if not np.isfinite(self.cumulative[-1]):
            # Weights near the largest float sum to inf, which would send every draw to the
            # last position: scaled to at most 1 first, they draw in the same proportions.
            self.cumulative = np.cumsum(weights / largest)

    def draw(self, rng: np.random.Generator, size: int) -> npt.NDArray[np.int64]:
        """``size`` codes drawn with probability proportional to their weights."""
        # side="right": a drawn u never lands on a zero-weight code (its cumulative sum equals
        # the one before it).
        u = rng.random(size) * self.cumulative[-1]
        found = np.searchsorted(self.cumulative, u, side="right")
        return self.codes[np.minimum(found, self.codes.size - 1)]


def _as_array(values: npt.ArrayLike, name: str, kinds: str) -> npt.NDArray:
    """``values`` as a 1-D array of integers ("i") or numbers ("fi"), else a one-line error."""
    array = np.asarray(values)
    if array.dtype == np.bool_ or array.dtype.kind not in kinds + "u":
        what = "integers" if kinds == "i" else "numbers"
        raise TypeError(f"{name} must be an array of {what}; got dtype {array.dtype}")
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array; got shape {array.shape}")
    return array


def _check_codes(rules: Rules, codes: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Start codes: reachable positions of ``rules`` where the game is not over."""
    from gym_tictactoe.game import solver  # the solution is what knows reachability

    codes = _as_array(codes, "start codes", "i").astype(np.int64)
    inside = (codes >= 0) & (codes < rules.n_codes)
    reachable = np.zeros(codes.shape, dtype=bool)
    reachable[inside] = solver.solve(rules).reachable[codes[inside]]
    if not reachable.all():
        bad = int(codes[~reachable][0])
        raise ValueError(f"start codes must be reachable positions of {rules.name}; code {bad} "
                         f"(and {int((~reachable).sum()) - 1} more) is not")
    finished = rules.terminal_of(codes)
    if finished.any():
        raise ValueError(f"start codes must be unfinished positions; code {int(codes[finished][0])}"
                         f" (and {int(finished.sum()) - 1} more) is a finished game")
    return codes


def side_to_move(cells: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
    """The mark to move on each of ``cells`` ``(N, cells)``: X after an even number of marks."""
    marks = (cells != game.EMPTY).sum(axis=1)
    return np.where(marks % 2 == 0, game.X, game.O).astype(np.int8)


def random_play(rules: Rules, rng: np.random.Generator, size: int) -> npt.NDArray[np.int8]:
    """``size`` boards after a random number (uniform in 0..cells-1) of uniformly random moves
    from the empty board, each game stopped before the move that would win it.

    A board's moves are the first cells of a random permutation of all cells, which is a
    uniformly random empty cell at every move. Where each cell falls in its permutation (its
    rank) says it all: X takes the even ranks, O the odd ones, and the game is stopped before the
    first rank that completes a line of one mark. Boards are drawn and finished in chunks of
    about ``START_CHUNK_BYTES``; the draws are those of one array."""
    n = rules.n_cells
    ranks = np.empty((size, n), dtype=np.uint8)  # boards without tables have 17 to 225 cells
    chunk = max(1, START_CHUNK_BYTES // (16 * n + 4 * rules.line_array.size))
    for first in range(0, size, chunk):
        part = ranks[first:first + chunk]
        order = np.argsort(rng.random(part.shape), axis=1)
        np.put_along_axis(part, order, np.arange(n, dtype=np.uint8)[None], axis=1)
    lengths = rng.integers(0, n, size=size)
    for first in range(0, size, chunk):
        part = ranks[first:first + chunk]
        stop = np.minimum(lengths[first:first + chunk], _first_win(rules, part))
        part[...] = np.where(part < stop[:, None], (part & 1) + game.X, game.EMPTY)
    return ranks.view(np.int8)


def _first_win(rules: Rules, ranks: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """For boards whose cells are played in the order of their ``ranks`` (N, cells), the first
    ply that completes a line of one mark (the line's last rank), or 255 for none."""
    # One (N, lines) array per position along the lines: element-wise work over long rows is
    # several times cheaper than reducing many short (k-long) rows.
    along = [ranks[:, cells] for cells in _line_positions(rules)]
    last, odd = along[0], along[0] & 1
    for ranked in along[1:]:
        np.maximum(last, ranked, out=last)
        odd += ranked & 1
    last[(odd != 0) & (odd != rules.win_length)] = 255  # both marks on the line
    return last.min(axis=1, initial=255)


@cache
def _line_positions(rules: Rules) -> npt.NDArray[np.intp]:
    """(k, lines): the cell at each position along each line, contiguous per position."""
    return np.ascontiguousarray(rules.line_array.T)
