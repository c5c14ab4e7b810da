"""Learning-rate schedules shared by the learners: tabular Q's annealed floor (``--alpha-end``)
and AlphaZero's annealed rate (``--learning-rate-end``) fall the same way."""

from __future__ import annotations


def geometric(start: float, end: float, spent: float) -> float:
    """From ``start`` to ``end`` geometrically as ``spent`` (the share of the schedule's span
    used so far) goes from 0 to 1; ``end`` from then on."""
    return start * (end / start) ** min(1.0, max(0.0, spent))
