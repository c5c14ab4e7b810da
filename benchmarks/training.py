"""How fast do SB3 agents learn provably perfect tic-tac-toe, and what does each change buy?

Each run trains one algorithm with one seed against ``agents.sb3.CURRICULUM`` in both seats, with
an exact evaluation (``gym_tictactoe.evaluation.evaluate``: every position, a best response in
each seat) every ``--eval-every`` timesteps, and stops at the first perfect one (100% optimal moves
and draw/draw against a best response) or at the budget::

    python -m benchmarks training                      # dqn and maskable-ppo, seeds 0-4, defaults
    python -m benchmarks training --ablation --jobs 2  # ... and with each change switched off

Variants (``--variants``, or all of them with ``--ablation``): ``default`` is what ``train.py``
uses (``agents.sb3.ENV_OPTIONS``: canonical observations and exploring starts on 75% of the
episodes, against ``CURRICULUM``, minimax with 20% random moves); ``no-canonical``, ``no-starts``
and ``old-opponent`` (40% random moves) undo one change each; ``before`` is the setup before
them all (no canonical boards, no exploring starts, the old opponent). Every run also reports
its final model averaged over the 8 symmetries at play time (``SymmetrizedPolicy``;
(Maskable)PPO averages its action distributions, DQN its moves' votes), a change that needs no
retraining.

Timesteps reproduce on any x86-64 machine with the same library versions: the runs use torch's
generic CPU kernels and MKL's SSE2 code path (``agents.run.numerics.REPRODUCIBLE``), since the
kernels a CPU picks by itself round differently and PPO learns differently from them
(``--native-kernels`` to use them anyway: faster, but the timesteps then depend on the CPU). Wall
times depend on the machine and its load (``--jobs 2`` runs two trainings at once, one per core,
each with one torch thread). The results JSON (``--out``, by default under runs/) keeps every
evaluation of every run, and the kernels and threads each run used.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from importlib.metadata import version
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from agents import sb3
from agents.run.numerics import REPRODUCIBLE, numerics
from benchmarks.commands import argument_parser, command_line
from benchmarks.progress import RUNS, Progress, processes, results_file, writable
from gym_tictactoe import evaluation
from gym_tictactoe.files import atomic_path
from gym_tictactoe.players.symmetrized import SymmetrizedPolicy

DEFAULT_OUT = RUNS / "training.json"
BUDGET = 300_000
ALGOS = ("dqn", "maskable-ppo")
VARIANTS = ("default", "no-canonical", "no-starts", "old-opponent", "before")


def env_options(algo: str, variant: str) -> dict[str, Any]:
    """``algo``'s default env options with the change(s) ``variant`` names switched off."""
    options = dict(sb3.ENV_OPTIONS[algo])
    if variant in ("no-canonical", "before"):
        options["canonical"] = False
    if variant in ("no-starts", "before"):
        options.pop("start", None)
        options.pop("start_probability", None)
    return options


def opponent(variant: str) -> str:
    """The curriculum: the old one (epsilon 0.4) for the variants that name it."""
    return sb3.OLD_CURRICULUM if variant in ("old-opponent", "before") else sb3.CURRICULUM


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from gym_tictactoe.cli.arguments import positive_int, seed_arg

    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--algos", nargs="+", default=list(ALGOS), choices=sb3.ALGOS)
    parser.add_argument("--seeds", nargs="+", type=seed_arg, default=[0, 1, 2, 3, 4])
    parser.add_argument("--ablation-seeds", nargs="+", type=seed_arg, default=None,
                        help="seeds of the variants other than default (default: --seeds)")
    parser.add_argument("--variants", nargs="+", default=["default"], choices=VARIANTS)
    parser.add_argument("--ablation", action="store_true", help="every variant")
    parser.add_argument("--timesteps", type=positive_int, default=BUDGET, help="budget per run")
    parser.add_argument("--eval-every", type=positive_int, default=10_000, help="timesteps between "
                        "exact evaluations (the resolution of the figures)")
    parser.add_argument("--jobs", type=processes, default=1, help="runs at once (one per core)")
    parser.add_argument("--out", type=results_file, default=DEFAULT_OUT,
                        help="results JSON path (default: %(default)s)")
    parser.add_argument("--native-kernels", action="store_true",
                        help="the CPU's own torch and MKL kernels: faster, but the timesteps "
                             "then depend on the CPU")
    args = parser.parse_args(argv)
    if args.ablation:
        args.variants = list(VARIANTS)
    return args


def run_one(algo: str, variant: str, seed: int, timesteps: int, eval_every: int
            ) -> dict[str, Any]:
    """Train one (algo, variant, seed) until perfect or the budget; its figures and history."""
    options = env_options(algo, variant)
    start = time.perf_counter()
    model, callback = sb3.train(algo, timesteps, opponent=opponent(variant), seed=seed,
                                eval_every=eval_every, progress_bar=False,
                                stop_when_perfect=True, threads=1, env_options=options)
    seconds = time.perf_counter() - start
    with sb3.torch_threads(1):  # as in training: what numerics() reports
        machine = numerics()
    history = callback.history
    perfect = next((entry for entry in history if entry["perfect"]), None)
    return {
        "algo": algo, "variant": variant, "seed": seed, "env_options": options,
        "opponent": opponent(variant),
        "timesteps": int(model.num_timesteps), "wall_seconds": round(seconds, 1),
        "perfect": perfect, "best_rate": max(entry["rate"] for entry in history),
        "final": history[-1], "averaged": _averaged(model, algo, options),
        "numerics": machine, "history": history,
    }


def _averaged(model: Any, algo: str, options: dict[str, Any]) -> dict[str, Any]:
    """The final model averaged over the board's symmetries at play time, measured exactly."""
    canonical = bool(options.get("canonical", False))
    policy = sb3.ModelPolicy(model, algo, canonical=canonical, stochastic=algo != "dqn")
    with sb3.torch_threads(1):
        report = evaluation.evaluate(SymmetrizedPolicy(policy))
    return {"rate": report.move_rate.rate, "X": report.best_response["X"].result,
            "O": report.best_response["O"].result, "perfect": report.perfect}


def run_all(args: argparse.Namespace) -> list[dict[str, Any]]:
    def seeds(variant: str) -> list[int]:
        return args.seeds if variant == "default" else args.ablation_seeds or args.seeds

    jobs = [(algo, variant, seed, args.timesteps, args.eval_every)
            for algo in args.algos for variant in args.variants for seed in seeds(variant)]
    runs, progress = [], Progress(len(jobs))
    # Spawned workers: a forked torch may hang; each worker sets its own single thread, and
    # reads the kernel variables when it imports torch (agents.run.numerics).
    with _kernels(args.native_kernels), ProcessPoolExecutor(
            max_workers=args.jobs, mp_context=get_context("spawn")) as pool:
        for run in pool.map(_run_job, jobs):
            runs.append(run)
            reached = (f"perfect at {run['perfect']['timesteps']:,}" if run["perfect"]
                       else f"best rate {run['best_rate']:.4f}")
            progress.step(f"{run['algo']} {run['variant']} seed {run['seed']}: {reached}, "
                          f"{run['wall_seconds']:.0f} s")
    return runs


@contextmanager
def _kernels(native: bool) -> Iterator[None]:
    """``agents.run.numerics.REPRODUCIBLE`` in the environment the workers inherit, unless
    native."""
    saved = {name: os.environ.get(name) for name in REPRODUCIBLE}
    if not native:
        os.environ.update(REPRODUCIBLE)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _run_job(job: tuple[str, str, int, int, int]) -> dict[str, Any]:
    return run_one(*job)


def format_table(runs: list[dict[str, Any]]) -> str:
    """Per algorithm and variant: seeds perfect, median timesteps and wall time to perfect, the
    worst best rate, and what symmetry averaging of the final models gives."""
    header = ("algo", "variant", "perfect", "median steps", "median s", "min best rate",
              "averaged: perfect", "averaged: min rate")
    rows = [header]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in runs:
        groups.setdefault((run["algo"], run["variant"]), []).append(run)
    for (algo, variant), group in groups.items():
        done = [run for run in group if run["perfect"]]
        steps = [run["perfect"]["timesteps"] for run in done]
        seconds = [run["perfect"]["seconds"] for run in done]
        averaged = [run["averaged"] for run in group]
        rows.append((algo, variant, f"{len(done)}/{len(group)}",
                     f"{statistics.median(steps):,.0f}" if steps else "-",
                     f"{statistics.median(seconds):.0f}" if seconds else "-",
                     f"{min(run['best_rate'] for run in group):.4f}",
                     f"{sum(entry['perfect'] for entry in averaged)}/{len(group)}",
                     f"{min(entry['rate'] for entry in averaged):.4f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
             for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def format_runs(runs: list[dict[str, Any]]) -> str:
    """One line per run: timesteps and seconds to perfect, or its best rate."""
    lines = []
    for run in runs:
        perfect = run["perfect"]
        reached = (f"perfect at {perfect['timesteps']:,} ({perfect['seconds']:.0f} s)" if perfect
                   else f"not perfect in {run['timesteps']:,}: best rate "
                        f"{run['best_rate']:.4f}, final X {run['final']['X']} / O "
                        f"{run['final']['O']}")
        lines.append(f"{run['algo']:<13}{run['variant']:<14}seed {run['seed']}  {reached}")
    return "\n".join(lines)


def _environment(args: argparse.Namespace, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Versions, the machine, and the kernels the workers used (each run also keeps its own)."""
    packages = ("torch", "stable-baselines3", "sb3-contrib", "gymnasium", "numpy")
    return {"python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "jobs": args.jobs, "torch_threads": 1,
            "kernels": "native" if args.native_kernels else "reproducible",
            "numerics": runs[0]["numerics"] if runs else numerics(),
            "load_average_at_start": getattr(args, "load_average", None),
            **{name: version(name) for name in packages}}


def write_results(path: Path, args: argparse.Namespace, runs: list[dict[str, Any]]) -> None:
    """Results JSON: the command, the settings, the environment and every run's history."""
    settings = {key: (str(value) if isinstance(value, Path) else value)
                for key, value in vars(args).items() if key != "load_average"}
    results = {
        "command": command_line(__name__), "settings": settings,
        "hyperparameters": {algo: sb3.HYPERPARAMETERS[algo] for algo in args.algos},
        "n_envs": {algo: sb3.N_ENVS[algo] for algo in args.algos},
        "environment": _environment(args, runs), "runs": runs,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as temp:  # a reader never sees half a file
        temp.write_text(json.dumps(results, indent=2))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    writable(args.out, "training.py")
    args.load_average = os.getloadavg()[0]
    runs = run_all(args)
    print(format_runs(runs))
    print(format_table(runs))
    write_results(args.out, args, runs)
    print(f"results written to {args.out}")
    return 0
