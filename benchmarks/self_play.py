"""How close does self-play alone get to perfect play? Measured exactly, by train.py runs.

Each run is ``train.py --opponent self`` (a pool of the learner's last 5 snapshots, one drawn per
episode, refreshed every 1,000 episodes or 10,000 timesteps; no built-in opponent mixed in), with
the exact evaluation of every checkpoint against the board's full game tree::

    python benchmarks/self_play.py                 # 3x3: q, dqn, maskable-ppo; 4x4x3: q
    python benchmarks/self_play.py --runs q-3x3    # one of them

The table gives, per run, the first perfect checkpoint (or none within the budget), the best
optimal-move rate and the final best-response results. Timesteps and episodes reproduce; wall
times depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gym_tictactoe.files import atomic_path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "self_play"
# name: train.py arguments (the seeds are added per run).
RUNS: dict[str, list[str]] = {
    "q-3x3": ["--algo", "q", "--episodes", "200000", "--eval-every", "10000"],
    "dqn-3x3": ["--algo", "dqn", "--timesteps", "300000"],
    "maskable-ppo-3x3": ["--algo", "maskable-ppo", "--timesteps", "300000"],
    "q-4x4x3": ["--algo", "q", "--board", "4x4x3", "--episodes", "1000000",
                "--eval-every", "200000", "--refresh-every", "10000"],
}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", choices=list(RUNS), default=list(RUNS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder of the runs and summary")
    return parser.parse_args(argv)


def run(name: str, seed: int, out: Path) -> dict[str, Any]:
    """One train.py self-play run; the figures of its results.json."""
    command = [sys.executable, str(ROOT / "train.py"), *RUNS[name], "--opponent", "self",
               "--seed", str(seed), "--out", str(out), "--name", f"{name}-seed{seed}",
               "--no-progress", "--games", "100"]
    subprocess.run(command, check=True, cwd=ROOT, capture_output=True, text=True)
    results = json.loads((out / f"{name}-seed{seed}" / "results.json").read_text())
    curve = results["learning_curve"]
    clock = "episodes" if "episodes" in curve[0] else "timesteps"
    return {"run": name, "seed": seed, "clock": clock, "command": " ".join(command[1:]),
            "perfect_at": results[f"perfect_at_{clock}"],
            "best_rate": max(entry["rate"] for entry in curve),
            "final_rate": results["optimal_move_rate"],
            "final": {seat: results["best_response"][seat]["result"] for seat in ("X", "O")},
            "trained": curve[-1][clock], "train_seconds": results["timings"]["train_seconds"]}


def format_table(rows: list[dict[str, Any]]) -> str:
    header = ("run", "seed", "perfect at", "best rate", "final rate", "final X/O", "trained",
              "train s")
    lines = [header]
    for row in rows:
        perfect = f"{row['perfect_at']:,} {row['clock']}" if row["perfect_at"] else "-"
        lines.append((row["run"], str(row["seed"]), perfect, f"{row['best_rate']:.4f}",
                      f"{row['final_rate']:.4f}", f"{row['final']['X']}/{row['final']['O']}",
                      f"{row['trained']:,}", f"{row['train_seconds']:.0f}"))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True))
            for line in lines]
    text.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(text)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    rows = []
    for name in args.runs:
        for seed in args.seeds:
            rows.append(run(name, seed, args.out))
            print(f"done {name} seed {seed}", flush=True)
    print(format_table(rows))
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_path(args.out / "summary.json") as temp:
        temp.write_text(json.dumps({"command": " ".join(["python", *sys.argv]), "runs": rows},
                                   indent=2))
    print(f"results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
