"""Batch forms of the table and policy players: replies on many boards at once.

On tabled boards a table player's candidate moves for every code are sorted once, candidates
first, and a reply is the k-th candidate with k uniform: one random number per board, no loop
over boards. On bigger boards a table player's ``candidates`` mask is computed for the whole
batch. A ``PolicyOpponent`` whose policy has ``act_batch`` is asked once per batch. Every player
gets its batch form from its own ``batch`` method (``players.Player``); the combinators
(epsilon, mixture) and the board-by-board fallback live with the protocol.

A batch player's ``reply(batch, boards, rng)`` gets the env's whole batch (``game.batch.Batch``:
codes on tabled boards, cells on others) and the indices of the ``boards`` that need a reply.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.game.batch import Batch, Boards
from gym_tictactoe.players.protocol import Cells, checked_moves

Codes = npt.NDArray[np.int64]
__all__ = ["MaskPlayer", "PolicyPlayer", "RandomCells", "TablePlayer"]


class TablePlayer:
    """A table opponent over codes of a tabled board: a uniform candidate, or the lowest one
    when deterministic."""

    def __init__(self, table: npt.NDArray[np.bool_], deterministic: bool, name: str,
                 rules: game.Rules) -> None:
        table = np.asarray(table, dtype=bool)
        _check_table(table, name, rules)
        self.n = rules.n_cells
        self.count = table.sum(axis=1)
        # A stable sort of "not a candidate" lists each code's candidate cells first, in order;
        # flattened so that the k-th candidate of a code is order[code * n + k].
        self.order = np.argsort(~table, axis=1, kind="stable").astype(np.int8).ravel()
        self.deterministic = bool(deterministic)

    def reset(self, boards: Boards, rng: np.random.Generator) -> None:
        pass  # a table player keeps no state between moves

    def reply(self, batch: Batch, boards: Boards, rng: np.random.Generator) -> Cells:
        if batch.codes is None:
            raise ValueError(f"a table player plays boards with position codes; "
                             f"the {batch.rules.name} board has none")
        return self.on_codes(batch.codes[boards], rng)

    def on_codes(self, codes: Codes, rng: np.random.Generator) -> Cells:
        """The replies at positions ``codes`` (a caller's own array of codes: an agent's)."""
        if self.deterministic:
            return self.order.take(codes * self.n)
        # floor(u * n) with u in [0, 1) is uniform over 0..n-1 (and never n in floating point).
        k = (rng.random(codes.size) * self.count.take(codes)).astype(np.int64)
        return self.order.take(codes * self.n + k)


def _check_table(table: npt.NDArray[np.bool_], name: str, rules: game.Rules) -> None:
    """A move table must offer at least one move, and only legal ones, in every live position."""
    shape = (rules.n_codes, rules.n_cells)
    if table.shape != shape:
        raise ValueError(f"{name}'s table must have shape {shape}")
    playing = rules.reachable[~rules.tables.terminal[rules.reachable]]
    rows = table[playing]
    if (rows & (rules.tables.legal_mask[playing] == 0)).any() or not rows.any(axis=1).all():
        raise ValueError(f"{name}'s table must mark legal moves only, and one at least, "
                         "in every position that is still being played")


class MaskPlayer:
    """A table opponent on a board without tables: its ``candidates`` for the whole batch, then
    a uniform one per board (the lowest when deterministic)."""

    def __init__(self, opponent: Any, agents: npt.NDArray[np.int8]) -> None:
        self.opponent, self.agents = opponent, agents

    def reset(self, boards: Boards, rng: np.random.Generator) -> None:
        pass

    def reply(self, batch: Batch, boards: Boards, rng: np.random.Generator) -> Cells:
        codes = None if batch.codes is None else batch.codes[boards]
        marks = game.SWAP[self.agents[boards]]
        mask = self.opponent.candidates(batch.cells(boards), marks, codes)
        if self.opponent.deterministic:
            return np.argmax(mask, axis=1).astype(np.int16)
        # The argmax of uniform noise over the candidates is a uniform candidate.
        return np.argmax(rng.random(mask.shape) * mask, axis=1).astype(np.int16)


class RandomCells:
    """Uniformly random empty cells on a board without tables: a random cell per board, drawn
    again where it is taken (few draws while boards are mostly empty), then masked noise for any
    board still without one. Cheaper than noise over every cell of every board."""

    DRAWS = 4

    def reset(self, boards: Boards, rng: np.random.Generator) -> None:
        pass

    def reply(self, batch: Batch, boards: Boards, rng: np.random.Generator) -> Cells:
        n = batch.n
        cells = (rng.random(boards.size) * n).astype(np.intp)
        pending = np.arange(boards.size)
        for _ in range(self.DRAWS):
            pending = pending[batch.at(boards[pending], cells[pending]) != game.EMPTY]
            if pending.size == 0:
                return cells.astype(np.int16)
            cells[pending] = (rng.random(pending.size) * n).astype(np.intp)
        pending = pending[batch.at(boards[pending], cells[pending]) != game.EMPTY]
        empty = batch.cells(boards[pending]) == game.EMPTY
        cells[pending] = np.argmax(rng.random(empty.shape) * empty, axis=1)
        return cells.astype(np.int16)


class PolicyPlayer:
    """A ``PolicyOpponent`` whose policy has ``act_batch(observations, masks)`` (a trained agent,
    a network): asked once for all the boards that need a reply, each seen as the env's agent
    sees its own (1 the policy's mark, 2 the other)."""

    def __init__(self, opponent: Any, rules: game.Rules,
                 agents: npt.NDArray[np.int8]) -> None:
        self.opponent, self.rules, self.agents = opponent, rules, agents

    def reset(self, boards: Boards, rng: np.random.Generator) -> None:
        pass  # a policy keeps no state between episodes

    def reply(self, batch: Batch, boards: Boards, rng: np.random.Generator) -> Cells:
        cells = batch.cells(boards)
        # The policy's own mark is the agent's opponent's: swap where that is O.
        swap = (self.agents[boards] == game.X)[:, None]
        observations = np.where(swap, game.SWAP[cells], cells).astype(np.int8)
        masks = (cells == game.EMPTY).astype(np.int8)
        moves = np.asarray(self.opponent.policy.act_batch(observations, masks)).reshape(-1)
        return checked_moves(list(moves), cells, self.opponent)
