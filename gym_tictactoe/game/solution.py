"""A solved board: the per-code scores of :mod:`gym_tictactoe.game.solver` and the moves and values
derived from them. Its own module so that the solver and its disk cache (:mod:`.cache`) both build
one without importing each other."""

from __future__ import annotations

from functools import cached_property

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.game import Rules

_NO_MOVE = -128  # below every real score, so max() never picks an illegal cell


class Solution:
    """The solved board: per-code arrays (entries of unreachable codes are zero).

    Attributes:
        rules: the board.
        score: int8 per code, the score for the side to move (see the module docstring).
        reachable: bool per code, whether a game can reach it.

    ``*_of(codes)`` methods answer for arrays of codes on every solved board; on tabled boards the
    full tables ``value``, ``distance``, ``best`` and ``keeps_value`` exist too.
    """

    def __init__(self, rules: Rules, score: npt.NDArray[np.int8],
                 reachable: npt.NDArray[np.bool_]) -> None:
        self.rules, self.score, self.reachable = rules, score, reachable
        self.horizon = rules.n_cells + 1
        for array in (score, reachable):
            array.setflags(write=False)

    def child_scores(self, codes: npt.ArrayLike, mark: int | None = None) -> npt.NDArray[np.int16]:
        """(N, cells): each move's score for the side to move at ``codes``, ``_NO_MOVE`` where
        the cell is not a legal move. ``mark``: every code is unfinished with ``mark`` to move
        (a faster path, as in ``Rules.children_of``)."""
        return _child_scores(self.rules, self.score, codes, mark)

    def best_of(self, codes: npt.ArrayLike, mark: int | None = None) -> npt.NDArray[np.bool_]:
        """(N, cells) mask of the perfect player's moves: best value, fastest win, slowest loss."""
        return _best(self.child_scores(codes, mark))

    def best_at(self, codes: npt.NDArray[np.int64], cells: npt.NDArray[np.int8],
                marks: npt.NDArray[np.int8]) -> npt.NDArray[np.bool_]:
        """``best_of`` for unfinished positions whose cells and side to move (``marks``, one per
        position) the caller already has, as the vector env's opponent does at every step: no
        digit extracted, no line checked."""
        assert self.rules.pow3 is not None  # solved boards are tabled: their codes fit an int64
        powers = np.asarray(marks, dtype=np.int64)[:, None] * self.rules.pow3
        children = np.where(np.asarray(cells) == game.EMPTY, codes[:, None] + powers, -1)
        return _best(_scores(self.score, children))

    def keeps_value_of(self, codes: npt.ArrayLike,
                       mark: int | None = None) -> npt.NDArray[np.bool_]:
        """(N, cells) mask of every move that keeps the position's game value."""
        moves = self.child_scores(codes, mark)
        top = moves.max(axis=1, keepdims=True)
        return (np.sign(moves) == np.sign(top)) & (moves != _NO_MOVE)

    def value_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.int8]:
        """Game value for X under perfect play: +1 X wins, 0 draw, -1 O wins (0 if unreachable)."""
        codes = np.asarray(codes, dtype=np.int64)
        x_to_move = self.rules.to_move_of(codes) == game.X
        return (np.sign(self.score[codes]) * np.where(x_to_move, 1, -1)).astype(np.int8)

    def distance_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.int8]:
        """Plies to the end of the game under perfect play (0 if unreachable)."""
        codes = np.asarray(codes, dtype=np.int64)
        score = self.score[codes].astype(np.int16)
        empties = (self.rules.cells_of(codes) == game.EMPTY).sum(axis=1)
        distance = np.where(score == 0, empties, self.horizon - np.abs(score))
        return np.where(self.reachable[codes], distance, 0).astype(np.int8)

    # Full per-code tables, on tabled boards only (a 16-cell board's would take gigabytes).

    @cached_property
    def value(self) -> npt.NDArray[np.int8]:
        return self._table(self.value_of)

    @cached_property
    def distance(self) -> npt.NDArray[np.int8]:
        return self._table(self.distance_of)

    @cached_property
    def best(self) -> npt.NDArray[np.bool_]:
        """(codes, cells): ``best_of`` for every code (empty rows where nobody moves)."""
        return self._table(self.best_of)

    @cached_property
    def keeps_value(self) -> npt.NDArray[np.bool_]:
        return self._table(self.keeps_value_of)

    def _table(self, of):
        if not self.rules.tabled:
            raise ValueError(f"full per-code tables exist for boards of at most "
                             f"{game.TABLE_CELLS} cells; on {self.rules.name} ask for the "
                             "codes you need with the *_of methods")
        table = of(np.arange(self.rules.n_codes))
        table[~self.reachable] = 0
        table.setflags(write=False)
        return table


def _child_scores(rules: Rules, score: npt.NDArray[np.int8], codes: npt.ArrayLike,
                  mark: int | None = None) -> npt.NDArray[np.int16]:
    # ``mark``: the side to move at every one of ``codes``, all unfinished (a faster path).
    children = rules.next_of(codes) if mark is None else rules.children_of(codes, mark)
    return _scores(score, children)


def _scores(score: npt.NDArray[np.int8], children: npt.NDArray[np.int64]) -> npt.NDArray[np.int16]:
    """Each move's score from its child's code (-1: no legal move)."""
    child = score[np.maximum(children, 0)].astype(np.int16)
    # One more ply to the end: the child's score negated and shrunk one step towards zero.
    return np.where(children >= 0, -child + np.sign(child), _NO_MOVE).astype(np.int16)


def _best(moves: npt.NDArray[np.int16]) -> npt.NDArray[np.bool_]:
    return (moves == moves.max(axis=1, keepdims=True)) & (moves != _NO_MOVE)
