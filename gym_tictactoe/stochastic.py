"""Stochastic policies measured exactly: the expected result against a best response.

A policy is stochastic for evaluation when it offers its action probabilities:
``action_probabilities(observation, mask) -> (cells,)`` and/or
``action_probabilities_batch(observations, masks) -> (N, cells)``, over the same relative
boards as ``policy(observation, mask)`` (1 the side to move, 2 the other). The probabilities
must be finite, non-negative, sum to 1 (within ``TOLERANCE``; they are then divided by their sum)
and be 0 on occupied cells; anything else is a ``ValueError`` naming the position.

:func:`responses` walks every position of a solved board backwards, a layer (number of marks)
at a time, for both seats at once, asking the policy about each layer's positions in batches,
and gets per seat:

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

from gym_tictactoe import game
from gym_tictactoe.game import Rules
from gym_tictactoe.seeding import check_seed

TOLERANCE = 1e-6  # allowed |sum - 1| of a position's probabilities (float32 softmax fits)
_NO_KEY = np.iinfo(np.int32).max


def offers_probabilities(policy: Any) -> bool:
    """Whether ``policy`` gives its action probabilities (and can be measured as stochastic)."""
    return any(callable(getattr(policy, name, None))
               for name in ("action_probabilities_batch", "action_probabilities"))


def probabilities_of(policy: Any, observations: npt.NDArray[np.int8],
                     masks: npt.NDArray[np.int8]) -> npt.NDArray[np.float64]:
    """``(N, cells)`` checked probabilities of ``policy`` at relative boards ``observations``
    with legal ``masks``: ``action_probabilities_batch`` once if the policy has it, else
    ``action_probabilities`` per board. Each call gets its own copies of the arrays."""
    batch = getattr(policy, "action_probabilities_batch", None)
    if callable(batch):
        probs = _numbers(batch(observations.copy(), masks.copy()))
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


def layer_probabilities(policy: Any, rules: Rules, codes: npt.NDArray[np.int64],
                        mark: int) -> npt.NDArray[np.float64]:
    """The policy's probabilities at unfinished positions ``codes``, ``mark`` to move."""
    cells = rules.cells_of(codes)
    observations = game.SWAP[cells] if mark == game.O else cells
    return probabilities_of(policy, observations, (cells == game.EMPTY).astype(np.int8))


def responses(policy: Any, rules: Rules, span: int
              ) -> dict[int, tuple[float, int, tuple[int, ...] | None]]:
    """Per seat (X, O): ``(expected, result index, losing line)`` as the module docstring says;
    result index 0 loss, 1 draw, 2 win (``span`` is more plies than any game has)."""
    rules.check_solvable("exact evaluation of a stochastic policy")
    keys = _backward(policy, rules, span)
    out = {}
    for me in (game.X, game.O):
        expected, layer_keys = keys[me]
        result = int(layer_keys[0][0]) // span
        line = _losing_line(policy, rules, me, layer_keys) if result == 0 else None
        out[me] = (expected, result, line)
    return out


def _backward(policy: Any, rules: Rules, span: int) -> dict[int, tuple[float, list]]:
    """Per seat: the expected result at the empty board, and every layer's keys (result index
    * span + plies to the end, the smallest an opponent can reach with positive probability)."""
    below: dict[int, tuple[npt.NDArray, npt.NDArray]] = {}
    below_codes = np.zeros(0, dtype=np.int64)
    layer_keys: dict[int, list] = {game.X: [], game.O: []}
    for layer in reversed(rules.positions):
        now = {me: _terminal_values(layer, me, span) for me in (game.X, game.O)}
        live = np.flatnonzero(~layer.terminal)
        for start in range(0, live.size, game._CHUNK):
            rows = live[start : start + game._CHUNK]
            _update(policy, rules, layer, rows, below_codes, below, now)
        for me in (game.X, game.O):
            layer_keys[me].insert(0, now[me][1].astype(np.int32))
        below, below_codes = now, layer.codes
    return {me: (float(below[me][0][0]), layer_keys[me]) for me in (game.X, game.O)}


def _terminal_values(layer: game.Layer, me: int, span: int) -> tuple[npt.NDArray, npt.NDArray]:
    won, drawn = layer.winner == me, layer.winner == game.NO_WINNER
    values = np.where(layer.terminal, np.where(won, 1.0, np.where(drawn, 0.0, -1.0)), 0.0)
    keys = np.where(layer.terminal, (won * 2 + drawn) * span, 0).astype(np.int64)
    return values, keys


def _update(policy: Any, rules: Rules, layer: game.Layer, rows: npt.NDArray[np.intp],
            below_codes: npt.NDArray[np.int64], below: dict, now: dict) -> None:
    """Values and keys of the unfinished positions ``rows`` of ``layer``, for both seats."""
    codes = layer.codes[rows]
    children = rules.children_of(codes, layer.mark)
    legal = children >= 0
    index = np.minimum(np.searchsorted(below_codes, np.maximum(children, 0)),
                       below_codes.size - 1)
    probs = layer_probabilities(policy, rules, codes, layer.mark)
    for me in (game.X, game.O):
        child_values, child_keys = below[me][0][index], below[me][1][index]
        if me == layer.mark:  # the policy moves: its mixture, and the worst move it may make
            values = (probs * np.where(legal, child_values, 0.0)).sum(axis=1)
            keys = np.where(probs > 0, child_keys, _NO_KEY).min(axis=1)
        else:  # the best responder: the lowest value, and the lowest key
            values = np.where(legal, child_values, np.inf).min(axis=1)
            keys = np.where(legal, child_keys, _NO_KEY).min(axis=1)
        now[me][0][rows], now[me][1][rows] = values, keys + 1


def _losing_line(policy: Any, rules: Rules, me: int, layer_keys: list) -> tuple[int, ...]:
    """From the empty board, the move of smallest key (lowest cell among equals) for both sides,
    the policy's among those it plays with positive probability."""
    code, line = game.EMPTY_BOARD, []
    while not rules.is_terminal(code):
        depth = len(line)
        children = rules.next_of([code])[0]
        below = rules.layers[depth + 1]
        index = np.minimum(np.searchsorted(below, np.maximum(children, 0)), below.size - 1)
        keys = np.where(children >= 0, layer_keys[depth + 1][index], _NO_KEY)
        if rules.to_move(code) == me:
            probs = layer_probabilities(policy, rules, np.array([code]), me)[0]
            keys = np.where(probs > 0, keys, _NO_KEY)
        cell = int(np.argmin(keys))
        line.append(cell)
        code = int(children[cell])
    return tuple(line)


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
