"""What moves DQN and MaskablePPO on the 16-cell boards: one change at a time against the default.

    python -m benchmarks sb3_variants                       # into runs/benchmarks/sb3_variants.json
    python -m benchmarks sb3_variants --out benchmarks/results/sb3_variants.json   # committed

``sb3_boards.py`` measures ``train.py``'s defaults at 1M and 5M timesteps; this benchmark changes
one hyper-parameter of the network or of learning (``VARIANTS``) and trains each variant for the
same budget on the same seed, with the default itself among them so that every row comes from
the same code path and kernels (``agents.run.numerics.REPRODUCIBLE``, set before torch is imported).
Each run is ``agents.sb3.train`` with ``train.py``'s environment (canonical boards, exploring
starts on 75% of the episodes, the minimax-with-20%-random curriculum), evaluated exactly at the
end: the optimal-move rate over every position and each seat's result against a best response.
The JSON is rewritten after every run; ``--append`` keeps the runs already in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from agents.run.numerics import REPRODUCIBLE, numerics
from benchmarks.commands import argument_parser, command_line
from benchmarks.progress import RUNS, Progress, results_file, writable, write_json
from gym_tictactoe.cli.arguments import positive_int, seed_arg

# One change each from agents.sb3.HYPERPARAMETERS (the 3x3 settings train.py uses everywhere).
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "ppo-default": ("maskable-ppo", {}),
    "ppo-wide": ("maskable-ppo", {"policy_kwargs": {"net_arch": {"pi": [512, 512],
                                                                  "vf": [512, 512]}}}),
    "ppo-deep": ("maskable-ppo", {"policy_kwargs": {"net_arch": {"pi": [256, 256, 256],
                                                                  "vf": [256, 256, 256]}}}),
    "ppo-entropy-0.01": ("maskable-ppo", {"ent_coef": 0.01}),
    "ppo-lr-3e-4": ("maskable-ppo", {"learning_rate": 3e-4}),
    "ppo-rollout-256": ("maskable-ppo", {"n_steps": 256}),
    "dqn-default": ("dqn", {}),
    "dqn-wide": ("dqn", {"policy_kwargs": {"net_arch": [512, 512]}}),
    "dqn-epsilon-0.05": ("dqn", {"exploration_final_eps": 0.05}),
    "dqn-buffer-500k": ("dqn", {"buffer_size": 500_000}),
}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--boards", nargs="+", default=["4x4x4"], choices=["3x3", "4x4x3", "4x4x4"])
    parser.add_argument("--seed", type=seed_arg, default=0)
    parser.add_argument("--timesteps", type=positive_int, default=1_000_000,
                        help="budget per run (default: %(default)s)")
    parser.add_argument("--out", type=results_file, default=RUNS / "sb3_variants.json",
                        help="results JSON (default: %(default)s)")
    parser.add_argument("--append", action="store_true",
                        help="keep the runs already in --out (a variant and board run again "
                             "replaces its row)")
    return parser.parse_args(argv)


def run_one(args: argparse.Namespace, variant: str, board: str) -> dict[str, Any]:
    """Train ``variant`` on ``board`` for ``args.timesteps``; its exact result at the end."""
    from agents import sb3
    from gym_tictactoe import game

    algo, changes = VARIANTS[variant]

    def announce(text: str) -> None:
        print(f"  {variant} {board}: {text}", file=sys.stderr, flush=True)

    start, cpu = time.perf_counter(), time.process_time()
    _, callback = sb3.train(algo, args.timesteps, seed=args.seed, eval_every=args.timesteps,
                            progress_bar=False, stop_when_perfect=True,
                            rules=game.rules(*game.parse_board(board)), announce=announce,
                            **changes)
    last = callback.history[-1]
    return {"variant": variant, "algo": algo, "board": board, "seed": args.seed,
            "changes": changes, "timesteps": last["timesteps"], "rate": last["rate"],
            "X": last["X"], "O": last["O"], "perfect": last["perfect"],
            "wall_seconds": round(time.perf_counter() - start, 1),
            "cpu_seconds": round(time.process_time() - cpu, 1), "numerics": numerics()}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    out = writable(args.out, "sb3_variants.py")
    os.environ.update(REPRODUCIBLE)  # before torch is imported, as sb3_boards.py's child runs
    runs: list[dict[str, Any]] = []
    if args.append and out.exists():
        runs = json.loads(out.read_text())["runs"]
    jobs = [(variant, board) for board in args.boards for variant in args.variants]
    progress = Progress(len(jobs))
    for variant, board in jobs:
        run = run_one(args, variant, board)
        runs = [r for r in runs if (r["variant"], r["board"]) != (variant, board)] + [run]
        write_json(out, {"command": command_line(__name__),
                         "timesteps": args.timesteps,
                         "machine": "x86_64, 2 cores shared with other jobs", "runs": runs},
                   quiet=True)
        progress.step(f"{variant} {board}: rate {run['rate']:.4f}, X {run['X']}, O {run['O']}")
    print(f"wrote {out}")
    return 0
