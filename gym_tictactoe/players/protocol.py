"""One protocol for every player, for one board and for a batch of boards.

A :class:`Player` answers ``move(position, rng) -> cell`` for one position
(:mod:`gym_tictactoe.game.positions`; the caller's own: read it, never change it) and
``batch(num_envs, rules, agents)`` for the vector env: an object whose ``act(positions, boards,
rng)`` replies on many boards at once (``vector_opponents``). A player that has no faster way
inherits a batch that asks ``move`` board by board. ``reset(rng)`` starts an episode.

Anything else with the documented ``act(board, mark, rng) -> int`` (your own opponent, the
alpha-beta player) is wrapped once, by :func:`as_player`, in an :class:`ActPlayer` that calls
that ``act`` in both envs. The same holds for a subclass of a built-in player that overrides
``act``: its ``act`` decides everywhere. A subclass that overrides ``move`` keeps its ``move`` in
the vector env too (board by board) unless it also gives its own ``_batch``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.game.batch import Batch, Boards
from gym_tictactoe.game.positions import Position, as_cell, from_board

Cells = npt.NDArray[np.int16]


@runtime_checkable
class Opponent(Protocol):
    def act(self, board: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int: ...


class BatchPlayer(Protocol):
    """A player's replies on many boards at once: ``boards`` are the indices, into the env's
    whole ``batch`` (``game.batch``), of the boards that need a reply."""

    def reset(self, boards: Boards, rng: np.random.Generator) -> None: ...

    def act(self, batch: Batch, boards: Boards, rng: np.random.Generator) -> Cells: ...


def pick(choices: Sequence[int] | npt.NDArray, rng: np.random.Generator,
         deterministic: bool = False) -> int:
    """A uniform choice, or the first when deterministic, among a position's candidate cells."""
    if len(choices) == 0:
        raise ValueError("no legal move: the game is over")
    if deterministic or len(choices) == 1:
        return int(choices[0])
    # rng.random() costs a quarter of rng.integers(n), and this runs on every opponent move.
    return int(choices[int(rng.random() * len(choices))])


class Player:
    """A player for one board (``rules``; 3x3 by default). Subclasses write ``move``, and a
    ``_batch`` where they answer for many boards faster than one by one."""

    rules: game.Rules = game.TICTACTOE

    def _set_board(self, rows: int, cols: int, win_length: int) -> None:
        self.rules = game.rules(rows, cols, win_length)

    def move(self, position: Position, rng: np.random.Generator) -> int:
        """The move at ``position`` (unfinished, this player to move)."""
        raise NotImplementedError

    def act(self, board: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        """The documented opponent API: the move on an absolute ``board`` as ``mark``."""
        return self.move(from_board(self.rules, board, mark), rng)

    def reset(self, rng: np.random.Generator) -> None:
        """Start an episode (a mixture draws its player here)."""

    def batch(self, num_envs: int, rules: game.Rules,
              agents: npt.NDArray[np.int8]) -> BatchPlayer:
        """This player on ``num_envs`` boards of ``rules``; ``agents`` is the env's array of the
        agent's mark per board (the player has the other). A ``_batch`` serves only the ``move``
        it was written with: a subclass that overrides ``move`` alone is asked board by board."""
        cls = type(self)
        if issubclass(_defined_in(cls, "_batch"), _defined_in(cls, "move")):
            return self._batch(num_envs, rules, agents)
        return LoopPlayer(self, rules, agents)

    def _batch(self, num_envs: int, rules: game.Rules,
               agents: npt.NDArray[np.int8]) -> BatchPlayer:
        return LoopPlayer(self, rules, agents)

    @property
    def stateful(self) -> bool:
        """Whether the player keeps state between moves of an episode (it has its own reset):
        then every board of a batch asked one by one gets its own copy."""
        return type(self).reset is not Player.reset

    def _board_args(self) -> str:
        rules = self.rules
        return "" if rules == game.TICTACTOE else (
            f", rows={rules.rows}, cols={rules.cols}, win_length={rules.win_length}")


def _defined_in(cls: type, name: str) -> type:
    return next(base for base in cls.__mro__ if name in vars(base))


class ActPlayer(Player):
    """An object with ``act(board, mark, rng)`` (and maybe ``reset(rng)``) as a player: its
    ``act`` answers for every position, in both envs."""

    def __init__(self, opponent: Any, rules: game.Rules) -> None:
        self.opponent, self.rules = opponent, rules

    def move(self, position: Position, rng: np.random.Generator) -> int:
        return self.opponent.act(position.cells.copy(), position.mark, rng)

    def act(self, board: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        return self.opponent.act(board, mark, rng)

    def reset(self, rng: np.random.Generator) -> None:
        reset = getattr(self.opponent, "reset", None)
        if callable(reset):
            reset(rng)

    @property
    def stateful(self) -> bool:
        return callable(getattr(self.opponent, "reset", None))

    def __repr__(self) -> str:
        return repr(self.opponent)


def as_player(opponent: Any, rules: game.Rules) -> Player:
    """``opponent`` itself if it is a :class:`Player` that keeps the protocol's ``act``; anything
    else with an ``act`` (a subclass overriding ``act`` among them) wrapped once."""
    if isinstance(opponent, Player) and type(opponent).act is Player.act:
        return opponent
    return ActPlayer(opponent, rules)


def reset_opponent(opponent: Opponent, rng: np.random.Generator) -> None:
    """Start a new episode for ``opponent`` (a mixture draws its player here)."""
    reset = getattr(opponent, "reset", None)
    if callable(reset):
        reset(rng)


class LoopPlayer:
    """Any player on a batch, asked board by board through its ``act`` (alpha-beta, Monte
    Carlo, policies, your own). A player with state per episode gets a copy per board."""

    def __init__(self, player: Player, rules: game.Rules, agents: npt.NDArray[np.int8]):
        self.rules, self.agents = rules, agents
        self.players = [copy.deepcopy(player) if player.stateful else player
                        for _ in range(len(agents))]

    def reset(self, boards: Boards, rng: np.random.Generator) -> None:
        for board in boards.tolist():
            self.players[board].reset(rng)

    def act(self, batch: Batch, boards: Boards, rng: np.random.Generator) -> Cells:
        cells = batch.cells(boards)
        marks = game.SWAP[self.agents[boards]].tolist()
        moves = [self.players[b].act(c.copy(), m, rng)
                 for b, c, m in zip(boards.tolist(), cells, marks, strict=True)]
        return checked_moves(moves, cells, self.players[0])


def checked_moves(moves: list, cells: npt.NDArray[np.int8], player: Any) -> Cells:
    """The replies as cells, by the single env's rule (``positions.as_cell``), or a
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
