"""The built-in players that sit across the board from the agent.

An opponent is any object with ``act(board, mark, rng) -> int``: ``board`` is the absolute 9-cell
board (0 empty, 1 X, 2 O), ``mark`` the opponent's own mark and ``rng`` a
``numpy.random.Generator`` owned by the environment, the only source of randomness an opponent
may use. An optional ``reset(rng)`` is called at the start of every episode.

The built-in players are :class:`CodePlayer` s: their ``act`` encodes the board and calls
``act_code(code, mark, rng)``, so the environment, which already holds the position's code, asks
``act_code`` directly (:func:`act_on_code`) and skips a board copy and its encoding every move.

Most players here are *table players*: a (3**9, 9) mask of the moves they consider in each
position, from which they pick uniformly at random (or the lowest cell when deterministic). The
vector environment uses the same masks to reply for thousands of boards in one look-up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game, heuristic, solver

Policy = Callable[[npt.NDArray[np.int8], npt.NDArray[np.int8]], int]


@runtime_checkable
class Opponent(Protocol):
    def act(self, board: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int: ...


def _pick(choices: Sequence[int] | npt.NDArray, rng: np.random.Generator,
          deterministic: bool = False) -> int:
    """A uniform choice, or the first when deterministic, among a position's candidate cells."""
    if len(choices) == 0:
        raise ValueError("no legal move: the game is over")
    if deterministic or len(choices) == 1:
        return int(choices[0])
    # rng.random() costs a quarter of rng.integers(n), and this runs on every opponent move.
    return int(choices[int(rng.random() * len(choices))])


class CodePlayer:
    """An opponent that decides from the position's code; ``act`` is ``act_code`` on the board's.

    Subclasses implement ``act_code``. A subclass that overrides ``act`` instead keeps its own
    ``act`` everywhere: :func:`act_on_code` takes the shortcut only while ``act`` is this one.
    """

    def act(self, board: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        return self.act_code(game.encode(board), mark, rng)

    def act_code(self, code: game.Position, mark: int, rng: np.random.Generator) -> int:
        raise NotImplementedError


def act_on_code(opponent: Opponent, code: game.Position, mark: int,
                rng: np.random.Generator) -> int:
    """``opponent``'s move at position ``code``: the same move as ``act`` on the decoded board."""
    if type(opponent).act is CodePlayer.act:
        return opponent.act_code(code, mark, rng)  # type: ignore[attr-defined]
    return opponent.act(game.CELLS[code].copy(), mark, rng)


class TableOpponent(CodePlayer):
    """Plays uniformly at random among the moves its table marks in each position."""

    name = "table"

    def __init__(self, deterministic: bool = False) -> None:
        if not isinstance(deterministic, bool | np.bool_):
            raise ValueError(f"deterministic must be True or False; got {deterministic!r}")
        self.deterministic = bool(deterministic)

    @property
    def table(self) -> npt.NDArray[np.bool_]:
        """(3**9, 9) bool mask of candidate moves, for every code."""
        raise NotImplementedError

    def act_code(self, code: game.Position, mark: int, rng: np.random.Generator) -> int:
        table = self.table
        if table is not getattr(self, "_listed", None):
            # Each code's candidates as a tuple, listed on first use: indexing a tuple is much
            # cheaper than a NumPy row's nonzero(). A new table (a subclass may build one per
            # call) starts a new list.
            self._listed, self._choices = table, {}
        choices = self._choices.get(code)
        if choices is None:
            choices = self._choices[code] = tuple(table[code].nonzero()[0].tolist())
        if len(choices) == 1 or (self.deterministic and choices):
            return choices[0]  # the common case, without a call to _pick
        return _pick(choices, rng, self.deterministic)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(deterministic={self.deterministic})"


class RandomOpponent(TableOpponent):
    """A uniformly random legal move (seed 000's ``random_player``)."""

    name = "random"

    @property
    def table(self) -> npt.NDArray[np.bool_]:
        return _legal_table()


class MinimaxOpponent(TableOpponent):
    """Perfect play: a random choice among the solver's best moves (fastest win, slowest loss).

    Choosing at random among equally good moves lets an agent meet every perfect line;
    ``deterministic=True`` always plays the lowest-numbered best cell.
    """

    name = "minimax"

    @property
    def table(self) -> npt.NDArray[np.bool_]:
        return solver.solve().best


class HeuristicOpponent(TableOpponent):
    """Seed 003's rules, the first that applies: win, block, fork, block a fork, centre,
    opposite corner, corner, side."""

    name = "heuristic"

    @property
    def table(self) -> npt.NDArray[np.bool_]:
        return heuristic.table()


@cache
def _legal_table() -> npt.NDArray[np.bool_]:
    table = game.LEGAL_MASK.astype(bool)
    table.setflags(write=False)
    return table


class EpsilonOpponent(CodePlayer):
    """Plays a uniformly random legal move with probability ``epsilon``, else ``inner``'s move.

    A dial from perfect (``epsilon=0`` over minimax) to random (``epsilon=1``).
    """

    name = "epsilon"

    def __init__(self, epsilon: float = 0.1, inner: Opponent | str = "minimax") -> None:
        if not _is_number(epsilon) or not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be a number in [0, 1]; got {epsilon!r}")
        self.epsilon = float(epsilon)
        self.inner = resolve_opponent(inner)

    def reset(self, rng: np.random.Generator) -> None:
        reset_opponent(self.inner, rng)

    def act_code(self, code: game.Position, mark: int, rng: np.random.Generator) -> int:
        if rng.random() < self.epsilon:
            return _pick(game.LEGAL_MASK[code].nonzero()[0], rng)
        return act_on_code(self.inner, code, mark, rng)

    def __repr__(self) -> str:
        return f"EpsilonOpponent(epsilon={self.epsilon}, inner={self.inner!r})"


class MonteCarloOpponent(CodePlayer):
    """Pure Monte Carlo search (seed 002): ``playouts`` random games after each legal move, then
    the move with the best mean result for this player (ties broken at random)."""

    name = "montecarlo"

    def __init__(self, playouts: int = 50) -> None:
        if not _is_number(playouts) or int(playouts) != playouts or playouts < 1:
            raise ValueError(f"playouts must be a positive integer; got {playouts!r}")
        self.playouts = int(playouts)

    def act_code(self, code: game.Position, mark: int, rng: np.random.Generator) -> int:
        moves = np.flatnonzero(game.LEGAL_MASK[code])
        starts = np.repeat(game.NEXT[code, moves].astype(np.int64), self.playouts)
        winners = random_playouts(starts, rng)
        results = np.where(winners == mark, 1.0, np.where(winners == 0, 0.0, -1.0))
        means = results.reshape(moves.size, self.playouts).mean(axis=1)
        return int(moves[_pick((means == means.max()).nonzero()[0], rng)])

    def __repr__(self) -> str:
        return f"MonteCarloOpponent(playouts={self.playouts})"


def random_playouts(codes: npt.NDArray[np.int64], rng: np.random.Generator) -> npt.NDArray:
    """Finish every game in ``codes`` with uniformly random moves; returns the winners (0 draw)."""
    codes = codes.copy()
    for _ in range(game.N_CELLS):
        playing = ~game.TERMINAL[codes]
        if not playing.any():
            break
        masks = game.LEGAL_MASK[codes[playing]]
        # The argmax of uniform noise over the legal cells is a uniform legal move.
        cells = np.argmax(rng.random(masks.shape) * masks, axis=1)
        codes[playing] = game.NEXT[codes[playing], cells]
    return game.WINNER[codes]


class MixtureOpponent(CodePlayer):
    """Draws one of ``opponents`` (by ``weights``) at every reset and plays it for the episode."""

    name = "mixture"

    def __init__(self, opponents: Sequence[Opponent | str], weights: Sequence[float] | None = None):
        if not opponents:
            raise ValueError("a mixture needs at least one opponent")
        self.opponents = [resolve_opponent(o) for o in opponents]
        n = len(self.opponents)
        if weights is not None and not all(_is_number(w) for w in np.ravel(weights)):
            raise ValueError(f"weights must be {n} finite non-negative numbers; got {weights!r}")
        weights = np.ones(n) if weights is None else np.asarray(weights, float)
        if (weights.shape != (n,) or not np.isfinite(weights).all() or (weights < 0).any()
                or weights.sum() <= 0):
            raise ValueError(f"weights must be {n} finite non-negative numbers, not all 0; "
                             f"got {weights.tolist()}")
        self.weights = weights / weights.sum()
        self.current = self.opponents[0]

    def reset(self, rng: np.random.Generator) -> None:
        self.current = self.opponents[int(rng.choice(len(self.opponents), p=self.weights))]
        reset_opponent(self.current, rng)

    def act_code(self, code: game.Position, mark: int, rng: np.random.Generator) -> int:
        return act_on_code(self.current, code, mark, rng)

    def __repr__(self) -> str:
        return f"MixtureOpponent({self.opponents!r}, weights={self.weights.tolist()})"


class PolicyOpponent(CodePlayer):
    """Any Policy ``(observation, action_mask) -> action`` (a trained agent) as the opponent.

    The policy sees the board as the env's agent does: 1 its own mark, 2 the other's.
    """

    name = "policy"

    def __init__(self, policy: Policy) -> None:
        if not callable(policy):
            raise ValueError(f"policy must be callable as policy(obs, mask); got {policy!r}")
        self.policy = policy

    def act_code(self, code: game.Position, mark: int, rng: np.random.Generator) -> int:
        board = game.CELLS[code]
        obs = board.copy() if mark == game.X else game.swap_marks(board)
        # Returned as it is: the env checks it like the agent's own action and names the culprit.
        return self.policy(obs, game.LEGAL_MASK[code].copy())


OPPONENTS: dict[str, type] = {
    cls.name: cls
    for cls in (RandomOpponent, MinimaxOpponent, EpsilonOpponent, HeuristicOpponent,
                MonteCarloOpponent, MixtureOpponent, PolicyOpponent)
}


def make_opponent(name: str, **kwargs) -> Opponent:
    """Build a built-in opponent by name, e.g. ``make_opponent("epsilon", epsilon=0.3)``."""
    if name not in OPPONENTS:
        raise ValueError(f"unknown opponent {name!r}; choose one of {sorted(OPPONENTS)}")
    try:
        return OPPONENTS[name](**kwargs)
    except TypeError as error:
        raise ValueError(f"bad arguments for opponent {name!r}: {error}") from None


def resolve_opponent(opponent: Opponent | str) -> Opponent:
    """A name or spec (see ``parse_opponent``) becomes the built-in opponent; an object with
    ``act`` is used as it is."""
    if isinstance(opponent, str):
        return parse_opponent(opponent)
    if not callable(getattr(opponent, "act", None)):
        raise ValueError(
            f"opponent must be one of {sorted(OPPONENTS)} or an object with "
            f"act(board, mark, rng); got {opponent!r}"
        )
    return opponent


def reset_opponent(opponent: Opponent, rng: np.random.Generator) -> None:
    """Start a new episode for ``opponent`` (a mixture draws its player here)."""
    reset = getattr(opponent, "reset", None)
    if callable(reset):
        reset(rng)


def parse_opponent(spec: str) -> Opponent:
    """An opponent from a command-line spec.

    ``"minimax"`` or ``"epsilon:epsilon=0.2,inner=heuristic"`` is one player (keyword arguments
    after a colon); players joined by ``+`` form a mixture, each optionally weighted with ``*w``:
    ``"random+heuristic+epsilon:epsilon=0.2+minimax*2"``.
    """
    parts = [part.strip() for part in spec.split("+")]
    if len(parts) == 1 and "*" not in parts[0]:
        return _parse_one(parts[0])
    players, weights = [], []
    for part in parts:
        body, _, weight = part.partition("*")
        players.append(_parse_one(body))
        weights.append(_number(weight, spec) if weight else 1.0)
    return MixtureOpponent(players, weights)


def _parse_one(spec: str) -> Opponent:
    name, _, arguments = spec.partition(":")
    kwargs = {}
    for item in filter(None, arguments.split(",")):
        key, equals, value = item.partition("=")
        if not equals:
            raise ValueError(f"bad opponent argument {item!r} in {spec!r}: expected key=value")
        kwargs[key.strip()] = _literal(value.strip())
    return make_opponent(name.strip(), **kwargs)


def _literal(text: str) -> float | int | bool | str:
    if text in ("true", "false", "True", "False"):
        return text.lower() == "true"
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


def _is_number(value: object) -> bool:
    """A real, finite number (not a bool, not a string)."""
    return (isinstance(value, int | float | np.integer | np.floating)
            and not isinstance(value, bool | np.bool_) and bool(np.isfinite(value)))
