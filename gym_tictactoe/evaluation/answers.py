"""How the exact evaluator asks a policy: positions as the policy sees them and back, and its
answers, moves or probabilities, as ``(cells, weights)`` (see ``gym_tictactoe.evaluation.exact``).

A policy sees a relative board (1 the side to move, 2 the other): ``views`` gives them for
position codes, ``absolute_codes`` the codes back. ``table_ask`` answers from a moves table
(``evaluation.policy_moves``), ``move_ask`` asks a deterministic policy a batch at a time,
``probability_ask`` a stochastic one
(``gym_tictactoe.players.stochastic`` checks its probabilities).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.game import Rules
from gym_tictactoe.game.positions import as_cell
from gym_tictactoe.players import stochastic
from gym_tictactoe.players.opponents import resolve_opponent
from gym_tictactoe.players.protocol import AnswersBatch, Player, as_player

NOT_A_CELL = -2  # moves table entry for an output naming no cell: no cell on any board

# ask(codes, mark) -> (cells, weights): the policy's answers at unfinished positions ``codes``
# with ``mark`` to move, as the module docstring says.
Ask = Callable[[npt.NDArray[np.int64], int], tuple[npt.NDArray[np.int64], Any]]


def asked(policy: Any, rules: Rules) -> Any:
    """``policy`` as evaluation asks it: a player, or an object with only the documented
    ``act(board, mark, rng)``, through the one adapter (``players.as_player``: a subclass's own
    ``act`` decides here too); any other callable as it is."""
    if not isinstance(policy, Player) and (
            callable(policy) or not callable(getattr(policy, "act", None))):
        return policy
    return as_player(resolve_opponent(policy, rules), rules)


def moves_of(policy: Any, observations: npt.NDArray[np.int8], masks: npt.NDArray[np.int8],
             rules: Rules) -> npt.NDArray[np.int64]:
    """The policy's move at each relative board: ``act_batch`` once when the policy answers a
    batch (``protocol.AnswersBatch``; the arrays are then the policy's: pass new ones), else the
    policy once per board, each call with its own copies. An output that names no cell is
    ``NOT_A_CELL``; an occupied cell is kept (a forfeit, counted as illegal)."""
    if isinstance(policy, AnswersBatch):
        return _batch_cells(policy.act_batch(observations, masks), len(masks), rules)
    cells = [as_cell(policy(obs.copy(), mask.copy()), rules.n_cells)  # the env's own rule
             for obs, mask in zip(observations, masks, strict=True)]
    return np.array([NOT_A_CELL if cell is None else cell for cell in cells], dtype=np.int64)


def _batch_cells(actions: Any, n: int, rules: Rules) -> npt.NDArray[np.int64]:
    actions = np.asarray(actions)
    if actions.shape not in ((n,), (n, 1)):
        raise ValueError(f"act_batch must return {n} actions; got shape {actions.shape}")
    if actions.dtype.kind not in "iu":  # floats and bools name no cell, as in env.step
        return np.full(n, NOT_A_CELL, dtype=np.int64)
    actions = actions.reshape(n).astype(np.int64)
    return np.where((actions >= 0) & (actions < rules.n_cells), actions, NOT_A_CELL)


def table_ask(moves: npt.NDArray) -> Ask:
    """Answers from a moves table (``evaluation.policy_moves``): one-hot, sparse."""
    return lambda codes, mark: (moves[codes].astype(np.int64)[:, None], None)


def move_ask(policy: Any, rules: Rules) -> Ask:
    """Answers of a deterministic policy asked at each batch of positions."""
    def ask(codes: npt.NDArray[np.int64], mark: int) -> tuple[npt.NDArray, None]:
        observations, masks = views(rules, codes, mark)
        return moves_of(policy, observations, masks, rules)[:, None], None
    return ask


def probability_ask(policy: Any, rules: Rules) -> Ask:
    """Answers of a stochastic policy: its checked probabilities of every cell."""
    def ask(codes: npt.NDArray[np.int64], mark: int) -> tuple[npt.NDArray, npt.NDArray]:
        probs = stochastic.probabilities_of(policy, *views(rules, codes, mark))
        return np.broadcast_to(np.arange(rules.n_cells), probs.shape), probs
    return ask


def views(rules: Rules, codes: npt.NDArray[np.int64],
          mark: int) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """The relative boards (1 = the side to move, ``mark``) of ``codes``, and their masks."""
    cells = rules.cells_of(codes)
    observations = game.SWAP[cells] if mark == game.O else cells
    return observations, (cells == game.EMPTY).astype(np.int8)


@cache
def boards(rules: Rules) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int8]]:
    """Every unfinished position's code and its relative board (read-only, cached per board):
    what ``evaluation.policy_moves`` asks a policy about. Filled a layer at a time: on 4x4 they
    take 230 MB, and concatenating per-layer parts would hold them twice."""
    rules.check_solvable("exact evaluation over every position")
    layers = [(layer.codes[~layer.terminal], layer.mark) for layer in rules.positions]
    n = sum(codes.size for codes, _ in layers)
    codes, observations = (np.empty(n, dtype=np.int64),
                           np.empty((n, rules.n_cells), dtype=np.int8))
    start = 0
    for part, mark in layers:
        codes[start : start + part.size] = part
        observations[start : start + part.size] = views(rules, part, mark)[0]
        start += part.size
    for array in (codes, observations):
        array.setflags(write=False)
    return codes, observations


def check_boards(rules: Rules, observations: Any) -> npt.NDArray:
    cells = np.asarray(observations)
    if cells.ndim != 2 or cells.shape[1] != rules.n_cells:
        raise ValueError(f"observations must be (N, {rules.n_cells}) boards of 0, 1, 2")
    return cells


def absolute_codes(rules: Rules, observations: Any) -> npt.NDArray[np.int64]:
    """Codes of relative boards (1 = the side to move, which is O when it has fewer marks)."""
    cells = check_boards(rules, observations)
    if not np.isin(cells, (0, 1, 2)).all():
        raise ValueError(f"observations must be (N, {rules.n_cells}) boards of 0, 1, 2")
    cells = cells.astype(np.int64)
    swap = (cells == 1).sum(axis=1) < (cells == 2).sum(axis=1)
    return np.where(swap[:, None], game.SWAP[cells], cells) @ rules.pow3
