"""One protocol for every player, for one board and for a batch of boards.

A player answers one question, the move at a position, in the two forms its callers have it:

- ``move(position, rng) -> cell`` on a position (:mod:`gym_tictactoe.game.positions`; the
  caller's own: read it, never change it), as the envs ask (``act(board, mark, rng)``, the
  documented opponent form, is the same question on an absolute board);
- ``player(observation, action_mask) -> cell`` on the board as the side to move sees it (1 its
  own marks, 2 the other's), as evaluation asks and as a :data:`Policy` (a trained agent) is
  written.

:class:`Player`, the base of every built-in player, writes ``move`` and derives the rest:
``reset(rng)`` starts an episode, ``batch(num_envs, rules, agents)`` replies on many boards of
the vector env at once (``vector_opponents``; a player without a faster way is asked board by
board). A trained agent (tabular Q, SB3, AlphaZero) writes the policy form and plays through the
``policy`` player (``PolicyOpponent``).

Optional capabilities, declared here as runtime-checkable protocols and read only through
:func:`capabilities` and the functions beside it (never by an algorithm's name):

- :class:`AnswersBatch`: ``act_batch(observations, masks)`` answers many positions in one call
  (evaluation asks a whole layer at once; the vector env asks once a step);
- :class:`GivesProbabilities`: ``action_probabilities_batch(observations, masks)`` (or the
  one-board ``action_probabilities``): evaluation measures the player as the stochastic one it is;
- :class:`GivesCellValues`: ``cell_values(observations, masks) -> (kind, values)``, what the
  player thinks of each cell, for pictures (``"Q-value"`` or ``"probability"``);
- :class:`Costly`: ``cost``, a phrase saying what one move costs (``"search of 50 simulations a
  move"``) where asking at every position is too costly, else None: evaluation then asks it only
  where a best response reaches.

Anything else with the documented ``act(board, mark, rng) -> int`` (your own opponent) is
adapted once, at the edge, by :func:`as_player`, into an :class:`ActPlayer` that calls that
``act`` in both envs. The same holds for a subclass of a built-in player that overrides ``act``
below its ``move``: its ``act`` decides everywhere. A subclass that overrides ``move`` keeps its
``move`` in the vector env too (board by board) unless it also gives its own ``_batch``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.game.batch import Batch, Boards
from gym_tictactoe.game.positions import Position, as_cell, from_board

Cells = npt.NDArray[np.int16]
# The policy form of the question: ``policy(observation, action_mask) -> cell`` on the board as
# the side to move sees it (1 its own marks, 2 the other's).
Policy = Callable[[npt.NDArray[np.int8], npt.NDArray[np.int8]], int]


@runtime_checkable
class Opponent(Protocol):
    """The documented form an object of yours takes to play: ``act(board, mark, rng)`` on the
    absolute board (0 empty, 1 X, 2 O) for ``mark``, the side to move; :func:`as_player` adapts
    it once."""

    def act(self, board: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int: ...


class BatchPlayer(Protocol):
    """A player's replies on many boards at once: ``boards`` are the indices, into the env's
    whole ``batch`` (``game.batch``), of the boards that need a reply."""

    def reset(self, boards: Boards, rng: np.random.Generator) -> None: ...

    def reply(self, batch: Batch, boards: Boards, rng: np.random.Generator) -> Cells: ...


# --- optional capabilities ------------------------------------------------------------------


@runtime_checkable
class AnswersBatch(Protocol):
    """Answers many positions in one call: the cell for each of ``observations`` (N, cells) of
    relative boards under their ``masks`` (N, cells)."""

    def act_batch(self, observations: npt.NDArray[np.int8],
                  masks: npt.NDArray[np.int8]) -> npt.ArrayLike: ...


@runtime_checkable
class GivesProbabilities(Protocol):
    """Gives its move probabilities, (N, cells) for N relative boards (0 on occupied cells,
    each row summing to 1): evaluation measures it as the stochastic player it is. The one-board
    ``action_probabilities(observation, mask)`` is accepted in its place."""

    def action_probabilities_batch(self, observations: npt.NDArray[np.int8],
                                   masks: npt.NDArray[np.int8]) -> npt.ArrayLike: ...


@runtime_checkable
class GivesCellValues(Protocol):
    """Says what it thinks of each cell, for pictures: ``(kind, values)`` with ``kind``
    ``"Q-value"`` or ``"probability"`` and ``values`` (N, cells) for N relative boards."""

    def cell_values(self, observations: npt.NDArray[np.int8],
                    masks: npt.NDArray[np.int8]) -> tuple[str, npt.NDArray[np.float64]]: ...


@runtime_checkable
class Costly(Protocol):
    """Too costly to ask at every position of a big board (a search): ``cost`` says what one
    move costs, in words, or is None where it is cheap after all (a network without its
    search)."""

    cost: str | None


CAPABILITIES = ("batch", "probabilities", "cell values", "costly")


def capabilities(player: Any) -> frozenset[str]:
    """Which of ``CAPABILITIES`` ``player`` offers."""
    offered = {"batch": isinstance(player, AnswersBatch),
               "probabilities": gives_probabilities(player),
               "cell values": isinstance(player, GivesCellValues),
               "costly": cost_of(player) is not None}
    return frozenset(name for name, yes in offered.items() if yes)


def gives_probabilities(player: Any) -> bool:
    """Whether ``player`` gives its move probabilities (either form)."""
    return isinstance(player, GivesProbabilities) or callable(
        getattr(player, "action_probabilities", None))


def cost_of(player: Any) -> str | None:
    """What one move of ``player`` costs, where it is too costly to ask everywhere; else None."""
    cost = player.cost if isinstance(player, Costly) else None
    return cost if isinstance(cost, str) else None


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

    def __call__(self, observation: npt.ArrayLike, action_mask: npt.ArrayLike) -> int:
        """The policy form: the move at the relative board ``observation`` (1 the side to move,
        which is X where both sides have as many marks). A player that draws among equal moves
        draws from its own generator, seeded 0 on the first question: evaluation then measures
        one fixed choice per position (``gym_tictactoe.evaluation``'s "Stochastic policies")."""
        cells = np.asarray(observation)
        mark = game.X if (cells == 1).sum() == (cells == 2).sum() else game.O
        board = cells if mark == game.X else game.SWAP[cells]
        if "_policy_rng" not in self.__dict__:
            self._policy_rng = np.random.default_rng(0)
        return self.move(from_board(self.rules, board, mark), self._policy_rng)

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
    """The one adapter at the edge: ``opponent`` itself if it is a :class:`Player` whose ``act``
    is its ``move`` (defined no lower than ``move``); anything else with an ``act`` (a subclass
    overriding ``act`` below its ``move`` among them) wrapped once."""
    cls = type(opponent)
    if isinstance(opponent, Player) and issubclass(_defined_in(cls, "move"),
                                                   _defined_in(cls, "act")):
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

    def reply(self, batch: Batch, boards: Boards, rng: np.random.Generator) -> Cells:
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
