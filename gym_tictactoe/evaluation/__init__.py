"""How far a policy is from perfect play, measured exactly.

A Policy is any player (``gym_tictactoe.players.protocol``: a trained agent, a built-in player,
any callable) asked ``policy(observation, action_mask) -> cell`` on the board as the env's agent
sees it (1 its own mark, 2 the other's), so one policy plays both seats; an object with only the
documented ``act(board, mark, rng)`` is adapted once (``players.as_player``). Evaluation reads
the player's capabilities, never its kind: one that answers a batch (``act_batch``) is asked
for every position in one call, one that gives its probabilities is measured as stochastic.

- ``play_games`` / ``results_table``: seeded games against opponents through ``TicTacToeEnv``.
- ``best_response``: per seat, the best result any opponent can force against the policy, with the
  shortest losing line, and the policy's ``expected`` result against that opponent. Exact: one
  backward pass over every position, like the solver's, for deterministic and stochastic
  policies alike (``evaluation.exact``); with ``reached_only=True`` the policy is asked only
  where it can be on a game against it (a search player too costly to ask everywhere).
- ``exploitability``: OpenSpiel's NashConv of the policy, from the two seats' expected results.
- ``optimal_move_rate``: over all positions with a move to make (4,520 on 3x3), the fraction
  where the policy's move keeps the game value (``solver.solve().keeps_value``), and the blunders.
- ``evaluate``: both exact measures from one table of the policy's moves (``policy_moves``).

Every function takes the board as ``rows``, ``cols``, ``win_length`` keywords; left out, it is the
policy's own board (its ``rules`` attribute, as a trained agent has) or else 3x3. The exact
measures need a solved board (at most 16 cells: about 9.7 million positions on 4x4, asked of the
policy in one ``act_batch`` call); on bigger boards they raise, and ``play_games`` measures.

An illegal move (an occupied cell, or anything that is not an integer cell, ``NOT_A_CELL`` (-2)
in the moves table on every board) loses at once, as under the env's ``illegal_action="lose"``.

Stochastic policies. The exact measures ask a policy for one move per position, so a policy that
draws its moves at random is measured as the deterministic policy it happened to draw (a built-in
random player: one fixed move table, drawn with its own generator seeded 0), which says nothing
exact about random play. A stochastic policy should therefore give its probabilities
(``protocol.GivesProbabilities``; ``UniformPolicy`` is the random player done so).
``best_response`` and ``exploitability`` then use them: ``expected`` is the exact expected
result against the best response, ``result`` the worst an opponent can bring about with
positive probability. The optimal-move rate scores the move the policy returns.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.checks import check_flag, check_int
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.evaluation import answers, exact
from gym_tictactoe.evaluation.exact import (
    MAX_BLUNDERS,
    NOT_A_CELL,
    RESULT_SCORES,
    RESULTS,
    Blunder,
    MoveRate,
    SeatResponse,
)
from gym_tictactoe.game import Rules, basics, solver
from gym_tictactoe.players import stochastic
from gym_tictactoe.players.opponents import Opponent, Policy, resolve_opponent
from gym_tictactoe.seeding import check_seed

__all__ = [
    "MAX_BLUNDERS", "NOT_A_CELL", "RESULTS", "RESULT_SCORES", "Blunder", "MoveRate", "Policy",
    "Record", "Report", "SeatResponse", "SolverPolicy", "UniformPolicy", "best_response",
    "evaluate", "exploitability", "nash_conv", "optimal_move_rate", "play_games",
    "policy_moves", "results_table", "solver_policy",
]

UniformPolicy = stochastic.UniformPolicy

NO_MOVE = -1  # moves table entry where nobody moves: terminal and unreachable codes
SEATS = ("X", "O")


def board_of(policy: Any = None, rows: int | None = None, cols: int | None = None,
             win_length: int | None = None) -> Rules:
    """The board to evaluate on: the sizes given, else the policy's own ``rules``, else 3x3."""
    if rows is None and cols is None and win_length is None:
        own = getattr(policy, "rules", None)
        return own if isinstance(own, Rules) else game.TICTACTOE
    return game.rules(3 if rows is None else rows, 3 if cols is None else cols,
                      3 if win_length is None else win_length)


def _positions(rules: Rules) -> tuple[npt.NDArray, ...]:
    """Codes with a move to make (4,520 on 3x3) by layer, their observations for the side to
    move (read-only), and new masks."""
    codes, observations = answers.boards(rules)
    return codes, observations, (observations == game.EMPTY).astype(np.int8)


def policy_moves(policy: Policy, *, rows: int | None = None, cols: int | None = None,
                 win_length: int | None = None) -> npt.NDArray[np.int64]:
    """The policy's move in every position with a move to make, playing the side to move there.

    Returns a (3**cells,) table: the cell chosen (an occupied cell is kept as it is, so callers
    can count it as illegal), ``NOT_A_CELL`` (-2, on every board) for an output that is not an
    integer cell, and ``NO_MOVE`` (-1) at terminal and unreachable codes. Calls
    ``policy.act_batch`` once when the policy has it, else the policy once per position; each
    call gets its own copies of the arrays.
    """
    rules = board_of(policy, rows, cols, win_length)
    codes, observations, masks = _positions(rules)
    cells = answers.moves_of(answers.asked(policy, rules), observations.copy(), masks, rules)
    # int16 beyond tabled boards: 3**16 entries of int64 would take 344 MB.
    moves = np.full(rules.n_codes, NO_MOVE, dtype=np.int64 if rules.tabled else np.int16)
    moves[codes] = cells
    return moves


def _moves_table(policy: Policy, moves: npt.ArrayLike | None,
                 rules: Rules) -> npt.NDArray[np.int64]:
    if moves is None:
        return policy_moves(policy, rows=rules.rows, cols=rules.cols, win_length=rules.win_length)
    table = np.asarray(moves)
    if table.shape != (rules.n_codes,) or table.dtype.kind not in "iu":
        raise ValueError(f"moves must be a ({rules.n_codes},) table from policy_moves for the "
                         f"{rules.name} board")
    return table


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
    policy: Policy, opponent: Opponent | str, n: int, agent_mark: str = "X", seed: int = 0,
    *, rows: int | None = None, cols: int | None = None, win_length: int | None = None,
) -> Record:
    """``n`` games of ``policy`` against ``opponent`` (a name, a spec such as
    ``"epsilon:epsilon=0.2"`` or an Opponent object) with ``agent_mark`` "X", "O" or "random",
    on any board.

    Only the first reset is seeded; later ones continue its stream, so a seed fixes every game.
    """
    n, seed = check_int(n, "n", 0), check_seed(seed)
    rules = board_of(policy, rows, cols, win_length)
    player, policy = resolve_opponent(opponent, rules), answers.asked(policy, rules)
    env = TicTacToeEnv(opponent=player, agent_mark=agent_mark, illegal_action="lose",
                       rows=rules.rows, cols=rules.cols, win_length=rules.win_length)
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
    **board: int,
) -> dict[str, dict[str, Record]]:
    """``{opponent: {"X": Record, "O": Record}}``: ``n`` seeded games per opponent and seat.

    ``opponents`` is a sequence of names or specs; a single string is one opponent. ``board``:
    ``rows``, ``cols``, ``win_length`` as in ``play_games``."""
    if isinstance(opponents, str):
        opponents = (opponents,)
    return {name: {seat: play_games(policy, name, n, seat, seed, **board) for seat in SEATS}
            for name in opponents}


# --- best response -----------------------------------------------------------------------------


def best_response(
    policy: Policy, *, moves: npt.ArrayLike | None = None, probabilities: bool | None = None,
    reached_only: bool = False, rows: int | None = None, cols: int | None = None,
    win_length: int | None = None,
) -> dict[str, SeatResponse]:
    """``{"X": SeatResponse, "O": SeatResponse}``, exact over every opponent reply.

    ``moves`` (from ``policy_moves``) skips asking the policy again; ``policy`` is then unused.
    ``probabilities``: measure the policy by its action probabilities (True; the default when it
    offers them and no ``moves`` are given) or by one move per position (False).
    ``reached_only``: ask the policy only at the positions where it is to move on some game
    against it, a batch per layer (for a player too costly to ask everywhere; the same result).
    """
    rules = board_of(policy, rows, cols, win_length)
    reached_only, policy = check_flag(reached_only, "reached_only"), answers.asked(policy, rules)
    stochastic_policy = _stochastic(policy, moves, probabilities)
    if stochastic_policy:
        ask = answers.probability_ask(policy, rules)
    elif moves is None and reached_only:
        ask = answers.move_ask(policy, rules)
    else:
        ask = answers.table_ask(_moves_table(policy, moves, rules))
    return exact.best_responses(rules, ask, stochastic=stochastic_policy,
                                reached_only=reached_only)


def _stochastic(policy: Policy, moves: npt.ArrayLike | None, probabilities: bool | None) -> bool:
    """Whether to measure ``policy`` by its probabilities (see ``best_response``)."""
    if probabilities is None:
        return moves is None and stochastic.offers_probabilities(policy)
    if probabilities and (moves is not None or not stochastic.offers_probabilities(policy)):
        raise ValueError("probabilities=True needs a policy with action_probabilities(observation,"
                         " mask) or action_probabilities_batch(observations, masks), and no moves")
    return bool(probabilities)


def exploitability(
    policy: Policy, *, moves: npt.ArrayLike | None = None, probabilities: bool | None = None,
    reached_only: bool = False, rows: int | None = None, cols: int | None = None,
    win_length: int | None = None,
) -> float:
    """OpenSpiel's NashConv of ``policy`` playing both seats: the sum over the two players of
    what a best response to the policy gains over the policy itself,
    ``NashConv = sum_p [max_b u_p(b, policy) - u_p(policy, policy)]``. The game is zero-sum, so
    ``u_X(policy, policy) + u_O(policy, policy) = 0`` and NashConv is the sum of the best
    responders' values, ``-(expected_X + expected_O)``, ``expected`` from ``best_response``.

    Between 0 and 2: 0 exactly when the policy gets the game value in both seats (a Nash
    equilibrium: perfect play on any board, also where the first player wins, e.g. 3x4x3, where
    +1 as X and -1 as O sum to 0), 2 for a policy that loses in both seats. Arguments as in
    ``best_response``.
    """
    found = best_response(policy, moves=moves, probabilities=probabilities,
                          reached_only=reached_only, rows=rows, cols=cols, win_length=win_length)
    return nash_conv(found)


def nash_conv(found: dict[str, SeatResponse]) -> float:
    """NashConv from the two seats' expected results (see ``exploitability``)."""
    return 0.0 - (found["X"].expected + found["O"].expected)  # 0.0 - 0.0 is 0.0, never -0.0


# --- optimal-move rate -------------------------------------------------------------------------


def optimal_move_rate(
    policy: Policy, *, moves: npt.ArrayLike | None = None, rows: int | None = None,
    cols: int | None = None, win_length: int | None = None,
) -> MoveRate:
    """Over every position with a move to make (the policy meets each in one seat or the other),
    how often its move keeps the solver's game value. An illegal move is a blunder.

    ``moves`` (from ``policy_moves``) skips asking the policy again; ``policy`` is then unused.
    """
    rules = board_of(policy, rows, cols, win_length)
    return exact.move_rate(rules, _moves_table(policy, moves, rules))


# --- both at once ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    """The exact measures of a policy. ``perfect_results``: what perfect play gets in each seat
    on this board (a draw in both on 3x3; on a first-player win, a win as X and a loss as O)."""

    best_response: dict[str, SeatResponse]
    move_rate: MoveRate
    perfect_results: dict[str, str] = field(
        default_factory=lambda: {"X": "draw", "O": "draw"})

    @property
    def perfect(self) -> bool:
        """In each seat the best response gets no more than perfect play concedes, and the
        policy never makes a value-losing move."""
        seats = self.best_response.items()
        optimal = all(r.result == self.perfect_results[seat] for seat, r in seats)
        return optimal and self.move_rate.rate == 1.0

    @property
    def exploitability(self) -> float:
        """NashConv, from the seats' expected results (see ``exploitability``)."""
        return nash_conv(self.best_response)

    def __repr__(self) -> str:
        """One line: the results per seat, the rate and the number of blunders (the dataclass's
        own repr lists every blunder, 150 KB for a weak policy)."""
        seats = ", ".join(f"{seat}={r.result!r}" for seat, r in self.best_response.items())
        rate = self.move_rate
        return (f"Report({seats}, optimal_move_rate={rate.rate:.4f}, "
                f"blunders={rate.n_blunders}/{rate.positions}, "
                f"exploitability={self.exploitability:.4f}, perfect={self.perfect})")

    def as_dict(self, max_blunders: int = 5) -> dict[str, Any]:
        """JSON-friendly: results and lines per seat, the rate, and the first few blunders."""
        rate = self.move_rate
        return {
            "perfect": self.perfect,
            "perfect_results": dict(self.perfect_results),
            "exploitability": self.exploitability,
            "best_response": {seat: r.as_dict() for seat, r in self.best_response.items()},
            "optimal_move_rate": rate.rate,
            "positions": rate.positions,
            "blunders": rate.n_blunders,
            "first_blunders": [b.as_dict() for b in rate.blunders[:max_blunders]],
        }


def evaluate(policy: Policy, *, probabilities: bool | None = None, rows: int | None = None,
             cols: int | None = None, win_length: int | None = None) -> Report:
    """Best response per seat and optimal-move rate, asking the policy about each position once
    (twice for a stochastic policy: its probabilities for the best response, as
    ``best_response``'s ``probabilities`` says, and its move for the rate). The board: the sizes
    given, else the policy's own, else 3x3 (solved boards only)."""
    rules = board_of(policy, rows, cols, win_length)
    board = rules.kwargs
    moves = policy_moves(policy, **board)
    if _stochastic(policy, None, probabilities):
        response = best_response(policy, probabilities=True, **board)
    else:
        response = best_response(policy, moves=moves, **board)
    return Report(response, optimal_move_rate(policy, moves=moves, **board),
                  perfect_results(rules))


def perfect_results(rules: Rules) -> dict[str, str]:
    """What perfect play gets in each seat: the solved game value of the empty board."""
    value = solver.value(game.EMPTY_BOARD, rules)  # +1 X wins, 0 draw, -1 O wins
    return {"X": RESULTS[value + 1], "O": RESULTS[1 - value]}


# --- the reference perfect policy --------------------------------------------------------------


class SolverPolicy:
    """The solver's best move for the side to move (the lowest cell when ``deterministic``, else
    a random one among the best, drawn from a generator seeded with ``seed``), on any solved
    board."""

    def __init__(self, deterministic: bool = True, seed: int | None = 0, *, rows: int = 3,
                 cols: int = 3, win_length: int = 3) -> None:
        self.deterministic = check_flag(deterministic, "deterministic")
        self.rng = np.random.default_rng(check_seed(seed))
        self.rules = game.rules(rows, cols, win_length)
        self.rules.check_solvable("the solver's policy")

    def __call__(self, observation: npt.NDArray[np.int8], action_mask: npt.NDArray[np.int8]) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations: npt.NDArray[np.int8],
                  masks: npt.NDArray[np.int8]) -> npt.NDArray[np.int64]:
        boards = answers.check_boards(self.rules, observations)
        solution = solver.solve(self.rules)
        moves = np.empty(len(boards), dtype=np.int64)
        # A chunk at a time bounds the (N, cells) temporaries: 4x4's 9.7 million boards at once
        # took 3.2 GB.
        for start in range(0, len(boards), basics._CHUNK):
            codes = answers.absolute_codes(self.rules, boards[start : start + basics._CHUNK])
            best = solution.best_of(codes)
            if not best.any(axis=1).all():
                raise ValueError("no move to make: a board is finished or not a position")
            if not self.deterministic:
                best = np.where(best, self.rng.random(best.shape), -1.0)
            moves[start : start + basics._CHUNK] = best.argmax(axis=1)
        return moves

    def __repr__(self) -> str:
        return f"SolverPolicy(deterministic={self.deterministic}, board={self.rules.name})"


def solver_policy(deterministic: bool = True, seed: int | None = 0, **board: int) -> Policy:
    """The reference perfect policy (a ``SolverPolicy``, with ``act_batch``) on ``board``
    (``rows``, ``cols``, ``win_length``; 3x3 by default)."""
    return SolverPolicy(deterministic, seed, **board)
