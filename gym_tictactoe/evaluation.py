"""How far a policy is from perfect play, measured exactly.

A Policy is any callable ``policy(observation, action_mask) -> cell`` seeing the board as the env's
agent does (1 its own mark, 2 the other's), so one policy plays both seats. A policy may also offer
``act_batch(observations, masks) -> cells`` over ``(N, 9)`` arrays; evaluation then asks for every
position in one call (an SB3 model is slow one position at a time).

- ``play_games`` / ``results_table``: seeded games against opponents through ``TicTacToeEnv``.
- ``best_response``: per seat, the best result any opponent can force against the policy, with the
  shortest losing line. Exact: a backward pass over every position, like the solver's.
- ``optimal_move_rate``: over all 4,520 positions with a move to make, the fraction where the
  policy's move keeps the game value (``solver.solve().keeps_value``), and the blunders.
- ``evaluate``: both exact measures from one table of the policy's moves (``policy_moves``).

An illegal move (an occupied cell, or anything that is not an integer 0..8, ``NOT_A_CELL`` in the
moves table) loses at once, as under the env's ``illegal_action="lose"``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game, solver
from gym_tictactoe.env import VIEWS, TicTacToeEnv, as_cell
from gym_tictactoe.opponents import Opponent, Policy, resolve_opponent

__all__ = [
    "NOT_A_CELL", "Blunder", "MoveRate", "Policy", "Record", "Report", "SeatResponse",
    "SolverPolicy", "best_response", "evaluate", "optimal_move_rate", "play_games",
    "policy_moves", "results_table", "solver_policy",
]

NO_MOVE = -1  # moves table entry where nobody moves: terminal and unreachable codes
NOT_A_CELL = game.N_CELLS  # moves table entry for an output that names no cell (None, 2.5, 12)
SEATS = ("X", "O")
RESULT_SCORES = {"win": 1, "draw": 0, "loss": -1}  # for curves and logs
RESULTS = ("loss", "draw", "win")  # the policy's result, worst first: index = key // _PLY_SPAN
_PLY_SPAN = 16  # more plies than any line, so (result, plies) packs into one sortable int
_NO_KEY = len(RESULTS) * _PLY_SPAN  # above every key: an opponent never picks an illegal cell


@cache
def _positions() -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """Codes with a move to make (4,520), their observations for the side to move, their masks."""
    codes = game.REACHABLE[~game.TERMINAL[game.REACHABLE]]
    observations = VIEWS[game.TO_MOVE[codes] - 1, codes]
    return codes, observations, game.LEGAL_MASK[codes]


def policy_moves(policy: Policy) -> npt.NDArray[np.int64]:
    """The policy's move in every position with a move to make, playing the side to move there.

    Returns a (3**9,) table: the cell chosen (an occupied cell is kept as it is, so callers can
    count it as illegal), ``NOT_A_CELL`` (9) for an output that is not an integer 0..8, and
    ``NO_MOVE`` (-1) at terminal and unreachable codes. Calls ``policy.act_batch`` once when the
    policy has it, else the policy once per position; each call gets its own copies of the arrays.
    """
    codes, observations, masks = _positions()
    act_batch = getattr(policy, "act_batch", None)
    if callable(act_batch):
        cells = _batch_cells(act_batch(observations.copy(), masks.copy()), codes.size)
    else:
        pairs = zip(observations, masks, strict=True)
        cells = [_cell(policy(obs.copy(), mask.copy())) for obs, mask in pairs]
    moves = np.full(game.N_CODES, NO_MOVE, dtype=np.int64)
    moves[codes] = cells
    return moves


def _cell(action: Any) -> int:
    cell = as_cell(action)  # the env's own rule for what names a cell
    return NOT_A_CELL if cell is None else cell


def _batch_cells(actions: Any, n: int) -> npt.NDArray[np.int64]:
    actions = np.asarray(actions)
    if actions.shape not in ((n,), (n, 1)):
        raise ValueError(f"act_batch must return {n} actions; got shape {actions.shape}")
    if actions.dtype.kind not in "iu":  # floats and bools name no cell, as in env.step
        return np.full(n, NOT_A_CELL, dtype=np.int64)
    actions = actions.reshape(n).astype(np.int64)
    return np.where((actions >= 0) & (actions < game.N_CELLS), actions, NOT_A_CELL)


def _moves_table(policy: Policy, moves: npt.ArrayLike | None) -> npt.NDArray[np.int64]:
    if moves is None:
        return policy_moves(policy)
    table = np.asarray(moves, dtype=np.int64)
    if table.shape != (game.N_CODES,):
        raise ValueError(f"moves must be a ({game.N_CODES},) table from policy_moves")
    return table


def _is_legal(codes: Any, cells: Any) -> Any:
    """Elementwise: is ``cells`` a legal move at ``codes`` (arrays or scalars)."""
    on_board = (cells >= 0) & (cells < game.N_CELLS)
    return on_board & (game.LEGAL_MASK[codes, np.clip(cells, 0, game.N_CELLS - 1)] == 1)


# --- games against opponents -------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """Results of games for the policy; an illegal move is a loss, counted in both fields."""

    wins: int
    draws: int
    losses: int
    illegal: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """(wins - losses) / games, in [-1, 1]; 0.0 for no games."""
        return (self.wins - self.losses) / self.games if self.games else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "games": self.games, "score": self.score}


def play_games(
    policy: Policy, opponent: Opponent | str, n: int, agent_mark: str = "X", seed: int = 0
) -> Record:
    """``n`` games of ``policy`` against ``opponent`` (a name, a spec such as
    ``"epsilon:epsilon=0.2"`` or an Opponent object) with ``agent_mark`` "X", "O" or "random".

    Only the first reset is seeded; later ones continue its stream, so a seed fixes every game.
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise ValueError(f"n must be a non-negative integer; got {n!r}")
    player = resolve_opponent(opponent)
    env = TicTacToeEnv(opponent=player, agent_mark=agent_mark, illegal_action="lose")
    tally = Counter(_play_one(env, policy, seed if i == 0 else None) for i in range(n))
    env.close()
    losses = tally["losses"] + tally["illegal"]
    return Record(tally["wins"], tally["draws"], losses, tally["illegal"])


def _play_one(env: TicTacToeEnv, policy: Policy, seed: int | None) -> str:
    """One episode; "wins", "draws", "losses" or "illegal"."""
    observation, info = env.reset(seed=seed)
    reward, finished = 0.0, False
    while not finished:
        action = policy(observation, info["action_mask"])
        observation, reward, terminated, truncated, info = env.step(action)
        finished = terminated or truncated
    if info.get("illegal_action"):
        return "illegal"
    return "wins" if reward > 0 else "losses" if reward < 0 else "draws"


def results_table(
    policy: Policy,
    opponents: Sequence[str] = ("random", "heuristic", "minimax"),
    n: int = 100,
    seed: int = 0,
) -> dict[str, dict[str, Record]]:
    """``{opponent: {"X": Record, "O": Record}}``: ``n`` seeded games per opponent and seat.

    ``opponents`` is a sequence of names or specs; a single string is one opponent."""
    if isinstance(opponents, str):
        opponents = (opponents,)
    return {name: {seat: play_games(policy, name, n, seat, seed) for seat in SEATS}
            for name in opponents}


# --- best response -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SeatResponse:
    """The best result an opponent can force against the policy playing ``seat``.

    ``losing_line`` (when ``result == "loss"``): the shortest such game, absolute cells from the
    empty board, both sides alternately; it ends with the opponent's winning move, or with the
    policy's illegal move (``NOT_A_CELL`` when the output named no cell). None otherwise.
    """

    seat: str
    result: str
    losing_line: tuple[int, ...] | None

    def as_dict(self) -> dict[str, Any]:
        line = None if self.losing_line is None else list(self.losing_line)
        return {"seat": self.seat, "result": self.result, "losing_line": line}


def best_response(
    policy: Policy, *, moves: npt.ArrayLike | None = None
) -> dict[str, SeatResponse]:
    """``{"X": SeatResponse, "O": SeatResponse}``, exact over every opponent reply.

    ``moves`` (from ``policy_moves``) skips asking the policy again; ``policy`` is then unused.
    """
    table = _moves_table(policy, moves)
    return {seat: _seat_response(table, game.MARKS[seat]) for seat in SEATS}


def _seat_response(moves: npt.NDArray[np.int64], me: int) -> SeatResponse:
    keys = _response_keys(moves, me)
    result = RESULTS[keys[game.EMPTY_BOARD] // _PLY_SPAN]
    line = _losing_line(moves, me, keys) if result == "loss" else None
    return SeatResponse(game.MARK_NAMES[me], result, line)


def _response_keys(moves: npt.NDArray[np.int64], me: int) -> npt.NDArray[np.int64]:
    """Per code: result index * _PLY_SPAN + plies to the end, the policy (mark ``me``) playing
    its table and the opponent choosing the smallest key: a loss if it can, the fastest one."""
    keys = np.zeros(game.N_CODES, dtype=np.int64)
    for layer in reversed(game.LAYERS):
        ended = layer[game.TERMINAL[layer]]
        winner = game.WINNER[ended]
        keys[ended] = ((winner == me) * 2 + (winner == game.NO_WINNER)) * _PLY_SPAN
        playing = layer[~game.TERMINAL[layer]]
        mine = game.TO_MOVE[playing] == me
        theirs = _opponent_keys(playing, keys).min(axis=1, initial=_NO_KEY) + 1
        keys[playing] = np.where(mine, _policy_keys(playing, moves, keys), theirs)
    return keys


def _policy_keys(codes: npt.NDArray[np.int64], moves: npt.NDArray[np.int64],
                 keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    cells = moves[codes]
    children = game.NEXT[codes, np.clip(cells, 0, game.N_CELLS - 1)]
    # An illegal move is a loss one ply long (key 0 + 1).
    return np.where(_is_legal(codes, cells), keys[np.maximum(children, 0)], 0) + 1


def _opponent_keys(codes: Any, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Each cell's child key for the opponent at ``codes``, ``_NO_KEY`` for illegal cells."""
    children = game.NEXT[codes]
    return np.where(children >= 0, keys[np.maximum(children, 0)], _NO_KEY)


def _losing_line(moves: npt.NDArray[np.int64], me: int,
                 keys: npt.NDArray[np.int64]) -> tuple[int, ...]:
    """Follow the smallest keys from the empty board (lowest cell among equals) to the loss."""
    code, line = game.EMPTY_BOARD, []
    while not game.TERMINAL[code]:
        if game.TO_MOVE[code] == me:
            cell = int(moves[code])
            if not _is_legal(code, cell):
                return (*line, cell)
        else:
            cell = int(np.argmin(_opponent_keys(code, keys)))
        line.append(cell)
        code = int(game.NEXT[code, cell])
    return tuple(line)


# --- optimal-move rate -------------------------------------------------------------------------


@dataclass(frozen=True)
class Blunder:
    """A position where the policy's move (perhaps illegal) gives away the game value."""

    board: tuple[int, ...]  # absolute cells: 0 empty, 1 X, 2 O
    code: int
    move: int
    optimal_moves: tuple[int, ...]  # every value-keeping move

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "board": list(self.board),
                "optimal_moves": list(self.optimal_moves)}


@dataclass(frozen=True)
class MoveRate:
    """``rate``: the fraction of ``positions`` where the policy keeps the game value; the
    ``blunders`` in order of the number of marks on the board, then code."""

    rate: float
    positions: int
    blunders: tuple[Blunder, ...]

    @property
    def optimal(self) -> int:
        return self.positions - len(self.blunders)


def optimal_move_rate(policy: Policy, *, moves: npt.ArrayLike | None = None) -> MoveRate:
    """Over every position with a move to make (the policy meets each in one seat or the other),
    how often its move keeps the solver's game value. An illegal move is a blunder.

    ``moves`` (from ``policy_moves``) skips asking the policy again; ``policy`` is then unused.
    """
    table = _moves_table(policy, moves)
    codes = _positions()[0]
    cells = table[codes]
    keeps_value = solver.solve().keeps_value
    kept = _is_legal(codes, cells) & keeps_value[codes, np.clip(cells, 0, game.N_CELLS - 1)]
    blunders = tuple(
        Blunder(tuple(game.CELLS[code].tolist()), int(code), int(cell),
                tuple(np.flatnonzero(keeps_value[code]).tolist()))
        for code, cell in zip(codes[~kept], cells[~kept], strict=True)
    )
    return MoveRate(float(kept.mean()), int(codes.size), blunders)


# --- both at once ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    best_response: dict[str, SeatResponse]
    move_rate: MoveRate

    @property
    def perfect(self) -> bool:
        """Draws in both seats against any opponent and never a value-losing move."""
        draws = all(response.result == "draw" for response in self.best_response.values())
        return draws and self.move_rate.rate == 1.0

    def as_dict(self, max_blunders: int = 5) -> dict[str, Any]:
        """JSON-friendly: results and lines per seat, the rate, and the first few blunders."""
        rate = self.move_rate
        return {
            "perfect": self.perfect,
            "best_response": {seat: r.as_dict() for seat, r in self.best_response.items()},
            "optimal_move_rate": rate.rate,
            "positions": rate.positions,
            "blunders": len(rate.blunders),
            "first_blunders": [b.as_dict() for b in rate.blunders[:max_blunders]],
        }


def evaluate(policy: Policy) -> Report:
    """Best response per seat and optimal-move rate, asking the policy about each position once."""
    moves = policy_moves(policy)
    return Report(best_response(policy, moves=moves), optimal_move_rate(policy, moves=moves))


# --- the reference perfect policy --------------------------------------------------------------


class SolverPolicy:
    """The solver's best move for the side to move (the lowest cell when ``deterministic``, else
    a random one among the best, drawn from a generator seeded with ``seed``)."""

    def __init__(self, deterministic: bool = True, seed: int | None = 0) -> None:
        self.deterministic = bool(deterministic)
        self.rng = np.random.default_rng(seed)

    def __call__(self, observation: npt.NDArray[np.int8], action_mask: npt.NDArray[np.int8]) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations: npt.NDArray[np.int8],
                  masks: npt.NDArray[np.int8]) -> npt.NDArray[np.int64]:
        best = solver.solve().best[_absolute_codes(observations)]
        if not best.any(axis=1).all():
            raise ValueError("no move to make: a board is finished or not a position")
        if self.deterministic:
            return best.argmax(axis=1)
        return np.where(best, self.rng.random(best.shape), -1.0).argmax(axis=1)

    def __repr__(self) -> str:
        return f"SolverPolicy(deterministic={self.deterministic})"


def _absolute_codes(observations: Any) -> npt.NDArray[np.int64]:
    """Codes of relative boards (1 = the side to move, which is O when it has fewer marks)."""
    cells = np.asarray(observations)
    if cells.ndim != 2 or cells.shape[1] != game.N_CELLS or not np.isin(cells, (0, 1, 2)).all():
        raise ValueError(f"observations must be (N, {game.N_CELLS}) boards of 0, 1, 2")
    cells = cells.astype(np.int64)
    swap = (cells == 1).sum(axis=1) < (cells == 2).sum(axis=1)
    return np.where(swap[:, None], game.SWAP[cells], cells) @ game.POW3


def solver_policy(deterministic: bool = True, seed: int | None = 0) -> Policy:
    """The reference perfect policy (a ``SolverPolicy``, with ``act_batch``)."""
    return SolverPolicy(deterministic, seed)
