"""The command line that trains an agent on TicTacToe-v0, proves how close to perfect it plays
and writes the results: ``python train.py`` in a checkout, ``gym-tictactoe-train`` once the
package is installed (the same :func:`main`).

    python train.py                                   # tabular Q-learning until perfect play
    python train.py --algo dqn                        # DQN until perfect play (or 300k timesteps)
    python train.py --opponent self                   # tabular self-play

Writes a new run folder ``<out>/<name>_<N>`` (N = 1, 2, ... as rl_zoo3 numbers runs: never over
an earlier run) holding ``model.npz`` (Q-table) or ``model.zip`` (SB3), ``results.json`` and
``learning_curve.png``; the folder appears whole when the run ends, or not at all (AlphaZero's
holds its ``checkpoint.npz`` from its first checkpoint on: ``--resume`` continues it). Every
argument is checked before anything is trained or created (``agents.run.flags``, every flag;
``agents.run.arguments``, the checks across them). The run itself is ``agents.run.training``.
"""

from __future__ import annotations

import sys

from agents.run.arguments import parse_args
from agents.run.config import RunConfig
from agents.run.flags import PROG
from agents.run.folder import STATE, OutputError, RunFolder
from agents.run.signals import Terminated, sigterm_raises
from gym_tictactoe.extras import MissingExtra, require

__all__ = ["main", "parse_args", "script"]

# Exit codes: 0 done, 1 an optional dependency missing, 2 a usage error (or a --snapshot that is
# no model of ours), 3 the run's files could not be written (a full disk...): nothing was kept;
# 4 a Ray actor of --workers died (with its node): the last checkpoint is kept;
# 130 and 143 (as a shell reports 128 + the signal): interrupted (Ctrl-C) or terminated.
EXIT_MISSING, EXIT_USAGE, EXIT_OUTPUT, EXIT_LOST = 1, 2, 3, 4
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143


def check_extras(config: RunConfig) -> None:
    """MissingExtra, before any work, when the run needs a package that is not installed."""
    if config.algo == "q":
        if config.progress:
            require("tqdm", "train", "the progress bar (hide it with --no-progress)")
        return
    for module in ("torch", "stable_baselines3", "sb3_contrib"):
        require(module, "sb3", f"--algo {config.algo}")
    if config.progress:  # SB3's progress bar
        for module in ("tqdm", "rich"):
            require(module, "sb3", "the progress bar (hide it with --no-progress)")


def connect_workers(config: RunConfig) -> None:
    """With --workers, Ray started or reached before any work: MissingExtra without it,
    ConnectionError (within seconds) for an --ray-address where no cluster answers."""
    if config.workers is not None:
        from agents.alphazero.workers import connect

        connect(config.ray_address, config.workers)


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """Run the command line with ``argv`` (default: the process's), its usage and errors under
    the name ``prog``; returns the exit code (module comment above)."""
    with sigterm_raises():
        try:
            return _main(argv, prog)
        except (KeyboardInterrupt, Terminated) as stop:
            return stopped(stop)


def script() -> int:
    """The console script ``gym-tictactoe-train``: :func:`main` under that name."""
    return main(prog="gym-tictactoe-train")


def stopped(stop: BaseException, folder: RunFolder | None = None) -> int:
    """Say in one line that the run was interrupted or terminated (and where its last
    checkpoint is kept, if one is); the exit code."""
    said = "Terminated" if isinstance(stop, Terminated) else "Interrupted"
    print(f"\n{said}{resumable(folder)}.", file=sys.stderr)
    return EXIT_TERMINATED if isinstance(stop, Terminated) else EXIT_INTERRUPTED


def resumable(folder: RunFolder | None) -> str:
    """Where the run's last checkpoint is kept and how to continue it, if it has one."""
    final = None if folder is None else folder.final
    if final is not None and (final / STATE).is_file():
        return f": {final} keeps its last checkpoint; train.py --resume {final} continues the run"
    return ""


def _main(argv: list[str] | None, prog: str) -> int:
    from agents.run.training import run, snapshot_pool

    config = parse_args(argv, prog)
    try:
        check_extras(config)
        connect_workers(config)
        pool = snapshot_pool(config)
        if config.resume is not None and not (config.resume / "results.json").exists():
            folder = RunFolder.reopen(config.resume)  # the unfinished run ends in its folder
        else:
            assert config.name is not None  # RunConfig.__post_init__ named the run
            folder = RunFolder.create(config.out, config.name)
    except (MissingExtra, OSError, OutputError, ValueError) as error:
        # ValueError, FileNotFoundError: a --snapshot file; OSError: an --out where no folder
        # can be made; OutputError: a full disk there; ConnectionError, ValueError: an
        # --ray-address where no cluster answers, or one too small for --workers.
        print(f"{prog}: error: {error}", file=sys.stderr)
        return exit_code(error)
    try:
        run(config, folder, pool)
    except OutputError as error:  # a failure while training keeps its traceback: a bug
        print(f"{prog}: error: {error}", file=sys.stderr)
        return EXIT_OUTPUT
    except (KeyboardInterrupt, Terminated) as stop:
        return stopped(stop, folder)
    except ConnectionError as error:  # Ray actors lost with their node (workers.WorkerLost)
        print(f"{prog}: error: {error}{resumable(folder)}", file=sys.stderr)
        return EXIT_LOST
    return 0


def exit_code(error: Exception) -> int:
    """1 for a missing extra, 3 for a full disk, 2 for the rest (the command as given)."""
    if isinstance(error, MissingExtra):
        return EXIT_MISSING
    return EXIT_OUTPUT if isinstance(error, OutputError) else EXIT_USAGE

