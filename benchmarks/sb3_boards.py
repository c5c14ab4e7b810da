"""DQN and MaskablePPO on the 16-cell boards: ``train.py``'s defaults, measured exactly.

    python -m benchmarks sb3_boards                 # into runs/benchmarks/sb3_boards.json
    python -m benchmarks sb3_boards --out benchmarks/results/sb3_boards.json   # committed

Each (algorithm, board) is one ``train.py --algo ALGO --board BOARD --timesteps T --eval-every E``
run in a new process with the reproducible kernels (``agents.run.numerics.REPRODUCIBLE``), into a
temporary folder removed afterwards. Its learning curve has, at every checkpoint, the exact
optimal-move rate over every position and each seat's result against a best response. The JSON
is rewritten after every run, so a stopped benchmark keeps the runs it finished. Timesteps
reproduce on one machine and torch version; seconds depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.run.numerics import REPRODUCIBLE
from benchmarks.commands import argument_parser, command_line
from benchmarks.progress import RUNS, Progress, results_file, train_results, writable, write_json
from benchmarks.progress import board as board_name


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from gym_tictactoe.cli.arguments import positive_int, seed_arg

    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--algos", nargs="+", default=["maskable-ppo", "dqn"],
                        choices=["maskable-ppo", "ppo", "dqn"])
    parser.add_argument("--boards", nargs="+", type=board_name, default=["4x4x3", "4x4x4"])
    parser.add_argument("--seed", type=seed_arg, default=0)
    parser.add_argument("--timesteps", type=positive_int, default=5_000_000,
                        help="budget per run (default: %(default)s)")
    parser.add_argument("--eval-every", type=positive_int, default=1_000_000,
                        help="timesteps between exact evaluations (default: %(default)s)")
    parser.add_argument("--out", type=results_file, default=RUNS / "sb3_boards.json",
                        help="results JSON (default: %(default)s)")
    return parser.parse_args(argv)


def run_one(args: argparse.Namespace, algo: str, board: str, folder: Path) -> dict[str, Any]:
    """One ``train.py`` run into ``folder``; its settings, timings and learning curve."""
    command = ["train.py", "--algo", algo, "--board", board, "--seed", str(args.seed),
               "--timesteps", str(args.timesteps), "--eval-every", str(args.eval_every),
               "--games", "20", "--no-progress", "--out", str(folder), "--name", "run"]
    start = time.perf_counter()
    results = train_results("sb3_boards.py", command, folder,
                            f"--algo {algo} --board {board}", {**os.environ, **REPRODUCIBLE})
    return {"algo": algo, "board": board, "seed": args.seed,
            "command": "python " + " ".join(command[:-4]),
            "wall_seconds": round(time.perf_counter() - start, 1),
            "timings": results["timings"], "hyperparameters": results["config"]["hyperparameters"],
            "env_options": results["config"]["env_options"], "numerics": results["numerics"],
            "perfect_results": results["perfect_results"],
            "perfect_at_timesteps": results["perfect_at_timesteps"],
            "curve": results["learning_curve"]}


def write(path: Path, args: argparse.Namespace, runs: list[dict[str, Any]]) -> None:
    payload = {"command": command_line(__name__), "seed": args.seed,
               "timesteps": args.timesteps, "eval_every": args.eval_every,
               "machine": "x86_64, 2 cores shared with other jobs", "runs": runs}
    write_json(path, payload, quiet=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    out = writable(args.out, "sb3_boards.py")
    jobs = [(algo, board) for board in args.boards for algo in args.algos]
    runs: list[dict[str, Any]] = []
    progress = Progress(len(jobs))
    for algo, board in jobs:
        with tempfile.TemporaryDirectory() as folder:
            run = run_one(args, algo, board, Path(folder))
        runs.append(run)
        write(out, args, runs)
        last = run["curve"][-1]
        progress.step(f"{algo} {board}: {last['timesteps']:,} timesteps, rate "
                      f"{last['rate']:.4f}, X {last['X']}, O {last['O']}")
    print(f"wrote {out}")
    return 0
