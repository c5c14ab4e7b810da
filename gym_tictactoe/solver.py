"""Exact game values and optimal moves for every reachable position.

The game is solved backwards, one layer of positions (by number of marks) at a time, with NumPy
over whole layers. Each position gets a *score* from the point of view of the side to move:
``+(10 - d)`` for a win in ``d`` plies, ``-(10 - d)`` for a loss in ``d`` plies, ``0`` for a
draw. Maximising the score therefore prefers any win to a draw to any loss, the fastest win among
wins and the slowest loss among losses. The tables are built on first use and cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game

_HORIZON = game.N_CELLS + 1
_NO_MOVE = -128  # below every real score, so max() never picks an illegal cell


@dataclass(frozen=True)
class Solution:
    """Per-code tables (all 3**9 codes; entries of unreachable codes are zero).

    Attributes:
        score: the score for the side to move (see the module docstring).
        value: the game value for X: +1 X wins, 0 draw, -1 O wins, under perfect play.
        distance: plies to the end of the game under perfect play.
        best: (codes, 9) mask of the perfect player's moves: best value, fastest win, slowest loss.
        keeps_value: (codes, 9) mask of every move that keeps the position's game value.
    """

    score: npt.NDArray[np.int8]
    value: npt.NDArray[np.int8]
    distance: npt.NDArray[np.int8]
    best: npt.NDArray[np.bool_]
    keeps_value: npt.NDArray[np.bool_]


def _child_scores(codes: npt.NDArray[np.int64], score: npt.NDArray[np.int8]) -> npt.NDArray:
    """Each move's score for the side to move at ``codes``, ``_NO_MOVE`` for illegal cells."""
    children = game.NEXT[codes]
    child = score[np.maximum(children, 0)].astype(np.int16)
    # One more ply to the end: the child's score negated and shrunk one step towards zero.
    return np.where(children >= 0, -child + np.sign(child), _NO_MOVE)


@cache
def solve() -> Solution:
    """Solve the game; the result is built once per process and its arrays are read-only."""
    score = np.zeros(game.N_CODES, dtype=np.int8)
    best = np.zeros((game.N_CODES, game.N_CELLS), dtype=bool)
    keeps = np.zeros_like(best)
    for layer in reversed(game.LAYERS):
        done = game.TERMINAL[layer]
        # The side to move at a won terminal position is the side that lost, just now.
        score[layer[done]] = np.where(game.WINNER[layer[done]] != 0, -_HORIZON, 0)
        playing = layer[~done]
        if playing.size == 0:
            continue
        moves = _child_scores(playing, score)
        top = moves.max(axis=1)
        score[playing] = top
        best[playing] = moves == top[:, None]
        keeps[playing] = (np.sign(moves) == np.sign(top)[:, None]) & (moves != _NO_MOVE)
    return _finish(score, best, keeps)


def _finish(score, best, keeps) -> Solution:
    x_to_move = game.TO_MOVE == game.X
    value = (np.sign(score) * np.where(x_to_move, 1, -1)).astype(np.int8)
    empties = (game.CELLS == game.EMPTY).sum(axis=1)
    distance = np.where(score == 0, empties, _HORIZON - np.abs(score)).astype(np.int8)
    distance[~game.IS_REACHABLE] = 0
    value[~game.IS_REACHABLE] = 0
    tables = Solution(score, value, distance, best, keeps)
    for table in vars(tables).values():
        table.setflags(write=False)
    return tables


def value(code: game.Position) -> int:
    """The game value for X under perfect play: +1, 0 or -1."""
    return int(solve().value[code])


def best_moves(code: game.Position) -> list[int]:
    """The perfect player's moves: best value, then fastest win or slowest loss."""
    return np.flatnonzero(solve().best[code]).tolist()


def value_keeping_moves(code: game.Position) -> list[int]:
    """Every move that keeps the position's game value (the non-blunders)."""
    return np.flatnonzero(solve().keeps_value[code]).tolist()
