"""How fast do SB3 algorithms learn perfect tic-tac-toe? Timesteps and wall time, measured exactly.

Each algorithm (MaskablePPO on the board with action masks; PPO and DQN on one-hot boards, where
an illegal move loses) trains against ``agents.sb3.CURRICULUM`` in both seats (``agent_mark`` drawn
each episode), with ``gym_tictactoe.evaluation.evaluate`` every ``--eval-every`` timesteps. Per
algorithm and seed the table gives the first evaluation with draws in both seats against any
opponent, the first perfect one (draws and 100% value-keeping moves; training stops there) or
else the best optimal-move rate reached within the budget::

    python benchmarks/training.py --algos maskable-ppo ppo dqn --seeds 0 1

Wall times include the exact evaluations (about 0.1 s each) and depend on the machine and its
load; timesteps do not. The results JSON holds every evaluation for learning curves.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from agents import sb3
from gym_tictactoe.files import atomic_path

DEFAULT_OUT = Path("benchmarks/results/training.json")
# Enough for each to reach its plateau against the curriculum (about 2-5 minutes each on 2 cores).
BUDGETS = {"maskable-ppo": 600_000, "ppo": 1_000_000, "dqn": 300_000}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algos", nargs="+", default=list(sb3.ALGOS), choices=sb3.ALGOS)
    parser.add_argument("--timesteps", type=int, default=None,
                        help=f"budget per run (default per algorithm: {BUDGETS})")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--eval-every", type=int, default=10_000, help="timesteps between "
                        "exact evaluations (the resolution of the figures)")
    parser.add_argument("--opponent", default=sb3.CURRICULUM, help="opponent spec to train on")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 is "
                        "fastest for these small networks)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results JSON path")
    parser.add_argument("--progress", action="store_true", help="show SB3's progress bars")
    return parser.parse_args(argv)


def run_one(algo: str, seed: int, args: argparse.Namespace) -> dict[str, Any]:
    """Train one algorithm with one seed; the figures for the table and the JSON."""
    start = time.perf_counter()
    model, callback = sb3.train(
        algo, args.timesteps or BUDGETS[algo], opponent=args.opponent, agent_mark="random",
        seed=seed, eval_every=args.eval_every, progress_bar=args.progress, stop_when_perfect=True,
        threads=args.threads,
    )
    history = callback.history
    return {
        "algo": algo, "seed": seed, "timesteps": int(model.num_timesteps),
        "wall_seconds": round(time.perf_counter() - start, 1),
        "draws": _first(history, lambda e: e["X"] == e["O"] == "draw"),
        "perfect": _first(history, lambda e: e["perfect"]),
        "best": max(history, key=lambda e: (e["rate"], -e["timesteps"])),
        "final": history[-1], "history": history,
    }


def _first(history: list[dict[str, Any]], test: Callable[[dict], bool]) -> dict | None:
    return next((entry for entry in history if test(entry)), None)


def _when(entry: dict[str, Any] | None) -> str:
    return "-" if entry is None else f"{entry['timesteps']:,} ({entry['seconds']:.0f} s)"


def format_table(runs: list[dict[str, Any]]) -> str:
    """One row per run: when it first drew in both seats, when it became perfect, its best."""
    header = ("algo", "seed", "draw/draw at", "100% optimal at", "best rate (at)",
              "final X/O", "steps", "wall s")
    rows = [header]
    for run in runs:
        best = run["best"]
        rows.append((run["algo"], str(run["seed"]), _when(run["draws"]), _when(run["perfect"]),
                     f"{best['rate']:.4f} ({best['timesteps']:,})",
                     f"{run['final']['X']}/{run['final']['O']}", f"{run['timesteps']:,}",
                     f"{run['wall_seconds']:.0f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
             for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines) + "\n('-' = not reached within the run's budget)"


def _environment(args: argparse.Namespace) -> dict[str, Any]:
    packages = ("torch", "stable-baselines3", "sb3-contrib", "gymnasium", "numpy")
    return {"python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "threads": args.threads,
            **{name: version(name) for name in packages}}


def write_results(path: Path, args: argparse.Namespace, runs: list[dict[str, Any]]) -> None:
    """Results JSON: the command, the settings, the environment and every run's history."""
    settings = {key: (str(value) if isinstance(value, Path) else value)
                for key, value in vars(args).items()}
    results = {
        "command": " ".join(["python", *sys.argv]), "settings": settings,
        "hyperparameters": {algo: sb3.HYPERPARAMETERS[algo] for algo in args.algos},
        "n_envs": {algo: sb3.N_ENVS[algo] for algo in args.algos},
        "budgets": {algo: args.timesteps or BUDGETS[algo] for algo in args.algos},
        "environment": _environment(args), "runs": runs,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as temp:  # a reader never sees half a file
        temp.write_text(json.dumps(results, indent=2))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    runs = []
    for algo in args.algos:
        for seed in args.seeds:
            runs.append(run_one(algo, seed, args))
            print(f"done {algo} seed {seed}: {runs[-1]['timesteps']:,} steps in "
                  f"{runs[-1]['wall_seconds']:.0f} s", flush=True)
    print(format_table(runs))
    write_results(args.out, args, runs)
    print(f"results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
