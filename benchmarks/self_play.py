"""How close does self-play alone get to perfect play? Measured exactly, by train.py runs.

Each run is ``train.py --opponent self`` (a pool of the learner's last 5 snapshots, one drawn per
episode, refreshed every 1,000 episodes or 10,000 timesteps; no built-in opponent mixed in) with
train.py's other defaults, exploring starts among them (drawn from the board's list of positions:
the rules, not the solver), and the exact evaluation of every checkpoint against the board's full
game tree, which only measures (and stops the run once perfect)::

    python -m benchmarks self_play                 # 3x3: q, dqn, maskable-ppo; 4x4x3: q; seed 0
    python -m benchmarks self_play --runs q-3x3 dqn-3x3 maskable-ppo-3x3 --seeds 0 1 2 3 4 \
        --out benchmarks/results/self_play_3x3

The table gives, per run, the first perfect checkpoint (or none within the budget), the best
optimal-move rate and the final best-response results. Episodes reproduce exactly; timesteps on
any x86-64 machine with the same library versions, since the SB3 runs use torch's generic CPU
kernels and MKL's SSE2 path (``agents.run.numerics.REPRODUCIBLE``; ``--native-kernels``: the CPU's
own, faster, but then the timesteps depend on the CPU). Wall times depend on the machine and its
load. The runs and summary go to ``--out`` (by default under runs/). A line after each run
estimates the time left; runs off 3x3 (minutes each) show train.py's own progress bar.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.run.folder import run_folders
from agents.run.numerics import REPRODUCIBLE
from benchmarks.commands import argument_parser, command_line
from benchmarks.progress import RUNS as RUNS_FOLDER
from benchmarks.progress import Progress, writable
from gym_tictactoe.files import atomic_path

ROOT = Path(__file__).resolve().parents[1]
OUT = RUNS_FOLDER / "self_play"
# name: train.py arguments (the seeds are added per run).
RUNS: dict[str, list[str]] = {
    "q-3x3": ["--algo", "q", "--episodes", "200000", "--eval-every", "10000"],
    "dqn-3x3": ["--algo", "dqn", "--timesteps", "300000"],
    "maskable-ppo-3x3": ["--algo", "maskable-ppo", "--timesteps", "300000"],
    "q-4x4x3": ["--algo", "q", "--board", "4x4x3", "--episodes", "1000000",
                "--eval-every", "200000", "--refresh-every", "10000"],
}
# The tabular runs again without exploring starts: what they buy in self-play.
RUNS.update({f"{name}-empty": [*RUNS[name], "--start", "empty"]
             for name in ("q-3x3", "q-4x4x3")})


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from gym_tictactoe.cli.arguments import seed_arg

    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--runs", nargs="+", choices=list(RUNS), default=list(RUNS))
    parser.add_argument("--seeds", nargs="+", type=seed_arg, default=[0])
    parser.add_argument("--out", type=Path, default=OUT,
                        help="folder of the runs and summary (default: %(default)s)")
    parser.add_argument("--native-kernels", action="store_true",
                        help="the CPU's own torch and MKL kernels: faster, but SB3 timesteps "
                             "then depend on the CPU")
    return parser.parse_args(argv)


def run(name: str, seed: int, out: Path, native: bool = False) -> dict[str, Any]:
    """One train.py self-play run; the figures of its results.json."""
    long = "--board" in RUNS[name]  # minutes: train.py's progress bar shows how far it is
    command = ["train.py", *RUNS[name], "--opponent", "self", "--seed", str(seed),
               "--out", _shown(out), "--name", f"{name}-seed{seed}", "--games", "100",
               *([] if long else ["--no-progress"])]
    environment = None if native else {**os.environ, **REPRODUCIBLE}
    done = subprocess.run([sys.executable, *command], cwd=ROOT, capture_output=not long,
                          text=True, env=environment, check=False)
    if done.returncode:
        last = ((done.stderr or "").strip().splitlines() or ["its error above"])[-1]
        raise SystemExit(f"self_play.py: {name} seed {seed} failed (exit {done.returncode}): "
                         f"{last}")
    folder = run_folders(out, f"{name}-seed{seed}")[-1]  # train.py numbers runs: the latest
    results = json.loads((folder / "results.json").read_text())
    curve = results["learning_curve"]
    clock = "episodes" if "episodes" in curve[0] else "timesteps"
    return {"run": name, "seed": seed, "clock": clock, "command": " ".join(command),
            "perfect_at": results[f"perfect_at_{clock}"],
            "best_rate": max(entry["rate"] for entry in curve),
            "final_rate": results["optimal_move_rate"],
            "final": {seat: results["best_response"][seat]["result"] for seat in ("X", "O")},
            "trained": curve[-1][clock], "train_seconds": results["timings"]["train_seconds"]}


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it (train.py runs there)."""
    resolved = path.resolve()
    return str(resolved.relative_to(ROOT)) if resolved.is_relative_to(ROOT) else str(resolved)


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
    writable(args.out / "summary.json", "self_play.py")
    rows, progress = [], Progress(len(args.runs) * len(args.seeds))
    for name in args.runs:
        for seed in args.seeds:
            row = run(name, seed, args.out, args.native_kernels)
            rows.append(row)
            reached = (f"perfect at {row['perfect_at']:,} {row['clock']}" if row["perfect_at"]
                       else f"not perfect, rate {row['final_rate']:.4f}")
            progress.step(f"{name} seed {seed}: {reached}")
    print(format_table(rows))
    write_summary(args.out / "summary.json", command_line(__name__), rows)
    print(f"results written to {args.out}")
    return 0


def write_summary(path: Path, command: str, rows: list[dict[str, Any]]) -> None:
    """The runs' rows, kept beside those of earlier invocations into the same folder (a run and
    seed measured again replaces its row), and every invocation's command."""
    old = json.loads(path.read_text()) if path.exists() else {"commands": [], "runs": []}
    new = {(row["run"], row["seed"]) for row in rows}
    kept = [row for row in old["runs"] if (row["run"], row["seed"]) not in new]
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as temp:
        temp.write_text(json.dumps({"commands": [*old.get("commands", []), command],
                                    "runs": kept + rows}, indent=2))
