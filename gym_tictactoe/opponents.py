"""The built-in players that sit across the board from the agent.

An opponent is any object with ``act(board, mark, rng) -> int``: ``board`` is the absolute board,
one cell per entry, row-major (0 empty, 1 X, 2 O), ``mark`` the opponent's own mark and ``rng`` a
``numpy.random.Generator`` owned by the environment, the only source of randomness an opponent
may use. An optional ``reset(rng)`` is called at the start of every episode.

Every built-in player is made for one board (``rows``, ``cols``, ``win_length`` keywords, 3x3 by
default; the env builds its named opponents for its own board). They are :class:`CodePlayer` s:
on tabled boards their ``act`` encodes the board and calls ``act_code(code, mark, rng)``, so the
environment, which already holds the position's code, asks ``act_code`` directly
(:func:`act_on_code`) and skips a board copy and its encoding every move; on bigger boards the
env hands them its cells (:func:`act_on_stones`).

Most players here are *table players*: a (codes, cells) mask of the moves they consider in each
position of a tabled board (``candidates`` over arrays of boards elsewhere), from which they pick
uniformly at random (or the lowest cell when deterministic). The vector environment uses the same
masks to reply for thousands of boards in one look-up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game, heuristic, solver
from gym_tictactoe.checks import check_flag, check_int, check_number, is_number
from gym_tictactoe.mcts import MCTSPlayer
from gym_tictactoe.search import AlphaBetaPlayer

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
    """A built-in opponent for one board (``rows``, ``cols``, ``win_length``; 3x3 by default).

    On tabled boards it decides from the position's code: ``act`` is ``act_code`` on the board's
    code, and the env, which holds the code already, calls ``act_code`` (:func:`act_on_code`).
    Subclasses implement ``act_code``, and ``act_cells`` for boards without tables. A subclass
    that overrides ``act`` instead keeps its own ``act`` everywhere.
    """

    rules: game.Rules = game.TICTACTOE

    def _set_board(self, rows: int, cols: int, win_length: int) -> None:
        self.rules = game.rules(rows, cols, win_length)

    def act(self, board: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        if self.rules.tabled:
            return self.act_code(self.rules.encode(board), mark, rng)
        return self.act_cells(_board_cells(self.rules, board), mark, rng)

    def act_code(self, code: game.Position, mark: int, rng: np.random.Generator) -> int:
        raise NotImplementedError

    def act_cells(self, cells: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        """The move on a board without tables (``cells`` is the player's own copy)."""
        raise NotImplementedError

    def _board_args(self) -> str:
        rules = self.rules
        return "" if rules == game.TICTACTOE else (
            f", rows={rules.rows}, cols={rules.cols}, win_length={rules.win_length}")


def _board_cells(rules: game.Rules, board: npt.ArrayLike) -> npt.NDArray[np.int8]:
    cells = np.asarray(board)
    if cells.shape != (rules.n_cells,) or cells.dtype.kind not in "iu" or np.ma.is_masked(board):
        raise ValueError(f"a {rules.name} board is {rules.n_cells} cells of 0, 1, 2; "
                         f"got {board!r}")
    return cells.astype(np.int8)


def act_on_code(opponent: Opponent, code: game.Position, mark: int,
                rng: np.random.Generator, rules: game.Rules = game.TICTACTOE) -> int:
    """``opponent``'s move at position ``code`` of a tabled board: the same move as ``act`` on the
    decoded board."""
    if type(opponent).act is CodePlayer.act:
        return opponent.act_code(code, mark, rng)  # type: ignore[attr-defined]
    return opponent.act(rules.tables.cells[code].copy(), mark, rng)


def act_on_stones(opponent: Opponent, stones: Any, mark: int, rng: np.random.Generator) -> int:
    """``opponent``'s move on the env's position of a board without tables (``env.Stones``).
    Players with an ``act_stones`` read the position's bit masks and code directly."""
    if type(opponent).act is CodePlayer.act:
        fast = getattr(opponent, "act_stones", None)
        if fast is not None:
            return fast(stones, mark, rng)
    return _act_cells(opponent, stones.cells.copy(), mark, rng)


def _free_cells(stones: Any) -> Sequence[int]:
    """The empty cells of the env's position, in increasing order."""
    rules = stones.rules
    if rules.solvable:  # a table of every bit mask's cells beats NumPy's call overhead
        free = rules.full_mask & ~(stones.bits[game.X] | stones.bits[game.O])
        return _cells_of_masks(rules.n_cells)[free]
    return np.flatnonzero(stones.cells == game.EMPTY)


@cache
def _cells_of_masks(n_cells: int) -> list[tuple[int, ...]]:
    """For every bit mask of ``n_cells`` bits (at most 2**16 of them), its set bits in order."""
    masks: list[tuple[int, ...]] = [()]
    for cell in range(n_cells):
        masks += [cells + (cell,) for cells in masks]
    return masks


class TableOpponent(CodePlayer):
    """Plays uniformly at random among the moves it marks as candidates in each position: a
    per-code table on tabled boards, ``candidates`` over arrays of boards elsewhere."""

    name = "table"

    def __init__(self, deterministic: bool = False, *, rows: int = 3, cols: int = 3,
                 win_length: int = 3) -> None:
        self.deterministic = check_flag(deterministic, "deterministic")
        self._set_board(rows, cols, win_length)

    @property
    def table(self) -> npt.NDArray[np.bool_]:
        """(codes, cells) bool mask of candidate moves, for every code of a tabled board."""
        raise NotImplementedError

    def candidates(self, cells: npt.NDArray[np.int8], marks: npt.NDArray[np.int8],
                   codes: npt.NDArray[np.int64] | None = None) -> npt.NDArray[np.bool_]:
        """(N, cells) candidate mask on boards ``cells`` for the sides ``marks`` to move;
        ``codes`` are the boards' codes where the caller has them."""
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

    def act_cells(self, cells: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        choices = np.flatnonzero(self.candidates(cells[None], np.array([mark], np.int8))[0])
        return _pick(choices, rng, self.deterministic)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(deterministic={self.deterministic}{self._board_args()})"


class RandomOpponent(TableOpponent):
    """A uniformly random legal move (seed 000's ``random_player``)."""

    name = "random"

    @property
    def table(self) -> npt.NDArray[np.bool_]:
        return _legal_table(self.rules)

    def candidates(self, cells, marks, codes=None) -> npt.NDArray[np.bool_]:
        return cells == game.EMPTY  # the callers ask about unfinished games only

    def act_cells(self, cells: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        return _pick(np.flatnonzero(cells == game.EMPTY), rng, self.deterministic)

    def act_stones(self, stones: Any, mark: int, rng: np.random.Generator) -> int:
        return _pick(_free_cells(stones), rng, self.deterministic)


class MinimaxOpponent(TableOpponent):
    """Perfect play: a random choice among the solver's best moves (fastest win, slowest loss).

    Choosing at random among equally good moves lets an agent meet every perfect line;
    ``deterministic=True`` always plays the lowest-numbered best cell. Needs a solved board (at
    most 16 cells); on bigger boards use ``"alphabeta"``.
    """

    name = "minimax"

    def __init__(self, deterministic: bool = False, *, rows: int = 3, cols: int = 3,
                 win_length: int = 3) -> None:
        super().__init__(deterministic, rows=rows, cols=cols, win_length=win_length)
        if not self.rules.solvable:
            raise ValueError(f"minimax plays perfectly from the solved game, and boards of at "
                             f"most {game.SOLVED_CELLS} cells are solved; {self.rules.name} has "
                             f"{self.rules.n_cells}: use 'alphabeta' (search) there")
        self.solution = solver.solve(self.rules)
        # Signed bytes: indexing a memoryview gives a plain int, far cheaper than NumPy's scalars.
        self._scores = memoryview(self.solution.score).cast("b")

    @property
    def table(self) -> npt.NDArray[np.bool_]:
        return self.solution.best

    def candidates(self, cells, marks, codes=None) -> npt.NDArray[np.bool_]:
        if codes is None:
            codes = np.asarray(cells, dtype=np.int64) @ self.rules.pow3
        return self.solution.best_of(codes)

    def act_cells(self, cells: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        # The env asks only in unfinished games, so every empty cell is a move: score the
        # children directly, without working out the position's own status.
        empty = np.flatnonzero(cells == game.EMPTY)
        code = int(cells.astype(np.int64) @ self.rules.pow3)
        child = self.solution.score[code + mark * self.rules.pow3[empty]].astype(np.int16)
        moves = np.sign(child) - child
        return _pick(empty[moves == moves.max()], rng, self.deterministic)

    def act_stones(self, stones: Any, mark: int, rng: np.random.Generator) -> int:
        """``act_cells`` (the same moves, the same draws) on the env's bit masks and code."""
        scores, code, powers = self._scores, stones.code, self.rules.pow3_int
        top, best = -256, []
        for cell in _free_cells(stones):
            child = scores[code + mark * powers[cell]]
            move = (child > 0) - (child < 0) - child  # sign(child) - child, as in act_cells
            if move > top:
                top, best = move, [cell]
            elif move == top:
                best.append(cell)
        return _pick(best, rng, self.deterministic)


class HeuristicOpponent(TableOpponent):
    """Seed 003's rules, the first that applies: win, block, fork, block a fork, centre,
    opposite corner, corner, nearest the centre (see ``gym_tictactoe.heuristic``)."""

    name = "heuristic"

    @property
    def table(self) -> npt.NDArray[np.bool_]:
        return heuristic.table(self.rules)

    def candidates(self, cells, marks, codes=None) -> npt.NDArray[np.bool_]:
        return heuristic.candidates(self.rules, cells, marks)


@cache
def _legal_table(rules: game.Rules) -> npt.NDArray[np.bool_]:
    table = rules.tables.legal_mask.astype(bool)
    table.setflags(write=False)
    return table


class EpsilonOpponent(CodePlayer):
    """Plays a uniformly random legal move with probability ``epsilon``, else ``inner``'s move.

    A dial from perfect (``epsilon=0`` over minimax) to random (``epsilon=1``).
    """

    name = "epsilon"

    def __init__(self, epsilon: float = 0.1, inner: Opponent | str = "minimax", *,
                 rows: int = 3, cols: int = 3, win_length: int = 3) -> None:
        self.epsilon = check_number(epsilon, "epsilon", 0.0, 1.0)
        self._set_board(rows, cols, win_length)
        self.inner = resolve_opponent(inner, self.rules)

    def reset(self, rng: np.random.Generator) -> None:
        reset_opponent(self.inner, rng)

    def act_code(self, code: game.Position, mark: int, rng: np.random.Generator) -> int:
        if rng.random() < self.epsilon:
            return _pick(self.rules.tables.legal_mask[code].nonzero()[0], rng)
        return act_on_code(self.inner, code, mark, rng, self.rules)

    def act_cells(self, cells: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        if rng.random() < self.epsilon:
            return _pick(np.flatnonzero(cells == game.EMPTY), rng)
        return _act_cells(self.inner, cells, mark, rng)

    def __repr__(self) -> str:
        return f"EpsilonOpponent(epsilon={self.epsilon}, inner={self.inner!r}{self._board_args()})"


# Every playout of every move is one row of an array: 10,000 per move keep a 3x3 reply within a
# few MB (seed 002 used 50-100), while 10**8 would need tens of GB.
MAX_PLAYOUTS = 10_000
# A reply plays ``playouts`` games after each of up to ``cells`` moves, each of up to ``cells``
# moves: playouts * cells**2 stays within this, so boards up to 6x6 keep 10,000 playouts a move
# while 15x15 allows 331 (200 took 12 to 19 s a reply on a loaded machine; 10,000 would take
# some ten minutes).
MAX_REPLY_MOVES = 2**24
# On boards without tables a playout row costs about 20 bytes a cell while it plays (its cells,
# the empty mask and float64 noise with its product), so 10,000 playouts on 15x15 would take
# 5 GB at once: the rows are played in chunks of at most this many bytes. One chunk holds a
# whole reply at the default 50 playouts on every board, which keeps those draws as they were.
PLAYOUT_BYTES = 64 * 2**20
PLAYOUT_ROW_BYTES = 20  # per cell


class MonteCarloOpponent(CodePlayer):
    """Pure Monte Carlo search (seed 002): ``playouts`` random games after each legal move, then
    the move with the best mean result for this player (ties broken at random).

    ``playouts`` is at most 10,000, and at most 2**24 / cells**2 (331 on 15x15), since a reply
    plays that many games after each empty cell. On boards of more than 12 cells the games are
    played in chunks of at most 64 MB (``PLAYOUT_BYTES``)."""

    name = "montecarlo"

    def __init__(self, playouts: int = 50, *, rows: int = 3, cols: int = 3,
                 win_length: int = 3) -> None:
        self._set_board(rows, cols, win_length)
        most = min(MAX_PLAYOUTS, MAX_REPLY_MOVES // self.rules.n_cells**2)
        n = self.rules.n_cells
        where = "" if most == MAX_PLAYOUTS else (
            f" on the {self.rules.name} board (a reply plays that many games of up to {n} moves "
            f"after each of its {n} cells)")
        self.playouts = check_int(playouts, "playouts", 1, most, note=where)

    def act_code(self, code: game.Position, mark: int, rng: np.random.Generator) -> int:
        tables = self.rules.tables
        moves = np.flatnonzero(tables.legal_mask[code])
        starts = np.repeat(tables.next[code, moves].astype(np.int64), self.playouts)
        return self._best(moves, random_playouts(starts, rng, self.rules), mark, rng)

    def act_cells(self, cells: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        moves = np.flatnonzero(cells == game.EMPTY)
        total, chunk = moves.size * self.playouts, playout_chunk(cells.size)
        winners = np.empty(total, dtype=np.int8)
        for first in range(0, total, chunk):  # row r is a playout after moves[r // playouts]
            played = moves[np.arange(first, min(first + chunk, total)) // self.playouts]
            starts = np.repeat(cells[None], played.size, axis=0)
            starts[np.arange(played.size), played] = mark
            winners[first:first + played.size] = random_playouts_cells(
                starts, played, mark, rng, self.rules)
        return self._best(moves, winners, mark, rng)

    def _best(self, moves, winners, mark: int, rng: np.random.Generator) -> int:
        # +1 win, 0 draw, -1 loss as int8; integer sums give exactly the float means' order.
        results = (winners == mark).view(np.int8) - ((winners != mark) & (winners != 0))
        totals = results.reshape(moves.size, self.playouts).sum(axis=1)
        return int(moves[_pick((totals == totals.max()).nonzero()[0], rng)])

    def __repr__(self) -> str:
        return f"MonteCarloOpponent(playouts={self.playouts}{self._board_args()})"


def playout_chunk(n_cells: int) -> int:
    """How many playout rows of a board of ``n_cells`` cells are played at once: as many as fit
    in ``PLAYOUT_BYTES``, at least one."""
    return max(1, PLAYOUT_BYTES // (PLAYOUT_ROW_BYTES * (n_cells + 1)))


def random_playouts(codes: npt.NDArray[np.int64], rng: np.random.Generator,
                    rules: game.Rules = game.TICTACTOE) -> npt.NDArray:
    """Finish every game in ``codes`` (a tabled board's) with uniformly random moves; returns the
    winners (0 draw)."""
    tables = rules.tables
    codes = codes.copy()
    for _ in range(rules.n_cells):
        playing = ~tables.terminal[codes]
        if not playing.any():
            break
        masks = tables.legal_mask[codes[playing]]
        # The argmax of uniform noise over the legal cells is a uniform legal move.
        cells = np.argmax(rng.random(masks.shape) * masks, axis=1)
        codes[playing] = tables.next[codes[playing], cells]
    return tables.winner[codes]


def random_playouts_cells(boards: npt.NDArray[np.int8], last: npt.NDArray[np.intp], mark: int,
                          rng: np.random.Generator, rules: game.Rules) -> npt.NDArray[np.int8]:
    """Finish games on boards without tables, each just played by ``mark`` at ``last``, with
    uniformly random moves; the winners (0 draw). Wins are checked on the lines through each
    move only."""
    boards = np.concatenate([boards, np.full((len(boards), 1), -1, np.int8)], axis=1)
    winners = np.where(rules.wins_at(boards, last, np.full(len(boards), mark)), mark, 0)
    playing = (winners == 0) & (boards == game.EMPTY).any(axis=1)
    marks = np.full(len(boards), game.SWAP[mark], dtype=np.int8)
    while playing.any():
        rows = np.flatnonzero(playing)
        empty = boards[rows, :-1] == game.EMPTY
        cells = np.argmax(rng.random(empty.shape) * empty, axis=1)
        boards[rows, cells] = marks[rows]
        won = rules.wins_at(boards[rows], cells, marks[rows])
        winners[rows[won]] = marks[rows[won]]
        playing[rows] = ~won & (empty.sum(axis=1) > 1)
        marks[rows] = game.SWAP[marks[rows]]
    return winners.astype(np.int8)


class MixtureOpponent(CodePlayer):
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
        self.current = self.opponents[0]

    def reset(self, rng: np.random.Generator) -> None:
        self.current = self.opponents[int(rng.choice(len(self.opponents), p=self.weights))]
        reset_opponent(self.current, rng)

    def act_code(self, code: game.Position, mark: int, rng: np.random.Generator) -> int:
        return act_on_code(self.current, code, mark, rng, self.rules)

    def act_cells(self, cells: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        return _act_cells(self.current, cells, mark, rng)

    def __repr__(self) -> str:
        return (f"MixtureOpponent({self.opponents!r}, weights={self.weights.tolist()}"
                f"{self._board_args()})")


class PolicyOpponent(CodePlayer):
    """Any Policy ``(observation, action_mask) -> action`` (a trained agent) as the opponent.

    The policy sees the board as the env's agent does: 1 its own mark, 2 the other's.
    """

    name = "policy"

    def __init__(self, policy: Policy, *, rows: int = 3, cols: int = 3,
                 win_length: int = 3) -> None:
        if not callable(policy):
            raise ValueError(f"policy must be callable as policy(obs, mask); got {policy!r}")
        self.policy = policy
        self._set_board(rows, cols, win_length)

    def act_code(self, code: game.Position, mark: int, rng: np.random.Generator) -> int:
        return self.act_cells(self.rules.tables.cells[code], mark, rng)

    def act_cells(self, cells: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        obs = cells.copy() if mark == game.X else game.swap_marks(cells)
        # Returned as it is: the env checks it like the agent's own action and names the culprit.
        return self.policy(obs, (cells == game.EMPTY).astype(np.int8))


OPPONENTS: dict[str, type] = {
    cls.name: cls
    for cls in (RandomOpponent, MinimaxOpponent, AlphaBetaPlayer, EpsilonOpponent,
                HeuristicOpponent, MonteCarloOpponent, MCTSPlayer, MixtureOpponent,
                PolicyOpponent)
}


def make_opponent(name: str, **kwargs) -> Opponent:
    """Build a built-in opponent by name, e.g. ``make_opponent("epsilon", epsilon=0.3)`` or
    ``make_opponent("minimax", rows=4, cols=4, win_length=3)``."""
    if not isinstance(name, str) or name not in OPPONENTS:
        raise ValueError(f"unknown opponent {name!r}; choose one of {sorted(OPPONENTS)}")
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


def _act_cells(opponent: Opponent, cells: npt.NDArray[np.int8], mark: int,
               rng: np.random.Generator) -> int:
    if type(opponent).act is CodePlayer.act:
        return opponent.act_cells(cells, mark, rng)  # type: ignore[attr-defined]
    return opponent.act(cells.copy(), mark, rng)


def reset_opponent(opponent: Opponent, rng: np.random.Generator) -> None:
    """Start a new episode for ``opponent`` (a mixture draws its player here)."""
    reset = getattr(opponent, "reset", None)
    if callable(reset):
        reset(rng)


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
    return make_opponent(name.strip(), **kwargs, **rules.kwargs)


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

