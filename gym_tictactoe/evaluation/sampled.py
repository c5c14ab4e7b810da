"""Exact grading on boards of 17 to 64 cells, where no table of every position exists: the
optimal-move rate over a seeded sample of positions, each verdict exact (proved), with a Wilson
interval, and the best response per seat from the empty board where its walk finishes.

Two samples, each of independent positions (one per game or per random walk, so the interval's
independence assumption holds):

- ``games``: the policy plays both seats from a random opening (0 to ``OPENING_PLIES`` uniformly
  random plies); one of the positions where it moved is drawn uniformly. The positions a policy
  meets in its own play.
- ``uniform``: a depth drawn uniformly from 0 to cells - 1, that many uniformly random legal
  plies, and a finished position rejected (drawn again). Uniform over depths, then over random
  games: *not* uniform over the reachable set (a deep layer holds far more positions than an
  early one, and random play reaches some positions more often than others).

A verdict is exact: the policy's move keeps the game value when it is proved a win, or proved
as good as every other move; it is a blunder when another move is proved better. Where the
proofs ran out of their node budget it is *undecided*, counted apart and left out of the rate.

The best response walks from the empty board (:mod:`.walk`): the policy's one move where it is
to move (a deterministic policy is assumed: it is asked once per position), every reply of the
opponent, and a position where the opponent is proved to win ends the walk as a loss; lines of
one opponent move first, then two, and so on. A loss is decided as soon as one such line is
found; a draw or a win needs every line walked to the end, which the node and time budgets
rarely allow: the result is then ``undecided``, with how far the walk got (positions visited,
and the number of opponent moves within which no line reaches a proved loss).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from gym_tictactoe import game
from gym_tictactoe.checks import check_int
from gym_tictactoe.evaluation.answers import moves_of
from gym_tictactoe.game import Rules, book
from gym_tictactoe.game.proofs import check_provable
from gym_tictactoe.seeding import check_seed

SAMPLINGS = ("games", "uniform")
OPENING_PLIES = 4
MAX_SAMPLE = 100_000
PROOF_BUDGET = 2 * 10**6  # nodes per proof of one move's value
WALK_NODES = 2_000  # positions per best-response walk
WALK_SECONDS = 60.0
Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial rate (95 % by default); (0, 1) for n = 0."""
    if n == 0:
        return 0.0, 1.0
    p, z2 = successes / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def ask(policy: Any, rules: Rules, cells: np.ndarray) -> int:
    """The policy's move at absolute ``cells`` (the side to move sees 1 for its own stones);
    ``answers.NOT_A_CELL`` for an output that names no cell."""
    mark = int(game.X if (cells == game.X).sum() == (cells == game.O).sum() else game.O)
    view = cells.copy() if mark == game.X else game.SWAP[cells]
    mask = (cells == game.EMPTY).astype(np.int8)
    return int(moves_of(policy, view[None].astype(np.int8), mask[None], rules)[0])


def _random_plies(rules: Rules, cells: np.ndarray, plies: int, rng: np.random.Generator) -> bool:
    """Play up to ``plies`` random moves on ``cells``; False when the game ended on the way."""
    for _ in range(plies):
        if rules._cells_terminal(cells):
            return False
        mark = game.X if (cells == game.X).sum() == (cells == game.O).sum() else game.O
        cells[rng.choice(np.flatnonzero(cells == game.EMPTY))] = mark
    return not rules._cells_terminal(cells)


def sample_uniform(rules: Rules, rng: np.random.Generator) -> np.ndarray:
    """One position with a move to make (see the module docstring's ``uniform``)."""
    while True:
        cells = np.zeros(rules.n_cells, dtype=np.int8)
        if _random_plies(rules, cells, int(rng.integers(rules.n_cells)), rng):
            return cells


def sample_game(policy: Any, rules: Rules, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """One position of the policy's own game and its move there (module docstring's ``games``)."""
    while True:
        cells = np.zeros(rules.n_cells, dtype=np.int8)
        if not _random_plies(rules, cells, int(rng.integers(OPENING_PLIES + 1)), rng):
            continue
        seen = []
        while not rules._cells_terminal(cells):
            move = ask(policy, rules, cells)
            seen.append((cells.copy(), move))
            if not 0 <= move < rules.n_cells or cells[move] != game.EMPTY:
                break  # an illegal move ends the game (a forfeit)
            cells[move] = game.X if (cells == game.X).sum() == (cells == game.O).sum() else game.O
        return seen[int(rng.integers(len(seen)))]


def verdict(rules: Rules, cells: np.ndarray, move: int, budget: int) -> tuple[str, list[int]]:
    """("optimal" | "blunder" | "undecided", the proved value-keeping moves or [])."""
    if not 0 <= move < rules.n_cells or cells[move] != game.EMPTY:
        values = book.move_values(rules.encode(cells), rules, budget)
        return "blunder", book.best_of(values) or []
    code = rules.encode(cells)
    values = book.move_values(code, rules, budget)
    mine, known = values[move], [v for v in values.values() if v is not None]
    best = book.best_of(values)
    if mine is not None and (mine == 1 or (best is not None and move in best)):
        return "optimal", best or []
    if mine is not None and known and max(known) > mine:
        return "blunder", best or []
    return "undecided", best or []


@dataclass(frozen=True)
class SampledRate:
    """The optimal-move rate over ``decided`` of ``positions`` sampled positions, with its 95 %
    Wilson interval; ``first_blunders``: a few, as (absolute cells, move, value-keeping moves)."""

    sampling: str
    positions: int
    decided: int
    optimal: int
    rate: float | None
    interval: tuple[float, float]
    undecided: int
    seed: int
    proof_budget: int
    first_blunders: tuple[tuple[tuple[int, ...], int, tuple[int, ...]], ...]
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["interval"] = list(self.interval)
        out["first_blunders"] = [{"board": list(b), "move": m, "optimal_moves": list(o)}
                                 for b, m, o in self.first_blunders]
        return out


def sampled_rate(policy: Any, rules: Rules, n: int, seed: int = 0, sampling: str = "games",
                 proof_budget: int = PROOF_BUDGET, progress: Any = None) -> SampledRate:
    """The policy's optimal-move rate over ``n`` positions of ``sampling`` (see the module
    docstring), seeded; ``progress(done, n)`` is called after each position when given."""
    check_provable(rules)
    n, seed = int(check_int(n, "sample", 1, MAX_SAMPLE) or 0), int(check_seed(seed) or 0)
    proof_budget = int(check_int(proof_budget, "proof_budget", 1, 1 << 62) or 0)
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling must be one of {', '.join(SAMPLINGS)}; got {sampling!r}")
    rng, began = np.random.default_rng([seed, SAMPLINGS.index(sampling)]), time.perf_counter()
    counts = {"optimal": 0, "blunder": 0, "undecided": 0}
    blunders: list[tuple[tuple[int, ...], int, tuple[int, ...]]] = []
    for done in range(n):
        if sampling == "games":
            cells, move = sample_game(policy, rules, rng)
        else:
            cells = sample_uniform(rules, rng)
            move = ask(policy, rules, cells)
        found, best = verdict(rules, cells, move, proof_budget)
        counts[found] += 1
        if found == "blunder" and len(blunders) < 5:
            blunders.append((tuple(cells.tolist()), move, tuple(best)))
        if progress is not None:
            progress(done + 1, n)
    decided = counts["optimal"] + counts["blunder"]
    return SampledRate(sampling, n, decided, counts["optimal"],
                       counts["optimal"] / decided if decided else None,
                       wilson(counts["optimal"], decided), counts["undecided"], seed,
                       proof_budget, tuple(blunders), round(time.perf_counter() - began, 1))
