"""Can tabular Q-learning against its training opponent be perfect at all, and how close are its
choices? The exact action values it converges to, by dynamic programming over every position.

    python -m benchmarks q_margins --board 4x4x4 --out benchmarks/results/q_margins.json

Q-learning against a stochastic opponent learns expected values against that opponent
(``agents.tabular.q_learning``'s docstring), so its greedy move is perfect play only where the move
with the best expected value keeps the game value. This computes, backwards layer by layer over
every reachable position, the values Q-learning converges to (discount ``gamma``; the opponent plays
a random legal move with probability ``--epsilon``, else one of the solver's best moves at random,
``TRAINING_OPPONENT``), and counts the positions where a move of best expected value loses the game
value (0 means perfect play is the fixed point) and the margin: how much better the best
value-keeping move is than the best other one. The closer the margins, the less noise in the learnt
values the greedy choice tolerates: a constant learning rate keeps some noise for ever.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from benchmarks.commands import argument_parser, command_line
from benchmarks.progress import RUNS, results_file, writable, write_json
from gym_tictactoe.cli.arguments import board_arg, probability

CHUNK = 1 << 18  # positions at a time
THRESHOLDS = (0.2, 0.25, 0.3, 0.4, 0.5)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--board", type=board_arg, nargs="+",
                        default=[board_arg("4x4x3"), board_arg("4x4x4")])
    parser.add_argument("--epsilon", type=probability, default=0.4)
    parser.add_argument("--gamma", type=probability, default=0.99)
    parser.add_argument("--out", type=results_file, default=RUNS / "q_margins.json")
    return parser.parse_args(argv)


def margins(rules, epsilon: float, gamma: float) -> dict:
    """The fixed point's wrong positions and margins on ``rules`` (module docstring)."""
    from gym_tictactoe.game import solver

    solution, begun = solver.solve(rules), time.perf_counter()
    ended = np.zeros(rules.n_codes, np.int8)  # 1: the side that just moved won, 2: a draw
    for layer in rules.positions:
        ended[layer.codes[layer.terminal & (layer.winner != 0)]] = 1
        ended[layer.codes[layer.terminal & (layer.winner == 0)]] = 2
    # mine[c]: the agent's value at c, agent to move; theirs[c]: the agent's, opponent to move.
    mine, theirs = np.zeros(rules.n_codes, np.float32), np.zeros(rules.n_codes, np.float32)
    wrong, found = 0, []
    for layer in reversed(rules.positions):
        unfinished = layer.codes[~layer.terminal]
        for start in range(0, unfinished.size, CHUNK):
            codes = unfinished[start:start + CHUNK]
            q, legal = _step(rules, solution, codes, layer.mark, ended, mine, theirs, epsilon,
                             gamma)
            keeps = solution.keeps_value_of(codes, layer.mark)
            best = (q >= q.max(axis=1, keepdims=True) - 1e-6) & legal
            wrong += int((best & ~keeps).any(axis=1).sum())
            gap = np.where(keeps, q, -np.inf).max(1) - np.where(legal & ~keeps, q, -np.inf).max(1)
            found.append(gap[np.isfinite(gap)])
    gaps = np.concatenate(found)
    return {"board": rules.name, "epsilon": epsilon, "gamma": gamma, "positions":
            int(sum((~layer.terminal).sum() for layer in rules.positions)),
            "wrong_at_fixed_point": wrong, "with_a_losing_move": int(gaps.size),
            "min_margin": round(float(gaps.min()), 4),
            "margin_below": {str(t): int((gaps < t).sum()) for t in THRESHOLDS},
            "seconds": round(time.perf_counter() - begun, 1)}


def _step(rules, solution, codes: npt.NDArray[np.int64], mark: int, ended, mine, theirs,
          epsilon: float, gamma: float) -> tuple[npt.NDArray, npt.NDArray]:
    """Fill ``mine`` and ``theirs`` at ``codes`` (``mark`` to move) from the layers after;
    returns the agent's action values there and the legal moves."""
    children = rules.children_of(codes, mark)
    legal, at = children >= 0, np.maximum(children, 0)
    end = ended[at]
    q = np.where(end == 1, 1.0, np.where(end == 2, 0.0, theirs[at]))
    q = np.where(legal, q, -np.inf)
    mine[codes] = q.max(axis=1)
    reply = np.where(end == 1, -1.0, np.where(end == 2, 0.0, gamma * mine[at]))
    best = solution.best_of(codes, mark)
    random_move = np.where(legal, reply, 0.0).sum(1) / legal.sum(1)
    perfect = np.where(best, reply, 0.0).sum(1) / best.sum(1)
    theirs[codes] = epsilon * random_move + (1 - epsilon) * perfect
    return q, legal


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    writable(args.out, "q_margins.py")
    rows = []
    for rules in args.board:
        rows.append(margins(rules, args.epsilon, args.gamma))
        print(json.dumps(rows[-1]), flush=True)
    write_json(args.out, {"command": command_line(__name__), "boards": rows})
    return 0
