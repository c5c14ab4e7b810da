"""Stochastic policies measured exactly: the expected result against a best response.

A policy is stochastic for evaluation when it offers its action probabilities:
``action_probabilities(observation, mask) -> (cells,)`` and/or
``action_probabilities_batch(observations, masks) -> (N, cells)``, over the same relative
boards as ``policy(observation, mask)`` (1 the side to move, 2 the other). The probabilities
must be finite, non-negative, sum to 1 (within ``TOLERANCE``; they are then divided by their sum)
and be 0 on occupied cells; anything else is a ``ValueError`` naming the position.

``gym_tictactoe.evaluation.exact`` measures such a policy in its one backward pass,
asking it about each
layer's positions in batches, and gets per seat:

- ``expected``: the policy's exact expected result (+1 win, 0 draw, -1 loss) when the opponent
  plays a best response, one that minimises it;
- ``result``: the worst result an opponent can bring about with positive probability (the
  policy's own randomness counted against it too), with the shortest such ``losing_line``: for a
  deterministic policy, the forced result. A softmax policy gives every legal move some
  probability, so its ``result`` is usually a loss: read ``expected`` there.

:class:`UniformPolicy` is the uniformly random policy with its probabilities.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe.players.protocol import GivesProbabilities, gives_probabilities
from gym_tictactoe.seeding import check_seed

TOLERANCE = 1e-6  # allowed |sum - 1| of a position's probabilities (float32 softmax fits)


def offers_probabilities(policy: Any) -> bool:
    """Whether ``policy`` gives its action probabilities (and can be measured as stochastic):
    the capability ``protocol.GivesProbabilities``."""
    return gives_probabilities(policy)


def probabilities_of(policy: Any, observations: npt.NDArray[np.int8],
                     masks: npt.NDArray[np.int8]) -> npt.NDArray[np.float64]:
    """``(N, cells)`` checked probabilities of ``policy`` at relative boards ``observations``
    with legal ``masks``: ``action_probabilities_batch`` once if the policy has it, else
    ``action_probabilities`` per board. Each call gets its own copies of the arrays."""
    if isinstance(policy, GivesProbabilities):
        probs = _numbers(policy.action_probabilities_batch(observations.copy(), masks.copy()))
    else:
        rows = [_numbers(policy.action_probabilities(obs.copy(), mask.copy()))
                for obs, mask in zip(observations, masks, strict=True)]
        shapes = {row.shape for row in rows} - {masks.shape[1:]}
        if shapes:
            raise ValueError(f"action_probabilities must return shape {masks.shape[1:]} (one "
                             f"per cell); got shape {shapes.pop()}")
        probs = np.stack(rows) if rows else np.zeros(masks.shape)
    return check_probabilities(probs, observations, masks)


def _numbers(answer: Any) -> npt.NDArray[np.float64]:
    try:
        return np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"action probabilities must be numbers, one per cell; got "
                         f"{answer!r:.80}") from None


def check_probabilities(probs: npt.NDArray[np.float64], observations: npt.NDArray[np.int8],
                        masks: npt.NDArray[np.int8]) -> npt.NDArray[np.float64]:
    """``probs`` divided by their sums, or a ValueError naming the first position at fault."""
    if probs.shape != masks.shape:
        raise ValueError(f"action probabilities must have shape {masks.shape} (one per cell of "
                         f"each board asked about); got shape {probs.shape}")
    sums = probs.sum(axis=1)
    faults = (
        (~np.isfinite(probs).all(axis=1) | (probs < 0).any(axis=1), "are negative or not finite"),
        (np.abs(sums - 1.0) > TOLERANCE, "do not sum to 1"),
        (((probs > 0) & (masks == 0)).any(axis=1), "put weight on an occupied cell"),
    )
    for bad, problem in faults:
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"action probabilities {probs[row].tolist()} at the board "
                f"{observations[row].tolist()} (1 = the side to move) {problem}; allowed: "
                f"non-negative numbers summing to 1, on the empty cells "
                f"{np.flatnonzero(masks[row]).tolist()} only")
    return probs / sums[:, None]


class UniformPolicy:
    """The uniformly random policy: a random legal cell (from a generator seeded with ``seed``),
    and its probabilities, so that evaluation measures it exactly on any board."""

    def __init__(self, seed: int | None = 0) -> None:
        self.rng = np.random.default_rng(check_seed(seed))

    def __call__(self, observation: npt.NDArray[np.int8], action_mask: npt.NDArray[np.int8]) -> int:
        return int(self.rng.choice(np.flatnonzero(action_mask)))

    def act_batch(self, observations: npt.NDArray[np.int8],
                  masks: npt.NDArray[np.int8]) -> npt.NDArray[np.int64]:
        """A uniformly drawn legal cell of each board: the largest of uniform keys on them."""
        legal = np.asarray(masks).astype(bool)
        return np.where(legal, self.rng.random(legal.shape), -1.0).argmax(axis=1)

    def action_probabilities_batch(self, observations: npt.NDArray[np.int8],
                                   masks: npt.NDArray[np.int8]) -> npt.NDArray[np.float64]:
        masks = np.asarray(masks, dtype=np.float64)
        return masks / masks.sum(axis=1, keepdims=True)

    def action_probabilities(self, observation: npt.NDArray[np.int8],
                             action_mask: npt.NDArray[np.int8]) -> npt.NDArray[np.float64]:
        return self.action_probabilities_batch(np.asarray(observation)[None],
                                               np.asarray(action_mask)[None])[0]

    def __repr__(self) -> str:
        return "UniformPolicy()"
