"""One grade of a policy on a board of 17 to 64 cells: the sampled optimal-move rates (both
samplings of :mod:`.sampled`) and the best response per seat (:mod:`.walk`), JSON-friendly, and
the lines ``evaluate`` prints."""

from __future__ import annotations

from typing import Any

from gym_tictactoe.evaluation import answers, sampled, walk
from gym_tictactoe.game import Rules
from gym_tictactoe.game.proofs import check_provable

SAMPLING_TEXT = {
    "games": f"one position per game of the policy against itself from a random opening of 0 to "
             f"{sampled.OPENING_PLIES} random plies",
    "uniform": "a depth uniform in 0..cells-1, that many random legal plies, finished positions "
               "drawn again (uniform over depths and random games, not over the reachable set)",
}


def grade(policy: Any, rules: Rules, sample: int = 100, seed: int = 0,
          walk_nodes: int = sampled.WALK_NODES, walk_seconds: float = sampled.WALK_SECONDS,
          proof_budget: int = sampled.PROOF_BUDGET, progress: Any = None) -> dict[str, Any]:
    """``{"sampled": {sampling: rate}, "best_response": {seat: walk}, ...}``; ``progress(text)``
    is told what starts."""
    check_provable(rules)
    say, policy = progress or (lambda text: None), answers.asked(policy, rules)
    rates = {}
    for sampling in sampled.SAMPLINGS:
        say(f"{sampling}: {sample} positions ({SAMPLING_TEXT[sampling]})")
        rates[sampling] = sampled.sampled_rate(policy, rules, sample, seed, sampling,
                                               proof_budget).as_dict()
    responses = {}
    for seat in ("X", "O"):
        say(f"best response to the policy as {seat}: at most {walk_nodes:,} positions, "
            f"{walk_seconds:g} s")
        responses[seat] = walk.best_response(policy, rules, seat, walk_nodes, walk_seconds,
                                             proof_budget)
    return {"board": rules.name, "sample": sample, "seed": seed, "proof_budget": proof_budget,
            "interval": "95% Wilson score interval on the rate over the decided positions",
            "sampling": dict(SAMPLING_TEXT), "sampled": rates, "best_response": responses}


def format_grade(graded: dict[str, Any]) -> str:
    """The grade as lines a person reads."""
    lines = [f"sampled optimal-move rate on {graded['board']} (seed {graded['seed']}, every "
             f"verdict proved; 95% Wilson interval):"]
    for sampling, rate in graded["sampled"].items():
        value = "no decided position" if rate["rate"] is None else (
            f"{rate['rate']:.2%} [{rate['interval'][0]:.2%}, {rate['interval'][1]:.2%}]")
        lines.append(f"  {sampling:<8} {value} over {rate['decided']} decided of "
                     f"{rate['positions']} positions ({rate['undecided']} undecided)")
    for seat, found in graded["best_response"].items():
        text = found["result"]
        if text == "undecided":
            within = found["no_loss_within"]
            text += f" after {found['nodes']:,} positions" + (
                f" (no loss within {within} opponent move{'s' * (within > 1)})" if within else "")
        elif found["losing_line"]:
            text += f" (line from the empty board: {' '.join(map(str, found['losing_line']))})"
        lines.append(f"best response, policy as {seat}: {text}")
    return "\n".join(lines)
