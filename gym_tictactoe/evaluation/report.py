"""One summary of a policy, shared by ``train.py`` and ``python -m gym_tictactoe evaluate``:
games against the built-in opponents in both seats, plus the exact measures where the board is
solved; and the learning-curve entries of ``train.py``'s checkpoints.

A policy too costly to ask at every position (a search player on a 16-cell board) gets the best
response only, asked where it can be on a game against it (``reached_only``): the same exact
result per seat, without the optimal-move rate."""

from __future__ import annotations

import time
from typing import Any

from gym_tictactoe import game
from gym_tictactoe.evaluation import (
    Policy,
    Report,
    best_response,
    board_of,
    evaluate,
    perfect_results,
    results_table,
)
from gym_tictactoe.players.protocol import AnswersBatch

REPORT_OPPONENTS = ("random", "heuristic", "minimax")
# Where the board is not solved there is no minimax, and alphabeta costs tens of milliseconds a
# reply on 15x15x5: the summary plays the two cheap players.
UNSOLVED_OPPONENTS = ("random", "heuristic")


def summarize(policy: Policy, games: int = 200, seed: int = 0,
              report: Report | None = None, reached_only: bool = False) -> dict[str, Any]:
    """JSON-friendly: per-opponent results by seat, and on a solved board the best response per
    seat and the optimal-move rate (the board: the policy's own ``rules``, else 3x3).
    ``report``: the policy's ``evaluate`` result when already computed (not computed again).
    ``reached_only``: the best response alone, asking the policy only where it can be on a game
    against it (``reached_summary``), for a policy too costly to ask everywhere."""
    rules = board_of(policy)
    opponents = REPORT_OPPONENTS if rules.solvable else UNSOLVED_OPPONENTS
    table = results_table(policy, opponents, n=games, seed=seed, **rules.kwargs)
    summary = {
        "games_per_seat": games,
        "results": {name: {seat: record.as_dict() for seat, record in seats.items()}
                    for name, seats in table.items()},
    }
    if not rules.solvable:
        return summary
    if reached_only:
        return {**summary, **reached_summary(policy, rules)}
    return {**summary, **(evaluate(policy) if report is None else report).as_dict()}


class _Counting:
    """A deterministic policy that counts the positions it is asked about."""

    def __init__(self, policy: Policy) -> None:
        self.policy, self.asked = policy, 0

    def __call__(self, observation: Any, action_mask: Any) -> int:
        self.asked += 1
        return self.policy(observation, action_mask)

    def act_batch(self, observations: Any, masks: Any) -> Any:
        self.asked += len(observations)
        if not isinstance(self.policy, AnswersBatch):
            return [self.policy(o, m) for o, m in zip(observations, masks, strict=True)]
        return self.policy.act_batch(observations, masks)


def reached_summary(policy: Policy, rules: game.Rules) -> dict[str, Any]:
    """The best response per seat asking ``policy`` (deterministic) only at the positions it
    meets on some game against it: how many (``asked``, of ``positions``) and the seconds."""
    counting, began = _Counting(policy), time.perf_counter()
    found = best_response(counting, reached_only=True, probabilities=False, **rules.kwargs)
    return {"perfect_results": perfect_results(rules),
            "best_response": {seat: r.as_dict() for seat, r in found.items()},
            "asked": counting.asked, "positions": unfinished_positions(rules),
            "best_response_seconds": round(time.perf_counter() - began, 1)}


def unfinished_positions(rules: game.Rules) -> int:
    """Positions with a move to make on a solved board (4,520 on 3x3)."""
    return sum(int((~layer.terminal).sum()) for layer in rules.positions)


def evaluating_message(games: int, rules: game.Rules, reached_only: bool = False) -> str:
    """What ``summarize`` is about to do, for a person waiting on it (deep agents take a while)."""
    if reached_only and rules.solvable:
        return (f"evaluating exactly: {games} games per seat against each of "
                f"{', '.join(REPORT_OPPONENTS)}, then the best response per seat, asking the "
                f"player only at the positions reached against it (a search at all "
                f"{unfinished_positions(rules):,} positions of the {rules.name} board would take "
                "too long: no optimal-move rate)…")
    if not rules.solvable and rules.n_cells <= 64:
        return (f"evaluating: {games} games per seat against each of "
                f"{', '.join(UNSOLVED_OPPONENTS)}, then a grade on samples of the {rules.name} "
                "board, every verdict proved (too many positions to ask them all)…")
    if not rules.solvable:
        return (f"evaluating: {games} games per seat against each of "
                f"{', '.join(UNSOLVED_OPPONENTS)} (the {rules.name} board is not solved: no "
                "exact measures)…")
    positions = unfinished_positions(rules)
    return (f"evaluating exactly: {games} games per seat against each of "
            f"{', '.join(REPORT_OPPONENTS)}, then the best response per seat and the policy's move "
            f"in all {positions:,} positions of the {rules.name} board…")


def checkpoint_message(count: int, clock: str, rules: game.Rules,
                       games: tuple[int, tuple[str, ...]] | None = None) -> str:
    """A line before a checkpoint during training (``clock``: episodes or timesteps): an exact
    evaluation, or with ``games`` = (games per seat, opponents) seeded games."""
    if games is None:
        return f"exact evaluation at {count:,} {clock} ({rules.name})…"
    return (f"games at {count:,} {clock} ({rules.name}): {games[0]} per seat against each of "
            f"{', '.join(games[1])}…")


def checkpoint_result(entry: dict[str, Any]) -> str:
    """A line after it: a learning-curve entry's rate and best-response results, or its game
    scores ((wins - losses) / games, per seat) and how long they took."""
    if "scores" in entry:
        scores = ", ".join(f"{name} {seats['X']:+.2f} as X, {seats['O']:+.2f} as O"
                           for name, seats in entry["scores"].items())
        return f"  score against {scores} ({entry['checkpoint_seconds']:.1f} s)"
    return (f"  optimal-move rate {entry['rate']:.2%}, best response: as X {entry['X']}, "
            f"as O {entry['O']}")


def curve_entry(report: Report, **clock: float) -> dict[str, Any]:
    """A learning-curve entry of an exact evaluation: ``clock`` (``episodes`` or ``timesteps``,
    and ``seconds``) then the rate, the best response per seat as a word, and ``perfect``; the
    same encoding as the rest of results.json."""
    return {**{k: round(v, 3) if isinstance(v, float) else v for k, v in clock.items()},
            "rate": float(report.move_rate.rate),
            "X": report.best_response["X"].result, "O": report.best_response["O"].result,
            "perfect": bool(report.perfect)}


def games_entry(policy: Policy, games: int, opponents: tuple[str, ...], seed: int,
                **clock: float) -> dict[str, Any]:
    """A learning-curve entry where the board is not solved: ``games`` seeded games per seat
    against each of ``opponents`` (the same games at every checkpoint, so entries compare),
    their score per opponent and seat, and ``checkpoint_seconds``, what they took."""
    began = time.perf_counter()
    table = results_table(policy, opponents, n=games, seed=seed, **board_of(policy).kwargs)
    scores = {name: {seat: round(record.score, 4) for seat, record in seats.items()}
              for name, seats in table.items()}
    return {**{k: round(v, 3) if isinstance(v, float) else v for k, v in clock.items()},
            "games": games, "scores": scores,
            "checkpoint_seconds": round(time.perf_counter() - began, 3)}


def format_summary(summary: dict[str, Any]) -> str:
    """A results table a person can read."""
    lines = [f"{'opponent':<12}{'seat':<6}{'wins':>6}{'draws':>7}{'losses':>8}{'illegal':>9}"]
    for name, seats in summary["results"].items():
        for seat, r in seats.items():
            lines.append(f"{name:<12}{seat:<6}{r['wins']:>6}{r['draws']:>7}{r['losses']:>8}"
                         f"{r['illegal']:>9}")
    if "best_response" not in summary:  # a board too big to solve: games only
        return "\n".join(lines)
    lines.append("")
    for seat, response in summary["best_response"].items():
        line = response["losing_line"]
        suffix = f"  (losing line, cells from 0 from the empty board: {' '.join(map(str, line))})" \
            if line else ""
        lines.append(f"best response, policy as {seat}: {response['result']}{suffix}")
    best = summary.get("perfect_results", {"X": "draw", "O": "draw"})
    if set(best.values()) != {"draw"}:  # a board the first player wins (or loses) perfectly
        lines.append(f"perfect play gets: {best['X']} as X, {best['O']} as O")
    if "optimal_move_rate" not in summary:  # reached_only: the best response alone
        lines.append(f"asked at {summary['asked']:,} of {summary['positions']:,} positions "
                     f"(those reached against it) in {summary['best_response_seconds']} s; no "
                     "optimal-move rate")
        return "\n".join(lines)
    lines.append(f"optimal-move rate: {summary['optimal_move_rate']:.2%} of "
                 f"{summary['positions']:,} positions ({summary['blunders']} blunders)")
    lines.append(f"perfect play: {'yes' if summary['perfect'] else 'no'}")
    return "\n".join(lines)
