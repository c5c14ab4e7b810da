"""``SymmetrizedPolicy``: a trained policy averaged over the board's symmetries at play time
(the symmetries themselves are :mod:`gym_tictactoe.game.symmetry`'s)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.checks import check_flag
from gym_tictactoe.game import Rules
from gym_tictactoe.game.positions import as_cell
from gym_tictactoe.game.symmetry import (
    _check_boards,
    transform_cells,
    untransform_cells,
)
from gym_tictactoe.players.protocol import AnswersBatch, gives_probabilities
from gym_tictactoe.players.stochastic import probabilities_of
from gym_tictactoe.seeding import check_seed

__all__ = ["SymmetrizedPolicy"]


class SymmetrizedPolicy:
    """A policy averaged over the board's symmetries: it asks ``policy`` about every symmetric
    image of the board, maps the answers back, and averages them.

    The answers are the policy's action probabilities when it offers them
    (``action_probabilities_batch`` or ``action_probabilities``), else its moves as one-hot
    votes (``act_batch`` or one call per board). By default it plays the most probable cell of
    the average (the lowest among equals); with ``stochastic=True`` it draws from the average
    (a generator seeded with ``seed``) and offers the average as its own action probabilities,
    so evaluation measures it exactly as a stochastic policy.

    ``rules``: the board (default: the policy's own ``rules``, else 3x3). Every output must be a
    cell: an answer that names no cell is a ValueError.
    """

    def __init__(self, policy: Any, rules: Rules | None = None, *, stochastic: bool = False,
                 seed: int | None = 0) -> None:
        if not callable(policy) and not gives_probabilities(policy):
            raise ValueError(f"policy must be callable as policy(obs, mask) or offer action "
                             f"probabilities; got {policy!r}")
        own = getattr(policy, "rules", None)
        self.rules = rules if rules is not None else own if isinstance(own, Rules) \
            else game.TICTACTOE
        if not isinstance(self.rules, Rules):
            raise ValueError(f"rules must be a game.Rules (game.rules(rows, cols, win_length)); "
                             f"got {rules!r}")
        self.policy, self.stochastic = policy, check_flag(stochastic, "stochastic")
        self.rng = np.random.default_rng(check_seed(seed))
        if self.stochastic:  # only then is it a stochastic policy for evaluation
            self.action_probabilities_batch = self.average_batch
            self.action_probabilities = self._average_one

    def average_batch(self, observations: npt.ArrayLike,
                      masks: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """``(N, cells)``: the policy's answers on every image of each board, averaged."""
        boards = _check_boards(self.rules, observations, "observations")
        masks = _check_boards(self.rules, masks, "masks")
        total = np.zeros(boards.shape, dtype=np.float64)
        for s in range(len(self.rules.symmetries)):
            chosen = np.full(len(boards), s, dtype=np.intp)
            images = transform_cells(self.rules, boards, chosen)
            answers = self._answers(images, transform_cells(self.rules, masks, chosen))
            total += untransform_cells(self.rules, answers, chosen)
        return total / len(self.rules.symmetries)

    def act_batch(self, observations: npt.ArrayLike, masks: npt.ArrayLike
                  ) -> npt.NDArray[np.int64]:
        average = self.average_batch(observations, masks)
        if not self.stochastic:
            return average.argmax(axis=1)
        # The first cell whose cumulative probability passes a uniform draw: never a cell of
        # probability 0, as long as the draw stays below the total.
        cumulative = np.cumsum(average, axis=1)
        draws = self.rng.random((len(average), 1)) * cumulative[:, -1:]
        return (cumulative > draws).argmax(axis=1)

    def __call__(self, observation: npt.ArrayLike, action_mask: npt.ArrayLike) -> int:
        return int(self.act_batch(np.asarray(observation)[None],
                                  np.asarray(action_mask)[None])[0])

    def _average_one(self, observation: npt.ArrayLike,
                     action_mask: npt.ArrayLike) -> npt.NDArray[np.float64]:
        return self.average_batch(np.asarray(observation)[None],
                                  np.asarray(action_mask)[None])[0]

    def _answers(self, images: npt.NDArray[np.int8],
                 masks: npt.NDArray[np.int8]) -> npt.NDArray[np.float64]:
        if gives_probabilities(self.policy):
            return probabilities_of(self.policy, images, masks)
        if isinstance(self.policy, AnswersBatch):
            moves = list(np.asarray(self.policy.act_batch(images.copy(), masks.copy()))
                         .reshape(-1))
        else:
            moves = [self.policy(obs.copy(), mask.copy()) for obs, mask in zip(images, masks,
                                                                               strict=True)]
        cells = [as_cell(move, self.rules.n_cells) for move in moves]
        if len(cells) != len(images) or None in cells:
            raise ValueError(f"the policy must answer one cell 0..{self.rules.n_cells - 1} per "
                             f"board; got {moves[:len(images)]!r}")
        return np.eye(self.rules.n_cells)[cells]

    def __repr__(self) -> str:
        return (f"SymmetrizedPolicy({self.policy!r}, board={self.rules.name}, "
                f"stochastic={self.stochastic})")

