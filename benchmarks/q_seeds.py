"""How many episodes does the default run (``make train``) need on each seed? ``train.py --seed S``.

    python -m benchmarks q_seeds                          # seeds 0-4, into runs/benchmarks/
    python -m benchmarks q_seeds --out benchmarks/results/q_seeds.json   # the committed figures
    python -m benchmarks q_seeds --board 4x4x3 --seeds 0 1 2 \
        --out benchmarks/results/q_seeds_4x4x3.json       # train.py --board 4x4x3, no other flag

Each seed is one ``train.py --seed S`` run with every other default (tabular Q-learning on 3x3,
exact evaluation every 1,000 episodes, stopped at the first perfect one), in a new process into a
temporary folder that is removed afterwards; the JSON keeps each run's episodes to perfect play,
its training time (evaluations included) and its learning curve. Episodes reproduce exactly on any
machine (NumPy's generators only); seconds depend on the machine and its load. With ``--board B``
each run is ``train.py --board B --seed S``: the board's values in agents/hyperparams/q.yml.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.commands import argument_parser, command_line
from benchmarks.progress import (
    RUNS,
    results_file,
    seed_runs,
    tabled_board,
    train_results,
    writable,
    write_json,
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from gym_tictactoe.cli.arguments import seed_arg

    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--seeds", nargs="+", type=seed_arg, default=[0, 1, 2, 3, 4])
    parser.add_argument("--board", type=tabled_board, default="3x3x3",
                        help="train.py --board (default: %(default)s, which it leaves out)")
    parser.add_argument("--out", type=results_file, default=None,
                        help="results JSON (default: runs/benchmarks/q_seeds.json, "
                             "q_seeds_BOARD.json for another board)")
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = RUNS / ("q_seeds.json" if args.board == "3x3x3"
                           else f"q_seeds_{args.board}.json")
    return args


def run_seed(seed: int, folder: Path, board: str = "3x3x3") -> dict[str, Any]:
    """One ``train.py [--board BOARD] --seed SEED`` into ``folder``; the figures of its
    results.json."""
    asked = ["train.py", *([] if board == "3x3x3" else ["--board", board]), "--seed", str(seed)]
    command = [*asked, "--no-progress", "--out", str(folder), "--name", "q"]
    results = train_results("q_seeds.py", command, folder, f"--seed {seed}")
    found = {"seed": seed, "command": "python " + " ".join(asked),
             "perfect_at_episodes": results["perfect_at_episodes"],
             "train_seconds": results["timings"]["train_seconds"],
             "total_seconds": results["timings"]["total_seconds"],
             "versions": results["versions"], "numerics": results["numerics"],
             "learning_curve": results["learning_curve"]}
    if board != "3x3x3":  # the file's values it ran with (the 3x3 figures predate the files)
        found["hyperparams"] = results["config"]["hyperparams"]
    return found


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    writable(args.out, "q_seeds.py")
    load = os.getloadavg()[0]

    def save(runs: list[dict[str, Any]]) -> None:
        write_json(args.out, {"command": command_line(__name__),
                              "load_average_at_start": load, "runs": runs}, quiet=True)

    runs = seed_runs(args.seeds, partial(run_seed, board=args.board), "episodes", save)
    print("seed  perfect at  training s")
    for run in runs:
        reached = run["perfect_at_episodes"]
        print(f"{run['seed']:<6}{f'{reached:,}' if reached else '-':>10}  "
              f"{run['train_seconds']:>10.1f}")
    print(f"results written to {args.out}")
    return 0
