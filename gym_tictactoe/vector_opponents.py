"""Opponents for the vector environment: replies on many boards at once by table look-ups.

A table opponent's candidate moves for every code are sorted once, candidates first, and a reply
is the k-th candidate with k uniform: one random number per board, no loop over boards. Epsilon
opponents and mixtures combine such players over sub-arrays of the batch.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.opponents import (
    EpsilonOpponent,
    MixtureOpponent,
    Opponent,
    TableOpponent,
    parse_opponent,
)

Boards = npt.NDArray[np.intp]  # indices of boards in the batch
Codes = npt.NDArray[np.int64]
Cells = npt.NDArray[np.int8]

_PLAYING = game.REACHABLE[~game.TERMINAL[game.REACHABLE]]


class VectorOpponent(Protocol):
    """An opponent replying on many boards at once; ``boards`` are indices into the batch."""

    def reset(self, boards: Boards, rng: np.random.Generator) -> None: ...

    def act(self, codes: Codes, boards: Boards, rng: np.random.Generator) -> Cells: ...


class TablePlayer:
    """A table opponent over arrays: a uniform candidate, or the lowest one when deterministic."""

    def __init__(self, table: npt.NDArray[np.bool_], deterministic: bool, name: str) -> None:
        table = np.asarray(table, dtype=bool)
        _check_table(table, name)
        self.count = table.sum(axis=1)
        # A stable sort of "not a candidate" lists each code's candidate cells first, in order;
        # flattened so that the k-th candidate of a code is order[code * 9 + k].
        self.order = np.argsort(~table, axis=1, kind="stable").astype(np.int8).ravel()
        self.deterministic = bool(deterministic)

    def reset(self, boards: Boards, rng: np.random.Generator) -> None:
        pass  # a table player keeps no state between moves

    def act(self, codes: Codes, boards: Boards, rng: np.random.Generator) -> Cells:
        if self.deterministic:
            return self.order.take(codes * game.N_CELLS)
        # floor(u * n) with u in [0, 1) is uniform over 0..n-1 (and never n in floating point).
        k = (rng.random(codes.size) * self.count.take(codes)).astype(np.int64)
        return self.order.take(codes * game.N_CELLS + k)


def _check_table(table: npt.NDArray[np.bool_], name: str) -> None:
    """A move table must offer at least one move, and only legal ones, in every live position."""
    if table.shape != (game.N_CODES, game.N_CELLS):
        raise ValueError(f"{name}'s table must have shape {(game.N_CODES, game.N_CELLS)}")
    rows = table[_PLAYING]
    if (rows & (game.LEGAL_MASK[_PLAYING] == 0)).any() or not rows.any(axis=1).all():
        raise ValueError(f"{name}'s table must mark legal moves only, and one at least, "
                         "in every position that is still being played")


class EpsilonPlayer:
    """With probability ``epsilon`` a uniformly random legal move, else ``inner``'s move."""

    def __init__(self, epsilon: float, inner: VectorOpponent) -> None:
        self.epsilon, self.inner = epsilon, inner
        self.random = TablePlayer(game.LEGAL_MASK, deterministic=False, name="random")

    def reset(self, boards: Boards, rng: np.random.Generator) -> None:
        self.inner.reset(boards, rng)

    def act(self, codes: Codes, boards: Boards, rng: np.random.Generator) -> Cells:
        explore = rng.random(codes.size) < self.epsilon
        cells = np.empty(codes.size, dtype=np.int8)
        cells[explore] = self.random.act(codes[explore], boards[explore], rng)
        cells[~explore] = self.inner.act(codes[~explore], boards[~explore], rng)
        return cells


class MixturePlayer:
    """Draws one of ``players`` per board at each of its resets and plays it for the episode."""

    def __init__(self, players: list[VectorOpponent], weights: npt.NDArray, num_envs: int):
        self.players, self.weights = players, weights
        # Like MixtureOpponent, the first player plays until a board's first reset.
        self.current = np.zeros(num_envs, dtype=np.intp)

    def reset(self, boards: Boards, rng: np.random.Generator) -> None:
        self.current[boards] = rng.choice(len(self.players), size=boards.size, p=self.weights)
        for k, player in enumerate(self.players):
            player.reset(boards[self.current[boards] == k], rng)

    def act(self, codes: Codes, boards: Boards, rng: np.random.Generator) -> Cells:
        cells = np.empty(codes.size, dtype=np.int8)
        which = self.current[boards]
        for k, player in enumerate(self.players):  # a loop over players, not boards
            mine = which == k
            if mine.any():
                cells[mine] = player.act(codes[mine], boards[mine], rng)
        return cells


def vectorize_opponent(opponent: Opponent | str, num_envs: int) -> VectorOpponent:
    """The array form of a table opponent (random, minimax, heuristic, ...), an epsilon opponent
    over one, or a mixture of them; a name or a ``parse_opponent`` spec string is parsed first."""
    if isinstance(opponent, str):
        opponent = parse_opponent(opponent)
    if isinstance(opponent, TableOpponent):
        return TablePlayer(opponent.table, opponent.deterministic, repr(opponent))
    if isinstance(opponent, EpsilonOpponent):
        return EpsilonPlayer(opponent.epsilon, vectorize_opponent(opponent.inner, num_envs))
    if isinstance(opponent, MixtureOpponent):
        players = [vectorize_opponent(o, num_envs) for o in opponent.opponents]
        return MixturePlayer(players, opponent.weights, num_envs)
    raise ValueError(
        f"the vector env replies by table look-ups: opponent must be a table opponent (random, "
        f"minimax, heuristic), epsilon over one, or a mixture of those; got {opponent!r}"
    )
