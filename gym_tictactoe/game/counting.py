"""Counting over every game of a solvable board: distinct games by result and the exact
outcome of random play, in one walk down the layers."""

from __future__ import annotations

from functools import cache

import numpy as np
import numpy.typing as npt

from gym_tictactoe.game.basics import (
    _CHUNK,
    NO_WINNER,
    O,
    X,
)
from gym_tictactoe.game.engine import TICTACTOE, Rules


@cache
def _flows_to_the_end(board: Rules) -> tuple[dict[str, float], dict[str, float]]:
    """Mass sent from the empty board down every move, summed over the finished positions by
    result, in one walk: each position passes its mass to every child (the game counts), and a
    second mass an equal share to each (random play). The layers already say which positions
    ended and who won, so nothing is decoded but each parent's empty cells. Float64 sums: exact
    for game counts, which stay below 16! < 2**53 on solvable boards."""
    totals = ({"X": 0.0, "O": 0.0, "draw": 0.0}, {"X": 0.0, "O": 0.0, "draw": 0.0})
    masses: tuple[npt.NDArray[np.float64], ...] = (np.ones(1), np.ones(1))
    layers = board.positions
    for layer, below in zip(layers, (*layers[1:], None), strict=True):
        for mark, name in ((X, "X"), (O, "O"), (NO_WINNER, "draw")):
            ended = layer.terminal & (layer.winner == mark)
            for total, mass in zip(totals, masses, strict=True):
                total[name] += float(mass[ended].sum())
        if below is None or below.codes.size == 0:
            break
        live = ~layer.terminal
        masses = _pass_down(board, layer.codes[live], layer.mark,
                            tuple(mass[live] for mass in masses), below.codes)
    return totals


def _pass_down(board: Rules, codes, mark: int, masses, below) -> tuple[npt.NDArray, ...]:
    """The masses of each position of the next layer (``below``, sorted) from its parents
    ``codes`` (all unfinished, ``mark`` to move): all of the first mass to every child, an
    equal share of the second."""
    counts, shares = np.zeros(below.size), np.zeros(below.size)
    for start in range(0, codes.size, _CHUNK):
        children = board.children_of(codes[start : start + _CHUNK], mark)
        legal = children >= 0
        index = np.searchsorted(below, children[legal])
        count, share = (mass[start : start + _CHUNK] for mass in masses)
        for total, weight in ((counts, count), (shares, share / legal.sum(axis=1))):
            weights = np.broadcast_to(weight[:, None], children.shape)[legal]
            total += np.bincount(index, weights, below.size)
    return counts, shares


def count_games(board: Rules = TICTACTOE) -> dict[str, int]:
    """Distinct complete games (move sequences) from the empty board, by result."""
    by_result = {name: int(count) for name, count in _flows_to_the_end(board)[0].items()}
    return {"games": sum(by_result.values()), **by_result}


def random_play_outcome(board: Rules = TICTACTOE) -> dict[str, float]:
    """Exact probabilities of "X", "O" and "draw" when both sides play uniformly random moves."""
    return {name: float(p) for name, p in _flows_to_the_end(board)[1].items()}
