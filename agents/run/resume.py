"""``train.py --resume RUN``: fill the flags from the AlphaZero run it continues (its
``checkpoint.npz``), refusing those that contradict it, and check that there is something to
continue: a ValueError of one line otherwise, which the command line reports as a usage error.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
from pathlib import Path
from typing import Any

from agents.run.flags import ALPHAZERO_FLAGS_NAMES, dest
from gym_tictactoe import game


def resume_from(args: argparse.Namespace) -> None:
    """Fill ``args`` from the run ``args.resume`` continues: a ValueError of one line when it is
    no such run, or a flag given contradicts it (--board, --seed or a setting that differs;
    --out, --name, --start and --start-probability, which it keeps)."""
    from agents.alphazero.state import STATE_FILE, load_state
    from agents.run.alphazero import flat_settings

    run = args.resume = _run_folder(args.resume, STATE_FILE)
    saved = load_state(run / STATE_FILE)
    flat, kept = flat_settings(saved.trainer.settings), saved.run
    args.algo = "alphazero"  # another --algo was refused: AlphaZero's flags are its own
    fixed = {"--board": saved.trainer.rules, "--seed": kept["seed"],
             **{flag: flat[dest(flag)] for flag in (*ALPHAZERO_FLAGS_NAMES, "--target")}}
    # A finished run may go on at another learning rate (a step of a decay schedule, in a
    # new run folder); a run cut short continues exactly as it began.
    finished = (run / "results.json").exists()
    for flag, value in fixed.items():
        given = getattr(args, dest(flag))
        if given is not None and given != value:
            if flag == "--learning-rate" and finished:
                continue
            later = (" (a new --learning-rate applies when continuing a finished run)"
                     if flag == "--learning-rate" else "")
            raise ValueError(f"{flag} {_shown(given)} conflicts with the run in {run}, whose "
                             f"{flag[2:]} is {_shown(value)}: leave it out (a resumed run "
                             f"keeps its settings){later}")
        setattr(args, dest(flag), value if flag in ("--board", "--seed") else None)
    for flag in ("--out", "--name", "--start", "--start-probability"):
        if getattr(args, dest(flag)) is not None:
            raise ValueError(f"{flag} does not apply with --resume: the run keeps its own")
    for name in ("episodes", "minutes", "eval_every", "eval_minutes"):
        if getattr(args, name) is None:
            setattr(args, name, kept[name])
    _keep_aim(args, run, kept)
    args.out, args.name = run.resolve().parent, run.resolve().name.rpartition("_")[0]
    _check_finished(args, run, saved)


def _keep_aim(args: argparse.Namespace, run: Path, kept: dict[str, Any]) -> None:
    """The run's aimed-start shares on ``args`` (states from before them: none); a different
    one given is a ValueError."""
    for name in ("focus_share", "back_share"):
        given, value = getattr(args, name), kept.get(name, 0.0)
        if given is not None and given != value:
            raise ValueError(f"--{name.replace('_', '-')} {given} conflicts with the run in "
                             f"{run}, whose {name} is {value}: leave it out (a resumed run "
                             "keeps its settings)")
        setattr(args, name, value)


def _shown(value: Any) -> str:
    return value.name if isinstance(value, game.Rules) else str(value)


def _run_folder(run: Path, state_file: str) -> Path:
    """The run folder ``run`` names (its state file's path names it too), else a ValueError."""
    from agents.run.folder import LOCK
    from gym_tictactoe.files import kind

    if run.name == state_file and run.is_file():
        run = run.parent
    try:
        mode = os.lstat(run / state_file).st_mode
    except (FileNotFoundError, NotADirectoryError):
        if (run / LOCK).is_file():  # reserved by a run that was killed before it saved one
            raise ValueError(f"--resume {run}: no {state_file} there: its run was stopped "
                             "before its first checkpoint, so nothing can be resumed (the "
                             "next run of the same name in its folder removes it)") from None
        raise ValueError(f"--resume {run}: no {state_file} there, so not the run folder of a "
                         "train.py --algo alphazero run (it saves one at each checkpoint)"
                         ) from None
    if not stat.S_ISREG(mode):  # a link too: the checkpoints would be written through it
        what = "a symbolic link" if stat.S_ISLNK(mode) else kind(mode)
        raise ValueError(f"--resume {run}: its {state_file} is {what}, not a regular file: "
                         "train.py saves a regular file there at each checkpoint")
    if not re.fullmatch(r".+_[0-9]+", run.resolve().name):
        raise ValueError(f"--resume {run}: a run folder is named NAME_N (N = 1, 2...), as "
                         "train.py made it")
    return run


def _check_finished(args: argparse.Namespace, run: Path, saved: Any) -> None:
    """A finished run continues into a new folder, and only with a larger budget."""
    if not (run / "results.json").exists():
        return
    games, seconds = saved.trainer.games, saved.trainer.seconds
    if (args.episodes is None or games >= args.episodes) and (
            args.minutes is None or seconds >= 60 * args.minutes):
        raise ValueError(f"--resume {run}: that run is finished ({games:,} games, "
                         f"{seconds / 60:.1f} minutes of training): give a larger --episodes "
                         "or --minutes to continue it (into a new run folder)")
