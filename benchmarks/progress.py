"""Progress lines with an estimate of the time left, for benchmarks whose work comes in runs.

Each finished unit prints one line (``[3/10] dqn seed 2: perfect at 90,000; 2 min 10 s so far,
about 4 min left``), to stderr so that a benchmark's table on stdout stays clean. The estimate
assumes the units left cost what the finished ones did on average.
Within one long unit (a 4x4 Q-learning run), ``line`` says how far it is with its own estimate.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# Benchmarks write under runs/ unless --out says otherwise: the committed results in
# benchmarks/results/ change only when someone means to re-measure them.
RUNS = Path("runs/benchmarks")


def duration(seconds: float) -> str:
    """``seconds`` as a person reads it: 42 s, 3 min 5 s, 1 h 2 min."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    return f"{minutes // 60} h {minutes % 60} min"


def line(done: float, total: float, elapsed: float) -> str:
    """``elapsed`` so far and the time left, if ``done`` of ``total`` took ``elapsed``."""
    if done <= 0 or done >= total:
        return f"{duration(elapsed)} so far"
    left = elapsed * (total - done) / done
    return f"{duration(elapsed)} so far, about {duration(left)} left"


def board(text: str) -> str:
    """An argparse type: a board ``RxCxK`` by the command line's rule (``board_arg``), as its
    name (``3x3`` is ``3x3x3``), checked before any work."""
    from gym_tictactoe.cli.arguments import board_arg

    return board_arg(text).name


def tabled_board(text: str) -> str:
    """An argparse type: a board of at most 16 cells (one the solver tables), as its name."""
    from gym_tictactoe.cli.arguments import board_arg

    rules = board_arg(text)
    try:
        rules.check_solvable("this benchmark")
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return rules.name


def processes(text: str) -> int:
    """An argparse type: processes at once, from 1 to the CPUs here (more would only share
    them, each with its own memory)."""
    from gym_tictactoe.checks import check_int

    cpus = os.cpu_count() or 1
    try:
        return check_int(int(text), "processes at once", 1, cpus,
                         note=" (the CPUs here)")
    except ValueError as error:
        message = str(error) if "processes" in str(error) else f"expected an integer, got {text!r}"
        raise argparse.ArgumentTypeError(message) from None


def results_file(text: str) -> Path:
    """An argparse type: the path of a results file. A name ending in a slash means a folder:
    refused, so that ``--out D/`` is not written to a file called ``D``."""
    if not text or text.endswith(("/", os.sep)):
        raise argparse.ArgumentTypeError(f"expected the path of a results file, such as "
                                          f"{text or 'DIR/'}results.json; got {text!r}")
    return Path(text)


def writable(path: Path, program: str) -> Path:
    """``path`` once its folder exists and can be written, before any work is done; else one line
    on stderr and exit 2 (a typo in --out must not cost an hour of measurements)."""
    reason = None
    if path.is_dir():
        reason = "it is a folder"
    else:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            reason = error.strerror or str(error)
        else:
            if not os.access(path.parent, os.W_OK):
                reason = f"{path.parent} is not writable"
            elif path.is_symlink() or path.exists():
                reason = _not_replaceable(path)
    if reason:
        print(f"{program}: cannot write {path}: {reason}", file=sys.stderr)
        raise SystemExit(2)
    return path


def _not_replaceable(path: Path) -> str | None:
    """Why the atomic writer would refuse to replace ``path`` (a named pipe, a dangling link, a
    link to a folder...), or None."""
    from gym_tictactoe.files import replaceable

    try:
        replaceable(path)
    except (OSError, ValueError) as error:
        return str(error)
    return None


class Progress:
    """Counts finished units of ``total`` and prints a line with the time left after each (wall
    time per finished unit so far, times the units left: parallel workers are already in it)."""

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0
        self.start = time.perf_counter()

    def step(self, label: str) -> None:
        self.done += 1
        elapsed = time.perf_counter() - self.start
        print(f"[{self.done}/{self.total}] {label}; {line(self.done, self.total, elapsed)}",
              file=sys.stderr, flush=True)


def write_json(path: Path, data: Any, quiet: bool = False) -> None:
    """``data`` as JSON at ``path``, whole or not at all: a benchmark stopped while writing leaves
    the previous whole file."""
    from gym_tictactoe.files import atomic_path

    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as temp:
        temp.write_text(json.dumps(data, indent=2) + "\n")
    if not quiet:
        print(f"results written to {path}")


def seed_runs(seeds: Sequence[int], run_seed: Callable[[int, Path], dict[str, Any]], unit: str,
              save: Callable[[list[dict[str, Any]]], None]) -> list[dict[str, Any]]:
    """``run_seed(seed, folder)`` for each seed, in a temporary folder removed afterwards, with a
    progress line and ``save(runs so far)`` after each: a stopped benchmark keeps the seeds it
    finished. A run says ``perfect_at_UNIT`` (None: never) and ``train_seconds``."""
    progress, runs = Progress(len(seeds)), []
    for seed in seeds:
        with tempfile.TemporaryDirectory(prefix="seed_runs_") as temp:
            run = run_seed(seed, Path(temp))
        runs.append(run)
        save(runs)
        reached = run[f"perfect_at_{unit}"]
        progress.step(f"seed {seed}: " + (f"perfect at {reached:,} {unit}" if reached
                                          else "not perfect") + f", {run['train_seconds']} s")
    return runs


# What train.py --no-progress prints at each checkpoint, before and after it
# (gym_tictactoe.evaluation.report's checkpoint_message and checkpoint_result): passed on, so
# that a run of an hour shows how far it is; the rest of its output (the final table) is not.
CHECKPOINT_LINES = ("exact evaluation at ", "games at ", "  optimal-move rate ", "  score against ")


def train_results(program: str, command: list[str], folder: Path, what: str,
                  env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``python train.py ...`` (``command``) from the repository into ``folder`` and read
    the results.json of the one run it wrote; its checkpoint lines are passed on to stderr as
    they come; a failed run is one line naming ``what`` and train.py's last line (its error),
    and ends the benchmark."""
    root = Path(__file__).resolve().parents[1]
    last = "(no message)"
    # Unbuffered: its stdout and stderr share one pipe in the order written, the error last.
    env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen([sys.executable, *command], cwd=root, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=env) as child:
        assert child.stdout is not None  # stdout=PIPE
        for text in child.stdout:
            if text.strip():
                last = text.strip()
            if text.startswith(CHECKPOINT_LINES):
                print(f"  {what}: {text.rstrip()}", file=sys.stderr, flush=True)
    if child.returncode:
        raise SystemExit(f"{program}: train.py {what} failed (exit {child.returncode}): {last}")
    return json.loads(next(folder.glob("*/results.json")).read_text())
