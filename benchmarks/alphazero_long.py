"""``benchmarks/alphazero.py --minutes M``: one long ``train.py --algo alphazero`` run per seed,
watched as it trains.

Each run checkpoints every ``--eval-minutes`` of training time (the raw network's exact
optimal-move rate over every position and the best response per seat) and saves its state in
its run folder (``checkpoint.npz``). This watcher reads that file's header whenever it changes,
rewrites the results JSON with the learning curve so far and prints one line, so a run killed
at any point has lost nothing measured; ``--resume`` continues it later (``train.py
--resume``), and a run that has trained its minutes is only collected.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.commands import command_line
from benchmarks.progress import RUNS

ROOT = Path(__file__).resolve().parents[1]
POLL_SECONDS = 5.0
FINAL_GAMES = "20"  # the final summary's games per opponent and seat


def long_runs(args: argparse.Namespace, write: Callable[..., None]) -> int:
    """Each seed's long run in turn, the results JSON rewritten at every checkpoint."""
    # A kill stops the run in hand (its train.py too) through watch's finally.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    runs_dir = (args.runs or RUNS / f"alphazero-{args.board}").resolve()
    runs_dir.mkdir(parents=True, exist_ok=True)  # a fresh clone has no runs/ (train.py wants one)
    results: dict[str, Any] = {
        "command": command_line("benchmarks.alphazero"), "board": args.board,
        "minutes": args.minutes, "eval_minutes": args.eval_minutes, "runs_dir": str(runs_dir),
        "load_average_at_start": os.getloadavg()[0], "runs": []}
    earlier = _earlier(args)
    if earlier:  # --resume: the runs' earlier sittings keep their commands and start load
        results["load_average_at_start"] = earlier.get("load_average_at_start")
        results["load_averages_at_resume"] = [*earlier.get("load_averages_at_resume", []),
                                              os.getloadavg()[0]]
    for seed in args.seeds:
        entry: dict[str, Any] = {"seed": seed}
        entry["commands"] = next((list(run.get("commands", [])) for run in
                                  earlier.get("runs", []) if run.get("seed") == seed), [])
        results["runs"].append(entry)
        watch(command_for(args, seed, runs_dir), runs_dir, _stem(args.board, seed), entry,
              lambda: write(args.out, results, quiet=True))
    write(args.out, results)
    print("seed  games      minutes  rate      as X   as O")
    for run in results["runs"]:
        last = (run.get("learning_curve") or [{}])[-1]
        print(f"{run['seed']:<6}{run.get('games', 0):<11,}{run.get('train_seconds', 0) / 60:<9.1f}"
              f"{last.get('rate', 0):<10.4%}{last.get('X', '-'):<7}{last.get('O', '-')}")
    return 0


def _earlier(args: argparse.Namespace) -> dict[str, Any]:
    """With ``--resume``, what ``--out`` already holds for this board (empty otherwise)."""
    if not args.resume or not args.out.is_file():
        return {}
    try:
        found = json.loads(args.out.read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) and found.get("board") == args.board else {}


def _stem(board: str, seed: int) -> str:
    return f"az-{board}-seed{seed}"


def command_for(args: argparse.Namespace, seed: int, runs_dir: Path) -> list[str] | None:
    """The train.py command for ``seed``: a new run, or with ``--resume`` the continuation of
    the latest one in ``runs_dir`` (None: it has trained its minutes already)."""
    from agents.alphazero.state import STATE_FILE, read_progress
    from agents.run.folder import run_folders

    budget = ["--minutes", str(args.minutes), "--eval-minutes", str(args.eval_minutes),
              "--games", FINAL_GAMES, "--no-progress"]
    found = run_folders(runs_dir, _stem(args.board, seed)) if runs_dir.is_dir() else []
    if args.resume and found and (found[-1] / STATE_FILE).is_file():
        last = found[-1]
        trained = read_progress(last / STATE_FILE)["train_seconds"] / 60
        if (last / "results.json").is_file() and trained >= args.minutes:
            return None
        rate = [] if args.learning_rate is None else ["--learning-rate", str(args.learning_rate)]
        return ["train.py", "--resume", str(last), *budget, *rate]
    return ["train.py", "--algo", "alphazero", "--board", args.board, "--seed", str(seed),
            "--out", str(runs_dir), "--name", _stem(args.board, seed), *budget]


def watch(command: list[str] | None, runs_dir: Path, stem: str, entry: dict[str, Any],
          save: Callable[[], None]) -> None:
    """Run ``command`` (None: nothing to run) and record its checkpoints in ``entry`` as they
    come (``save`` after each); its final figures once it ends."""
    if command is not None:
        entry.setdefault("commands", []).append("python " + " ".join(command))
        print("$ python " + " ".join(command), flush=True)
    process = None if command is None else subprocess.Popen([sys.executable, *command],
                                                            cwd=ROOT)
    seen = None
    try:
        while True:
            ended = process is None or process.poll() is not None
            seen = update(runs_dir, stem, entry, seen, save)
            if ended:
                break
            time.sleep(POLL_SECONDS)
    finally:  # stopped (Ctrl-C, kill): train.py stops too, its last checkpoint kept
        if process is not None and process.poll() is None:
            process.terminate()
            process.wait()
    if process is not None and process.returncode:
        save()
        raise SystemExit(f"alphazero.py: {' '.join(command or [])} failed (exit "
                         f"{process.returncode}); the curve so far is in the results JSON")
    finish(entry, save)


def update(runs_dir: Path, stem: str, entry: dict[str, Any], seen: int | None,
           save: Callable[[], None]) -> int | None:
    """Read the latest run's state when it changed since ``seen`` (its mtime): the curve so
    far into ``entry``, saved, and one line printed. Returns what was seen."""
    from agents.alphazero.state import STATE_FILE, read_progress
    from agents.run.folder import run_folders

    found = run_folders(runs_dir, stem) if runs_dir.is_dir() else []
    try:
        stamp = (found[-1] / STATE_FILE).stat().st_mtime_ns if found else None
    except FileNotFoundError:  # reserved, no checkpoint yet
        stamp = None
    if stamp is None or stamp == seen:
        return seen
    header = read_progress(found[-1] / STATE_FILE)
    entry.update(run_folder=str(found[-1]), games=header["games"], samples=header.get("samples"),
                 train_seconds=round(header["train_seconds"], 1),
                 train_cpu_seconds=header.get("train_cpu_seconds"),
                 hyperparameters=header["settings"], learning_curve=header["curve"])
    save()
    if header["curve"]:
        last = header["curve"][-1]
        print(f"seed {entry['seed']}: {header['train_seconds'] / 60:.1f} min trained, "
              f"{header['games']:,} games: optimal-move rate {last['rate']:.4%}, best response "
              f"as X {last['X']}, as O {last['O']}", file=sys.stderr, flush=True)
    return stamp


def finish(entry: dict[str, Any], save: Callable[[], None]) -> None:
    """The finished run's final figures (its results.json) into ``entry``."""
    folder = Path(entry.get("run_folder", ""))
    if not (folder / "results.json").is_file():
        return
    results = json.loads((folder / "results.json").read_text())
    entry["final"] = {k: results.get(k) for k in ("optimal_move_rate", "best_response",
                                                   "perfect", "positions", "blunders")}
    entry.update(timings=results["timings"], versions=results["versions"],
                 learning_curve=results["learning_curve"])
    save()
