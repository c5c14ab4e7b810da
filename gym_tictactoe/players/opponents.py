"""The built-in players that sit across the board from the agent, and the opponent specs.

An opponent is any object with ``act(board, mark, rng) -> int``: ``board`` is the absolute board,
one cell per entry, row-major (0 empty, 1 X, 2 O), ``mark`` the opponent's own mark and ``rng`` a
``numpy.random.Generator`` owned by the environment, the only source of randomness an opponent
may use. An optional ``reset(rng)`` is called at the start of every episode.

Every built-in player is a :class:`~gym_tictactoe.players.Player` made for one board (``rows``,
``cols``, ``win_length`` keywords, 3x3 by default; the env builds its named opponents for its own
board): it answers ``move(position, rng)`` on the env's position and replies for a whole batch
of boards through ``batch`` (see :mod:`gym_tictactoe.players.protocol`). The table players (random,
minimax, heuristic) and the policy player are in :mod:`gym_tictactoe.players.table_players`, pure
Monte Carlo search in :mod:`gym_tictactoe.players.montecarlo`; here are the combinators (epsilon,
mixture) and the specs that name them.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.checks import check_number, is_number
from gym_tictactoe.game.batch import Batch, Boards
from gym_tictactoe.game.positions import Position
from gym_tictactoe.players.mcts import MCTSPlayer
from gym_tictactoe.players.montecarlo import (
    MAX_PLAYOUTS,
    MonteCarloOpponent,
    random_playouts,
    random_playouts_cells,
)
from gym_tictactoe.players.protocol import (
    BatchPlayer,
    Cells,
    Opponent,
    Player,
    as_player,
    reset_opponent,
)
from gym_tictactoe.players.search import AlphaBetaPlayer
from gym_tictactoe.players.table_players import (
    HeuristicOpponent,
    MinimaxOpponent,
    Policy,
    PolicyOpponent,
    RandomOpponent,
    TableOpponent,
)

__all__ = ["MAX_PLAYOUTS", "OPPONENTS", "EpsilonOpponent", "HeuristicOpponent",
           "MinimaxOpponent", "MixtureOpponent", "MonteCarloOpponent", "Opponent", "Policy",
           "PolicyOpponent", "RandomOpponent", "TableOpponent", "make_opponent", "parse_opponent",
           "random_playouts", "random_playouts_cells", "reset_opponent", "resolve_opponent"]


class EpsilonOpponent(Player):
    """Plays a uniformly random legal move with probability ``epsilon``, else ``inner``'s move.

    A dial from perfect (``epsilon=0`` over minimax) to random (``epsilon=1``).
    """

    name = "epsilon"

    def __init__(self, epsilon: float = 0.1, inner: Opponent | str = "minimax", *,
                 rows: int = 3, cols: int = 3, win_length: int = 3) -> None:
        self.epsilon = check_number(epsilon, "epsilon", 0.0, 1.0)
        self._set_board(rows, cols, win_length)
        try:
            self.inner = resolve_opponent(inner, self.rules)
        except ValueError as error:  # name the option: a nested default is not the user's word
            default = " (its default)" if inner == "minimax" else ""
            raise ValueError(f"epsilon's inner={inner!r}{default} cannot play on "
                             f"{self.rules.name}: {error}") from None
        # The two players it chooses between, in the order the batch asks them.
        self._players = (RandomOpponent(**self.rules.kwargs), as_player(self.inner, self.rules))

    def reset(self, rng: np.random.Generator) -> None:
        self._players[1].reset(rng)

    def move(self, position: Position, rng: np.random.Generator) -> int:
        return self._players[rng.random() >= self.epsilon].move(position, rng)

    def _batch(self, num_envs: int, rules: game.Rules,
               agents: npt.NDArray[np.int8]) -> BatchPlayer:
        players = [p.batch(num_envs, rules, agents) for p in self._players]
        return _Combined(players, num_envs, per_move=self._inner_rows)

    def _inner_rows(self, boards: Boards, rng: np.random.Generator) -> npt.NDArray[np.intp]:
        """Per board, 0 (a random move) with probability epsilon, else 1 (the inner player)."""
        return (rng.random(boards.size) >= self.epsilon).astype(np.intp)

    def __repr__(self) -> str:
        return f"EpsilonOpponent(epsilon={self.epsilon}, inner={self.inner!r}{self._board_args()})"


class MixtureOpponent(Player):
    """Draws one of ``opponents`` (by ``weights``) at every reset and plays it for the episode."""

    name = "mixture"

    def __init__(self, opponents: Sequence[Opponent | str], weights: Sequence[float] | None = None,
                 *, rows: int = 3, cols: int = 3, win_length: int = 3):
        if not opponents:
            raise ValueError("a mixture needs at least one opponent")
        self._set_board(rows, cols, win_length)
        self.opponents = [resolve_opponent(o, self.rules) for o in opponents]
        n = len(self.opponents)
        # As objects: a list [True, 1] would become the ints [1, 1] in a NumPy array.
        if weights is not None and not all(map(is_number, np.ravel(np.array(weights, object)))):
            raise ValueError(f"weights must be {n} finite non-negative numbers; got {weights!r}")
        weights = np.ones(n) if weights is None else np.asarray(weights, float)
        if (weights.shape != (n,) or not np.isfinite(weights).all() or (weights < 0).any()
                or not (weights > 0).any()):
            raise ValueError(f"weights must be {n} finite non-negative numbers, not all 0; "
                             f"got {weights.tolist()}")
        weights = weights / weights.max()  # first, so that huge weights cannot sum to inf
        self.weights = weights / weights.sum()
        self._players = [as_player(o, self.rules) for o in self.opponents]
        self.current, self._current = self.opponents[0], self._players[0]

    def reset(self, rng: np.random.Generator) -> None:
        k = int(rng.choice(len(self._players), p=self.weights))
        self.current, self._current = self.opponents[k], self._players[k]
        self._current.reset(rng)

    def move(self, position: Position, rng: np.random.Generator) -> int:
        return self._current.move(position, rng)

    def _batch(self, num_envs: int, rules: game.Rules,
               agents: npt.NDArray[np.int8]) -> BatchPlayer:
        players = [p.batch(num_envs, rules, agents) for p in self._players]
        return _Combined(players, num_envs, weights=self.weights)

    def __repr__(self) -> str:
        return (f"MixtureOpponent({self.opponents!r}, weights={self.weights.tolist()}"
                f"{self._board_args()})")


class _Combined:
    """The batch form of a combinator: each board's reply is asked of one of ``players`` (their
    batch forms), chosen per move by ``per_move(boards, rng)`` (epsilon) or per episode by
    ``weights`` (a mixture), with a loop over players, not boards."""

    def __init__(self, players: list[BatchPlayer], num_envs: int, *,
                 per_move: Any = None, weights: npt.NDArray | None = None) -> None:
        self.players, self.per_move, self.weights = players, per_move, weights
        # Like MixtureOpponent, the first player plays until a board's first reset.
        self.current = np.zeros(num_envs, dtype=np.intp)

    def reset(self, boards: Boards, rng: np.random.Generator) -> None:
        if self.weights is not None:
            self.current[boards] = rng.choice(len(self.players), size=boards.size,
                                              p=self.weights)
        for k, player in enumerate(self.players):
            player.reset(boards if self.weights is None else boards[self.current[boards] == k],
                         rng)

    def reply(self, batch: Batch, boards: Boards, rng: np.random.Generator) -> Cells:
        which = self.current[boards] if self.per_move is None else self.per_move(boards, rng)
        cells = np.empty(boards.size, dtype=np.int16)
        for k, player in enumerate(self.players):
            mine = which == k
            if mine.any():
                cells[mine] = player.reply(batch, boards[mine], rng)
        return cells


OPPONENTS: dict[str, type] = {
    cls.name: cls
    for cls in (RandomOpponent, MinimaxOpponent, AlphaBetaPlayer, EpsilonOpponent,
                HeuristicOpponent, MonteCarloOpponent, MCTSPlayer, MixtureOpponent,
                PolicyOpponent)
}


BOARD_KEYS = ("rows", "cols", "win_length")  # set by the board, never by a spec


def options_of(name: str) -> list[str]:
    """The keyword options of the built-in player ``name`` that a spec may set (not the
    board's: the env or ``--board`` sets those)."""
    parameters = inspect.signature(OPPONENTS[name]).parameters
    return [key for key, parameter in parameters.items() if key not in BOARD_KEYS
            and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)]


def make_opponent(name: str, **kwargs) -> Opponent:
    """Build a built-in opponent by name, e.g. ``make_opponent("epsilon", epsilon=0.3)`` or
    ``make_opponent("minimax", rows=4, cols=4, win_length=3)``."""
    if not isinstance(name, str) or name not in OPPONENTS:
        raise ValueError(f"unknown opponent {name!r}; choose one of {sorted(OPPONENTS)}")
    allowed = [*options_of(name), *BOARD_KEYS]
    unknown = [key for key in kwargs if key not in allowed]
    if unknown:
        raise ValueError(f"bad arguments for opponent {name!r}: no option {unknown[0]!r}; its "
                         f"options: {', '.join(options_of(name)) or 'none'}")
    try:
        return OPPONENTS[name](**kwargs)
    except TypeError as error:
        raise ValueError(f"bad arguments for opponent {name!r}: {error}") from None


def resolve_opponent(opponent: Opponent | str, rules: game.Rules = game.TICTACTOE) -> Opponent:
    """A name or spec (see ``parse_opponent``) becomes the built-in opponent for the board
    ``rules``; an object with ``act`` is used as it is, if it plays on that board."""
    if isinstance(opponent, str):
        return parse_opponent(opponent, rules)
    if not callable(getattr(opponent, "act", None)):
        raise ValueError(
            f"opponent must be one of {sorted(OPPONENTS)} or an object with "
            f"act(board, mark, rng); got {opponent!r}"
        )
    own = getattr(opponent, "rules", rules)
    if isinstance(own, game.Rules) and own != rules:
        raise ValueError(f"opponent {opponent!r} plays on the {own.name} board, not on "
                         f"{rules.name}: build it with rows={rules.rows}, cols={rules.cols}, "
                         f"win_length={rules.win_length}")
    return opponent


def resolve_player(opponent: Opponent | str, rules: game.Rules) -> Player:
    """``resolve_opponent``, then wrapped once as a :class:`~gym_tictactoe.players.Player`."""
    return as_player(resolve_opponent(opponent, rules), rules)


def parse_opponent(spec: str, rules: game.Rules = game.TICTACTOE) -> Opponent:
    """An opponent for the board ``rules`` from a command-line spec.

    ``"minimax"`` or ``"epsilon:epsilon=0.2,inner=heuristic"`` is one player (keyword arguments
    after a colon: numbers, ``true``/``false``, ``none`` for None, or names); players joined by
    ``+`` form a mixture, each optionally weighted with ``*w``:
    ``"random+heuristic+epsilon:epsilon=0.2+minimax*2"``.
    """
    parts = [part.strip() for part in spec.split("+")]
    if len(parts) == 1 and "*" not in parts[0]:
        return _parse_one(parts[0], rules)
    players, weights = [], []
    for part in parts:
        body, _, weight = part.partition("*")
        players.append(_parse_one(body, rules))
        weights.append(_number(weight, spec) if weight else 1.0)
    return MixtureOpponent(players, weights, **rules.kwargs)


def _parse_one(spec: str, rules: game.Rules) -> Opponent:
    name, _, arguments = spec.partition(":")
    kwargs = {}
    for item in filter(None, arguments.split(",")):
        key, equals, value = item.partition("=")
        if not equals:
            raise ValueError(f"bad opponent argument {item!r} in {spec!r}: expected key=value")
        kwargs[key.strip()] = _literal(value.strip())
    name = name.strip()
    given = [key for key in kwargs if key in BOARD_KEYS]
    if given and name in OPPONENTS:
        raise ValueError(f"opponent {name!r}: {given[0]} is set by the board ({rules.name}), not "
                         f"by a spec; its options: {', '.join(options_of(name)) or 'none'}")
    try:
        return make_opponent(name, **kwargs, **rules.kwargs)
    except ValueError as error:
        text = str(error)
        if text.startswith((name + " ", name + "'s ", "unknown opponent", "bad arguments")):
            raise
        raise ValueError(f"opponent {name!r}: {text}") from None


def _literal(text: str) -> float | int | bool | str | None:
    if text in ("true", "false", "True", "False"):
        return text.lower() == "true"
    if text in ("none", "None"):  # so a spec can say what a keyword's None says
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _number(text: str, spec: str) -> float:
    try:
        weight = float(text)
    except ValueError:
        weight = float("nan")
    if not np.isfinite(weight) or weight < 0:
        raise ValueError(f"bad weight {text!r} in opponent spec {spec!r}: "
                         "expected a finite non-negative number")
    return weight

