"""Exploring starts aimed at the positions a tabular agent still plays wrong.

Uniform exploring starts put as many episodes on a position the agent already plays right as on
one it plays wrong; near the end of a 16-cell run a few thousand wrong positions out of millions
get one start in several thousand. At each exact checkpoint ``focus`` reads the agent's greedy
move in every position (the moves table the evaluation asks for anyway), marks where it loses
the game value, and gives those positions ``share`` of the random starts (and ``back_share`` to
their predecessors: the agent's previous decisions that lead there, whose values read theirs),
the rest staying uniform so nothing is starved. The weights go to the vector env with
``set_start_weights``, in the order of ``starts.start_codes``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.checks import check_number
from gym_tictactoe.game import Rules, basics, solver, starts

BACK_CHUNK = 1 << 13  # wrong positions at a time: (N, cells, cells) int64 pairs, 16 MB on 4x4


def wrong_positions(rules: Rules, moves: npt.NDArray) -> npt.NDArray[np.bool_]:
    """Over ``starts.start_codes(rules)``, in its order: where the move in ``moves`` (a
    ``evaluation.policy_moves`` table) does not keep the game value."""
    solution, wrong = solver.solve(rules), []
    for layer in rules.positions:  # start_codes' own order: by layer, then code
        for codes in basics._chunks(layer.codes[~layer.terminal]):
            cells = moves[codes].astype(np.int64)
            keeps = solution.keeps_value_of(codes, layer.mark)
            legal = (cells >= 0) & (cells < rules.n_cells)
            kept = np.zeros(codes.size, dtype=bool)
            kept[legal] = keeps[np.flatnonzero(legal), cells[legal]]
            wrong.append(~kept)
    return np.concatenate(wrong) if wrong else np.zeros(0, dtype=bool)


def predecessors(rules: Rules, wrong: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Over ``start_codes``: the positions two plies before a ``wrong`` one, the same side to
    move (its move there, then the reply, lead to it)."""
    return _neighbours(rules, wrong, -2, _two_back)


def successors(rules: Rules, wrong: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Over ``start_codes``: the unfinished positions two plies after a ``wrong`` one (a move
    and a reply), whose values its move's values are learnt from."""
    return _neighbours(rules, wrong, 2, _two_ahead)


def _neighbours(rules: Rules, wrong: npt.NDArray[np.bool_], step: int,
                near: Callable[[Rules, npt.NDArray[np.int64]], npt.NDArray[np.int64]]
                ) -> npt.NDArray[np.bool_]:
    """The start positions ``step`` plies from a ``wrong`` one, ``near`` giving candidate codes
    (those that are no reachable unfinished position are dropped here)."""
    codes, found = starts.start_codes(rules), np.zeros(wrong.size, dtype=bool)
    layers = [layer.codes[~layer.terminal] for layer in rules.positions]
    offsets = np.cumsum([0] + [layer.size for layer in layers])
    for marks in range(max(0, -step), len(layers) - max(0, step)):
        targets = codes[offsets[marks]:offsets[marks + 1]][wrong[offsets[marks]:offsets[marks + 1]]]
        layer = layers[marks + step]
        if targets.size == 0 or layer.size == 0:
            continue
        for first in range(0, targets.size, BACK_CHUNK):
            other = near(rules, targets[first:first + BACK_CHUNK])
            at = np.minimum(np.searchsorted(layer, other), layer.size - 1)
            found[offsets[marks + step] + at[layer[at] == other]] = True
    return found


def _two_ahead(rules: Rules, codes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Every code after a move of the side to move and a reply (lines not checked: a position
    after a won game is no start code, and is dropped by the caller)."""
    mover = starts.side_to_move(rules.cells_of(codes))[:, None]
    assert rules.pow3 is not None  # start codes exist on solvable boards, whose codes fit
    pow3 = rules.pow3.astype(np.int64)
    empty = rules.cells_of(codes) == game.EMPTY
    pairs = empty[:, :, None] & empty[:, None, :] & ~np.eye(rules.n_cells, dtype=bool)
    after = (codes[:, None, None] + mover[:, :, None] * pow3[None, :, None]
             + game.SWAP.take(mover)[:, :, None] * pow3[None, None, :])
    return np.unique(after[pairs])


def _two_back(rules: Rules, codes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Every code with one mark of the side to move and one of the other side taken away."""
    cells = rules.cells_of(codes)
    mover = starts.side_to_move(cells)[:, None]
    other = game.SWAP.take(mover)
    assert rules.pow3 is not None  # start codes exist on solvable boards, whose codes fit
    pow3 = rules.pow3.astype(np.int64)
    own = np.where(cells == mover, mover * pow3, -1)  # (N, cells): -1 where not the mover's
    theirs = np.where(cells == other, other * pow3, -1)
    pairs = (own[:, :, None] >= 0) & (theirs[:, None, :] >= 0)
    back = codes[:, None, None] - own[:, :, None] - theirs[:, None, :]
    return np.unique(back[pairs])


def focus_weights(wrong: npt.NDArray[np.bool_], share: float,
                  back: npt.NDArray[np.bool_] | None = None,
                  back_share: float = 0.0) -> npt.NDArray[np.float64]:
    """Start weights over ``start_codes``: ``share`` spread evenly on ``wrong``, ``back_share``
    on ``back``, the rest uniform over every position (all of it when nothing is wrong)."""
    weights = np.full(wrong.size, 1.0 / wrong.size)
    parts = [(wrong, share), (back, back_share)]
    used = sum(part for mask, part in parts if mask is not None and mask.any())
    weights *= 1.0 - used
    for mask, part in parts:
        if mask is not None and mask.any():
            weights[mask] += part / mask.sum()
    return weights


def focus(envs: Any, moves: npt.NDArray, share: float, back_share: float = 0.0,
          ahead_share: float = 0.0) -> npt.NDArray[np.bool_]:
    """Aim ``envs``' random starts at the positions where ``moves`` is wrong (see the module
    docstring), ``ahead_share`` at their successors; returns the wrong positions (a mask over
    ``start_codes``)."""
    weights, wrong = aimed_weights(envs.rules, moves, share, back_share, ahead_share)
    envs.set_start_weights(weights)
    return wrong


def aimed_weights(rules: Rules, moves: npt.NDArray, share: float, back_share: float = 0.0,
                  ahead_share: float = 0.0
                  ) -> tuple[starts.StartWeights, npt.NDArray[np.bool_]]:
    """The start distribution ``focus`` sets (also AlphaZero's aimed starts,
    ``agents.run.alphazero``) and the wrong positions it aims at (a mask over
    ``start_codes``)."""
    wrong = wrong_positions(rules, moves)
    return weights_toward(rules, wrong, share, back_share, ahead_share), wrong


def weights_toward(rules: Rules, wrong: npt.NDArray[np.bool_], share: float,
                   back_share: float = 0.0, ahead_share: float = 0.0) -> starts.StartWeights:
    """The start distribution aimed at ``wrong`` (a mask over ``start_codes``), ``share`` of it
    on those positions, ``back_share`` on their predecessors, ``ahead_share`` on their
    successors, the rest uniform: what a resumed run rebuilds from the mask it saved."""
    for name, value in (("share", share), ("back_share", back_share),
                        ("ahead_share", ahead_share)):
        check_number(value, name, 0.0, 1.0)
    check_number(share + back_share + ahead_share, "share + back_share + ahead_share", 0.0, 1.0)
    weights = focus_weights(wrong, share)
    for part, near in ((back_share, predecessors), (ahead_share, successors)):
        if part > 0:
            weights += focus_weights(near(rules, wrong), part) - 1.0 / wrong.size
    # a uniform share cancelled exactly can round below 0
    return starts.StartWeights(rules, np.maximum(weights, 0.0))


def forget(agent: Any, wrong: npt.NDArray[np.bool_]) -> None:
    """Zero the visit counts of the table rows of the ``wrong`` positions (over
    ``start_codes``): their next updates learn at ``1 / n`` again, a running mean of fresh
    targets, instead of the annealed floor's slow drift from values learnt early."""
    rules = agent.rules
    cells = rules.cells_of(starts.start_codes(rules)[wrong])
    mover = starts.side_to_move(cells)[:, None]
    view = np.where(mover == game.X, cells, game.SWAP.take(cells))  # as the agent to move sees it
    rows, _, known = agent.index.locate(view.astype(np.int64) @ rules.pow3.astype(np.int64))
    agent.visits[rows[known]] = 0
