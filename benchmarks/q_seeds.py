"""How many episodes does the default run (``make train``) need on each seed? ``train.py --seed S``.

    python benchmarks/q_seeds.py                          # seeds 0-4, into runs/benchmarks/
    python benchmarks/q_seeds.py --out benchmarks/results/q_seeds.json   # the committed figures

Each seed is one ``train.py --seed S`` run with every other default (tabular Q-learning on 3x3,
exact evaluation every 1,000 episodes, stopped at the first perfect one), in a new process into a
temporary folder that is removed afterwards; the JSON keeps each run's episodes to perfect play,
its training time (evaluations included) and its learning curve. Episodes reproduce exactly on any
machine (NumPy's generators only); seconds depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script: its sibling modules
from progress import RUNS, results_file, seed_runs, train_results, writable, write_json


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from gym_tictactoe.cli.arguments import seed_arg

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", nargs="+", type=seed_arg, default=[0, 1, 2, 3, 4])
    parser.add_argument("--out", type=results_file, default=RUNS / "q_seeds.json",
                        help="results JSON (default: %(default)s)")
    return parser.parse_args(argv)


def run_seed(seed: int, folder: Path) -> dict[str, Any]:
    """One ``train.py --seed SEED`` into ``folder``; the figures of its results.json."""
    command = ["train.py", "--seed", str(seed), "--no-progress", "--out", str(folder),
               "--name", "q"]
    results = train_results("q_seeds.py", command, folder, f"--seed {seed}")
    return {"seed": seed, "command": "python " + " ".join(command[:3]),
            "perfect_at_episodes": results["perfect_at_episodes"],
            "train_seconds": results["timings"]["train_seconds"],
            "total_seconds": results["timings"]["total_seconds"],
            "versions": results["versions"], "numerics": results["numerics"],
            "learning_curve": results["learning_curve"]}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    writable(args.out, "q_seeds.py")
    load = os.getloadavg()[0]

    def save(runs: list[dict[str, Any]]) -> None:
        write_json(args.out, {"command": " ".join(["python", *sys.argv]),
                              "load_average_at_start": load, "runs": runs}, quiet=True)

    runs = seed_runs(args.seeds, run_seed, "episodes", save)
    print("seed  perfect at  training s")
    for run in runs:
        reached = run["perfect_at_episodes"]
        print(f"{run['seed']:<6}{f'{reached:,}' if reached else '-':>10}  "
              f"{run['train_seconds']:>10.1f}")
    print(f"results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
