"""One summary of a policy, shared by ``train.py`` and ``python -m gym_tictactoe evaluate``:
games against the built-in opponents in both seats, plus the exact measures."""

from __future__ import annotations

from typing import Any

from gym_tictactoe import game
from gym_tictactoe.evaluation import Policy, evaluate, results_table

REPORT_OPPONENTS = ("random", "heuristic", "minimax")


def summarize(policy: Policy, games: int = 200, seed: int = 0) -> dict[str, Any]:
    """JSON-friendly: per-opponent results by seat, best response per seat, optimal-move rate."""
    table = results_table(policy, REPORT_OPPONENTS, n=games, seed=seed)
    report = evaluate(policy)
    return {
        "games_per_seat": games,
        "results": {name: {seat: record.as_dict() for seat, record in seats.items()}
                    for name, seats in table.items()},
        **report.as_dict(),
    }


def evaluating_message(games: int, rules: game.Rules = game.TICTACTOE) -> str:
    """What ``summarize`` is about to do, for a person waiting on it (deep agents take a while)."""
    positions = sum(int((~layer.terminal).sum()) for layer in rules.positions)
    return (f"evaluating exactly: {games} games per seat against each of "
            f"{', '.join(REPORT_OPPONENTS)}, then the best response per seat and the policy's move "
            f"in all {positions:,} positions of the {rules.name} board…")


def checkpoint_message(count: int, clock: str, rules: game.Rules) -> str:
    """A line before an exact evaluation during training (``clock``: episodes or timesteps)."""
    return f"exact evaluation at {count:,} {clock} ({rules.name})…"


def checkpoint_result(entry: dict[str, Any]) -> str:
    """A line after it: a learning-curve entry's rate and best-response results."""
    return (f"  optimal-move rate {entry['rate']:.2%}, best response: as X {entry['X']}, "
            f"as O {entry['O']}")


def format_summary(summary: dict[str, Any]) -> str:
    """A results table a person can read."""
    lines = [f"{'opponent':<12}{'seat':<6}{'wins':>6}{'draws':>7}{'losses':>8}{'illegal':>9}"]
    for name, seats in summary["results"].items():
        for seat, r in seats.items():
            lines.append(f"{name:<12}{seat:<6}{r['wins']:>6}{r['draws']:>7}{r['losses']:>8}"
                         f"{r['illegal']:>9}")
    lines.append("")
    for seat, response in summary["best_response"].items():
        line = response["losing_line"]
        suffix = f"  (losing line, cells from 0 from the empty board: {' '.join(map(str, line))})" \
            if line else ""
        lines.append(f"best response, policy as {seat}: {response['result']}{suffix}")
    best = summary.get("perfect_results", {"X": "draw", "O": "draw"})
    if set(best.values()) != {"draw"}:  # a board the first player wins (or loses) perfectly
        lines.append(f"perfect play gets: {best['X']} as X, {best['O']} as O")
    lines.append(f"optimal-move rate: {summary['optimal_move_rate']:.2%} of "
                 f"{summary['positions']:,} positions ({summary['blunders']} blunders)")
    lines.append(f"perfect play: {'yes' if summary['perfect'] else 'no'}")
    return "\n".join(lines)
