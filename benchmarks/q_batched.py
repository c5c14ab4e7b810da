"""How much faster does tabular Q-learning train batched on the vector env than one board at a
time?

    python -m benchmarks q_batched                                   # 3x3, 4x4x3, 4x4x4
    python -m benchmarks q_batched --boards 4x4x3 --batches 1024 4096 --rounds 1

Per board, in one run: episodes per second of ``QLearningAgent.train`` on one ``TicTacToeEnv``
(``--episodes`` episodes) and of ``agents.tabular.batched.train_batched`` on a vector env of each of
``--batches`` boards (``max(--episodes, 100 x batch)`` episodes), train.py's settings otherwise
(``TRAINING_OPPONENT`` in both seats, exploring starts, seed 0). The measurements alternate, best
of ``--rounds`` each, setup (the board's index and solution) excluded: the machine is shared, so
only ratios from the same run compare (the JSON records the load average before and after).
Progress with an estimate of the time left goes to stderr, the table to stdout, the results JSON
to ``--out`` (default under runs/).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from collections.abc import Sequence
from typing import Any

from benchmarks.commands import argument_parser, command_line
from benchmarks.progress import RUNS, Progress, results_file, writable
from gym_tictactoe.cli.arguments import board_arg, positive_int

DEFAULT_OUT = RUNS / "q_batched.json"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--boards", nargs="+", type=board_arg,
                        default=[board_arg(b) for b in ("3x3x3", "4x4x3", "4x4x4")])
    parser.add_argument("--batches", nargs="+", type=positive_int, default=[16, 64, 256, 4096],
                        help="batch sizes to measure (default: %(default)s)")
    parser.add_argument("--episodes", type=positive_int, default=20_000,
                        help="episodes per sequential measurement (default: %(default)s)")
    parser.add_argument("--rounds", type=positive_int, default=3)
    parser.add_argument("--out", type=results_file, default=DEFAULT_OUT,
                        help="results JSON path (default: %(default)s)")
    return parser.parse_args(argv)


def sequential(rules: Any, episodes: int) -> float:
    from agents import EXPLORING_STARTS
    from agents.tabular.q_learning import TRAINING_OPPONENT, QLearningAgent
    from gym_tictactoe.envs.env import TicTacToeEnv

    board = {"rows": rules.rows, "cols": rules.cols, "win_length": rules.win_length}
    agent = QLearningAgent(seed=0, **board)
    env = TicTacToeEnv(TRAINING_OPPONENT, agent_mark="random", **board, **EXPLORING_STARTS)
    stats = agent.train(env, episodes, seed=0)
    return stats.episodes / stats.seconds


def batched(rules: Any, batch: int, episodes: int) -> float:
    from agents import EXPLORING_STARTS
    from agents.tabular import batched as q_batched
    from agents.tabular.q_learning import TRAINING_OPPONENT, QLearningAgent

    agent = QLearningAgent(seed=0, rows=rules.rows, cols=rules.cols, win_length=rules.win_length)
    envs = q_batched.make_envs(agent, batch, TRAINING_OPPONENT, **EXPLORING_STARTS)
    stats = q_batched.train_batched(agent, envs, max(episodes, 100 * batch), seed=0)
    return stats.episodes / stats.seconds


def measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    progress = Progress(len(args.boards) * args.rounds * (1 + len(args.batches)))
    rows = []
    for rules in args.boards:
        sequential(rules, 100)  # the index and the solution built or loaded before timing
        best = {"sequential": 0.0, **{str(b): 0.0 for b in args.batches}}
        for _ in range(args.rounds):
            best["sequential"] = max(best["sequential"], sequential(rules, args.episodes))
            progress.step(f"{rules.name} one board: {best['sequential']:,.0f} episodes/s")
            for batch in args.batches:
                pace = batched(rules, batch, args.episodes)
                best[str(batch)] = max(best[str(batch)], pace)
                progress.step(f"{rules.name} {batch} boards: {pace:,.0f} episodes/s")
        rows.append({"board": rules.name, "episodes_per_second": best,
                     "speedup": {b: round(best[b] / best["sequential"], 2)
                                 for b in best if b != "sequential"}})
    return rows


def print_table(rows: list[dict[str, Any]], batches: list[int]) -> None:
    print(f"{'board':<7}{'one board':>11}" + "".join(f"{f'B={b}':>19}" for b in batches))
    for row in rows:
        eps, up = row["episodes_per_second"], row["speedup"]
        cells = "".join(f"{f'{eps[str(b)]:,.0f} ({up[str(b)]:.1f}x)':>19}" for b in batches)
        print(f"{row['board']:<7}{eps['sequential']:>11,.0f}{cells}")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    writable(args.out, "q_batched.py")
    load = os.getloadavg()[0]  # the machine is shared: how busy it was, before and after
    rows = measure(args)
    print_table(rows, args.batches)
    results = {"command": command_line(__name__),
               "machine": f"{platform.machine()}, shared 2 cores",
               "load_average": [round(load, 2), round(os.getloadavg()[0], 2)],
               "python": platform.python_version(), "rounds": args.rounds, "boards": rows}
    from gym_tictactoe.files import atomic_path

    with atomic_path(args.out) as temp, open(temp, "w") as file:
        json.dump(results, file, indent=2)
    print(f"wrote {args.out}")
    return 0
