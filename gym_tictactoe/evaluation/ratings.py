"""Elo ratings from match results: a Bradley-Terry fit (``choix``) with a confidence interval.

Bradley-Terry: player ``i`` beats ``j`` with probability ``1 / (1 + exp(t_j - t_i))``; Elo's
scale is the same model with ``R = 400 * t / ln 10``. A draw counts half a win for each side.
The strengths are fitted by ``choix.opt_pairwise``, whose small penalty ``alpha * |t|**2`` (a
wide Gaussian prior) keeps them finite when a player won or lost every game, where no finite
maximum-likelihood rating exists: such a rating says only "at least" (or "at most") this, and
its interval, from the prior, is wide. The interval is the normal approximation at the fit
(the inverse of the penalized negative log-likelihood's Hessian, also ``choix``'s). Ratings are
relative to one player, rated 0 (the first listed); an interval is that of the player's
strength against the mean of all the players, so one player's one-sided record (random never
winning) widens its own interval, not everyone's.

``choix`` is in the ``ratings`` extra: ``pip install "gymnasium-tictactoe[ratings]"``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gym_tictactoe.extras import require

ELO = 400 / math.log(10)
PENALTY = 0.01  # the prior's sd is 1 / sqrt(2 * PENALTY) = 7 in t, 3,000 Elo: barely a prior
Z95 = 1.959963984540054  # the standard normal's 97.5% quantile


@dataclass(frozen=True)
class Rating:
    """One player's rating: Elo relative to the anchor, the half-width of the 95% interval,
    games played (against others), points scored (a win 1, a draw 1/2) and whether its results
    bound the rating from one side only (it never lost, or never won)."""

    name: str
    elo: float
    interval: float
    games: int
    points: float
    bound: str = ""  # "lower" (never lost), "upper" (never won) or ""


def points_matrix(names: Sequence[str], results: Sequence[tuple[str, str, dict]]) -> np.ndarray:
    """(players, players): points of row against column over every game, either seat; games of
    a player against itself are left out (they say nothing about its strength)."""
    index = {name: i for i, name in enumerate(names)}
    points = np.zeros((len(names), len(names)))
    for x, o, tally in results:
        i, j = index[x], index[o]
        if i != j:
            points[i, j] += tally["X"] + tally["draw"] / 2
            points[j, i] += tally["O"] + tally["draw"] / 2
    return points


def elo_ratings(names: Sequence[str], results: Sequence[tuple[str, str, dict]],
                anchor: int = 0) -> list[Rating]:
    """The ratings of ``names`` from ``results`` (the arena's (X, O, tally) rows), the player
    ``names[anchor]`` at 0."""
    points, strengths, covariance = _fit(names, results)
    return [_rating(names, points, strengths, covariance, i, anchor) for i in range(len(names))]


def elo_gap(names: Sequence[str], results: Sequence[tuple[str, str, dict]], player: str,
            reference: str) -> tuple[float, float]:
    """``player``'s Elo above ``reference`` in the fit of all of ``results`` and the half-width
    of that difference's 95% interval (NaN where it cannot be estimated): the interval of the
    gap itself, wider than either player's own against the field."""
    _, strengths, covariance = _fit(names, results)
    i, j = names.index(player), names.index(reference)
    step = np.zeros(len(names))
    step[i], step[j] = 1.0, -1.0
    spread = float(step @ covariance @ step)
    return (ELO * float(strengths[i] - strengths[j]),
            ELO * Z95 * math.sqrt(max(spread, 0.0)) if math.isfinite(spread) else math.nan)


def _fit(names: Sequence[str], results: Sequence[tuple[str, str, dict]]
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The points matrix, the fitted strengths and their covariance (NaN without a game)."""
    choix = require("choix", "ratings", "Elo ratings in the arena")
    from choix.opt import PairwiseFcts

    points = points_matrix(names, results)
    # Each game is two comparisons (a win twice, a draw once each way): half points are whole.
    doubled = np.rint(2 * points).astype(np.int64)
    data = [(i, j) for i, j in zip(*np.nonzero(doubled), strict=True)
            for _ in range(doubled[i, j])]
    n = len(names)
    if not data:
        return points, np.zeros(n), np.full((n, n), np.nan)
    # With every game counted twice, twice the penalty keeps the prior of one count.
    strengths = choix.opt_pairwise(n, data, alpha=2 * PENALTY)
    covariance = 2 * np.linalg.inv(PairwiseFcts(data, 2 * PENALTY).hessian(strengths))
    return points, strengths, covariance


def _rating(names, points, strengths, covariance, i: int, anchor: int) -> Rating:
    # Against the field's mean, not the anchor: an anchor with a one-sided record (random
    # never won) would otherwise widen every other player's interval.
    step = np.full(len(names), -1 / len(names))
    step[i] += 1
    spread = float(step @ covariance @ step)
    games = points[i] + points[:, i]
    bound = ""
    if games.sum() and points[:, i].sum() == 0:
        bound = "lower"
    elif games.sum() and points[i].sum() == 0:
        bound = "upper"
    return Rating(names[i], ELO * float(strengths[i] - strengths[anchor]),
                  ELO * Z95 * math.sqrt(max(spread, 0.0)), round(float(games.sum())),
                  float(points[i].sum()), bound)


def ratings_table(ratings: Sequence[Rating]) -> list[str]:
    """The ratings as lines of text, strongest first."""
    width = max(12, *(len(r.name) for r in ratings))
    lines = [f"{'player':<{width}} {'Elo':>7} {'95% interval':>14} {'games':>7} {'score':>7}"]
    for r in sorted(ratings, key=lambda r: -r.elo):
        interval = "n/a" if math.isnan(r.interval) else f"+/- {r.interval:.0f}"
        score = f"{100 * r.points / r.games:.1f}%" if r.games else "-"
        mark = {"lower": " (never lost: at least)", "upper": " (never won: at most)"}[r.bound] \
            if r.bound else ""
        # round() first: a rating of -0.3 shows as 0, never "-0"
        lines.append(f"{r.name:<{width}} {round(r.elo):>7} {interval:>14} {r.games:>7} "
                     f"{score:>7}{mark}")
    return lines
