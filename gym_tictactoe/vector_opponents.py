"""Opponents for the vector environment: replies on many boards at once.

On tabled boards a table opponent's candidate moves for every code are sorted once, candidates
first, and a reply is the k-th candidate with k uniform: one random number per board, no loop
over boards. On bigger boards a table opponent's ``candidates`` mask is computed for the whole
batch. Epsilon opponents and mixtures combine such players over sub-arrays of the batch; a
``PolicyOpponent`` whose policy has ``act_batch`` is asked once per batch; any other opponent
(alpha-beta, Monte Carlo, a plain policy, your own) is asked board by board.

A player's ``act(positions, boards, rng)`` gets, for the ``boards`` (indices into the batch) that
need a reply, their codes (tabled boards) or the whole ``CellBoards`` batch (others).
"""

from __future__ import annotations

import copy
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.env import as_cell
from gym_tictactoe.opponents import (
    EpsilonOpponent,
    MixtureOpponent,
    Opponent,
    PolicyOpponent,
    RandomOpponent,
    TableOpponent,
    reset_opponent,
    resolve_opponent,
)

Boards = npt.NDArray[np.intp]  # indices of boards in the batch
Codes = npt.NDArray[np.int64]
Cells = npt.NDArray[np.int8]



class VectorOpponent(Protocol):
    """An opponent replying on many boards at once; ``boards`` are indices into the batch."""

    def reset(self, boards: Boards, rng: np.random.Generator) -> None: ...

    def act(self, positions: Any, boards: Boards, rng: np.random.Generator) -> Cells: ...


def _subset(positions: Any, rows: npt.NDArray) -> Any:
    """The positions of some of the boards asked about: codes are sliced, a batch is shared."""
    return positions[rows] if isinstance(positions, np.ndarray) else positions


class TablePlayer:
    """A table opponent over codes of a tabled board: a uniform candidate, or the lowest one
    when deterministic."""

    def __init__(self, table: npt.NDArray[np.bool_], deterministic: bool, name: str,
                 rules: game.Rules = game.TICTACTOE) -> None:
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

    def act(self, codes: Codes, boards: Boards, rng: np.random.Generator) -> Cells:
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

    def __init__(self, opponent: TableOpponent, agents: npt.NDArray[np.int8]) -> None:
        self.opponent, self.agents = opponent, agents

    def reset(self, boards: Boards, rng: np.random.Generator) -> None:
        pass

    def act(self, batch: Any, boards: Boards, rng: np.random.Generator) -> Cells:
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

    def act(self, batch: Any, boards: Boards, rng: np.random.Generator) -> Cells:
        board, n = batch.board, batch.n
        cells = (rng.random(boards.size) * n).astype(np.intp)
        pending = np.arange(boards.size)
        for _ in range(self.DRAWS):
            pending = pending[board[boards[pending], cells[pending]] != game.EMPTY]
            if pending.size == 0:
                return cells.astype(np.int16)
            cells[pending] = (rng.random(pending.size) * n).astype(np.intp)
        pending = pending[board[boards[pending], cells[pending]] != game.EMPTY]
        empty = board[boards[pending], :-1] == game.EMPTY
        cells[pending] = np.argmax(rng.random(empty.shape) * empty, axis=1)
        return cells.astype(np.int16)


class LoopPlayer:
    """Any other opponent, asked board by board (alpha-beta, Monte Carlo, policies, your own).
    An opponent with a ``reset`` keeps state per episode, so each board gets its own copy."""

    def __init__(self, opponent: Opponent, rules: game.Rules, agents: npt.NDArray[np.int8]):
        self.rules, self.agents = rules, agents
        own_state = callable(getattr(opponent, "reset", None))
        self.players = [copy.deepcopy(opponent) if own_state else opponent
                        for _ in range(len(agents))]

    def reset(self, boards: Boards, rng: np.random.Generator) -> None:
        for board in boards.tolist():
            reset_opponent(self.players[board], rng)

    def act(self, positions: Any, boards: Boards, rng: np.random.Generator) -> Cells:
        if isinstance(positions, np.ndarray):
            cells = self.rules.tables.cells[positions]
        else:
            cells = positions.cells(boards)
        marks = game.SWAP[self.agents[boards]].tolist()
        moves = [self.players[b].act(c.copy(), m, rng)
                 for b, c, m in zip(boards.tolist(), cells, marks, strict=True)]
        return _checked_moves(moves, cells, self.players[0])


class PolicyPlayer:
    """A ``PolicyOpponent`` whose policy has ``act_batch(observations, masks)`` (a trained agent,
    a network): asked once for all the boards that need a reply, each seen as the env's agent
    sees its own (1 the policy's mark, 2 the other)."""

    def __init__(self, opponent: PolicyOpponent, rules: game.Rules,
                 agents: npt.NDArray[np.int8]) -> None:
        self.opponent, self.rules, self.agents = opponent, rules, agents

    def reset(self, boards: Boards, rng: np.random.Generator) -> None:
        pass  # a policy keeps no state between episodes

    def act(self, positions: Any, boards: Boards, rng: np.random.Generator) -> Cells:
        cells = (self.rules.tables.cells[positions] if isinstance(positions, np.ndarray)
                 else positions.cells(boards))
        # The policy's own mark is the agent's opponent's: swap where that is O.
        swap = (self.agents[boards] == game.X)[:, None]
        observations = np.where(swap, game.SWAP[cells], cells).astype(np.int8)
        masks = (cells == game.EMPTY).astype(np.int8)
        moves = np.asarray(self.opponent.policy.act_batch(observations, masks)).reshape(-1)
        return _checked_moves(list(moves), cells, self.opponent)


def _checked_moves(moves: list, cells: npt.NDArray[np.int8], player: Opponent) -> Cells:
    """The opponent's replies as cells, by the single env's rule (``env.as_cell``), or a
    RuntimeError naming the first that is no free cell."""
    n = cells.shape[1]
    found = [as_cell(move, n) for move in moves]
    moves_array = np.array([-1 if cell is None else cell for cell in found], dtype=np.int64)
    free = moves_array >= 0
    free[free] = cells[np.flatnonzero(free), moves_array[free]] == game.EMPTY
    if not free.all():
        bad = int(np.flatnonzero(~free)[0])
        raise RuntimeError(f"opponent {player!r} played {moves[bad]!r}; legal moves: "
                           f"{np.flatnonzero(cells[bad] == 0).tolist()}")
    return moves_array.astype(np.int16)


class EpsilonPlayer:
    """With probability ``epsilon`` a uniformly random legal move, else ``inner``'s move."""

    def __init__(self, epsilon: float, inner: VectorOpponent, random: VectorOpponent) -> None:
        self.epsilon, self.inner, self.random = epsilon, inner, random

    def reset(self, boards: Boards, rng: np.random.Generator) -> None:
        self.inner.reset(boards, rng)

    def act(self, positions: Any, boards: Boards, rng: np.random.Generator) -> Cells:
        explore = rng.random(boards.size) < self.epsilon
        cells = np.empty(boards.size, dtype=np.int16)
        for rows, player in ((explore, self.random), (~explore, self.inner)):
            if rows.any():
                cells[rows] = player.act(_subset(positions, rows), boards[rows], rng)
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

    def act(self, positions: Any, boards: Boards, rng: np.random.Generator) -> Cells:
        cells = np.empty(boards.size, dtype=np.int16)
        which = self.current[boards]
        for k, player in enumerate(self.players):  # a loop over players, not boards
            mine = which == k
            if mine.any():
                cells[mine] = player.act(_subset(positions, mine), boards[mine], rng)
        return cells


def vectorize_opponent(opponent: Opponent | str, num_envs: int,
                       rules: game.Rules = game.TICTACTOE,
                       agents: npt.NDArray[np.int8] | None = None) -> VectorOpponent:
    """The array form of an opponent for ``num_envs`` boards of ``rules``: table opponents
    (random, minimax, heuristic) by look-ups or masks, epsilon over one and mixtures of them
    combined, a policy with ``act_batch`` once per batch, anything else board by board. A name
    or ``parse_opponent`` spec is parsed first.
    ``agents`` is the env's array of the agent's mark per board (the opponent has the other)."""
    opponent = resolve_opponent(opponent, rules)
    if agents is None:
        agents = np.full(num_envs, game.X, dtype=np.int8)
    if isinstance(opponent, TableOpponent):
        if rules.tabled:
            return TablePlayer(opponent.table, opponent.deterministic, repr(opponent), rules)
        if type(opponent) is RandomOpponent and not opponent.deterministic:
            return RandomCells()
        return MaskPlayer(opponent, agents)
    if isinstance(opponent, EpsilonOpponent):
        random = vectorize_opponent(RandomOpponent(**rules.kwargs), num_envs, rules, agents)
        inner = vectorize_opponent(opponent.inner, num_envs, rules, agents)
        return EpsilonPlayer(opponent.epsilon, inner, random)
    if isinstance(opponent, MixtureOpponent):
        players = [vectorize_opponent(o, num_envs, rules, agents) for o in opponent.opponents]
        return MixturePlayer(players, opponent.weights, num_envs)
    if isinstance(opponent, PolicyOpponent) and callable(
            getattr(opponent.policy, "act_batch", None)):
        return PolicyPlayer(opponent, rules, agents)
    return LoopPlayer(opponent, rules, agents)
