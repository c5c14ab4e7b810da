"""``train.py``'s AlphaZero flags, in their own group: its settings (``AlphaZeroSettings``), a
budget and checkpoint period in minutes of training time, and ``--resume RUN``, which fills the
flags from the run it continues and refuses those that contradict it. Each is refused for the
other algorithms; each value is checked by ``gym_tictactoe.checks`` (its one wording), the upper
bounds by the settings themselves when ``train.py`` builds them, with the memory they imply
(``agents.limits``; SB3's --n-envs too: :func:`check_limits`). Tabular Q's steering flags
(``--focus-share``, ``--back-share``, ``--forget``, ``--alpha-end``, ``--alpha-episodes``:
``agents.q_focus``) are here too, refused for the other algorithms.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.limits import MAX_BUFFER_BYTES, MAX_N_ENVS, check_bytes, sb3_transition_bytes
from gym_tictactoe import game
from gym_tictactoe.checks import check_int, check_number

if TYPE_CHECKING:
    from agents.run_config import RunConfig


def add_alphazero_flags(parser: argparse.ArgumentParser) -> None:
    """AlphaZero's settings, budget in minutes, checkpoints in minutes and --resume, in their
    own group of the help (``agents.alphazero.training.AlphaZeroSettings``)."""
    group = parser.add_argument_group(
        "AlphaZero (--algo alphazero only)", "its settings (default: the board's entry in "
        "agents/hyperparams/alphazero.yml, shown in results.json); refused for the other "
        "algorithms")
    for flag, kind, low, text in ALPHAZERO_FLAGS:
        group.add_argument(flag, type=checked(kind, low), default=None, metavar="N" if kind is
                           int else "X", help=text)
    group.add_argument("--target", choices=("completed_q", "visits"), default=None,
                       help="the policy target: Gumbel MuZero's completed values or "
                            "AlphaZero's visit counts (default: completed_q)")
    group.add_argument("--minutes", type=checked(float, 0.0), default=None, help="training "
                       "time budget in minutes, checkpoints not counted (with --episodes: "
                       "whichever comes first; alone: no limit on games)")
    group.add_argument("--eval-minutes", type=checked(float, 0.0), default=None, metavar="M",
                       help="checkpoint every M minutes of training time (instead of every "
                            "--eval-every games, unless that is given too)")
    group.add_argument("--resume", type=Path, default=None, metavar="RUN",
                       help="continue the run in folder RUN from its checkpoint.npz (see "
                            "below); its settings apply, --episodes and --minutes are the "
                            "total budget; a finished run may go on at a new --learning-rate")


# flag, type, lowest value (excluded), help; the settings check their upper bounds.
ALPHAZERO_FLAGS = (
    ("--simulations", int, 0, "search simulations per self-play move (default: 32)"),
    ("--c-puct", float, 0.0, "PUCT exploration constant (default: 1.5)"),
    ("--dirichlet-alpha", float, 0.0, "Dirichlet noise alpha at the root (default: 1.0; "
     "AlphaZero used about 10 / average legal moves)"),
    ("--noise-fraction", float, None, "share of the noise in the root's priors, in [0, 1] "
     "(default: 0.25)"),
    ("--temperature", float, None, "move temperature of the opening moves, >= 0 (0: the most "
     "visited move; default: 1.0)"),
    ("--temperature-moves", int, None, "moves of each game played at --temperature, then the "
     "most visited (default: 4)"),
    ("--games-per-round", int, 0, "self-play games per round, searched at once (default: 64; "
     "their search trees and samples at most 4 GiB on the board)"),
    ("--steps-per-round", int, 0, "gradient steps after each round (default: 16)"),
    ("--batch-size", int, 0, "samples per gradient step (default: 128; the network's "
     "activations at most 4 GiB on the board)"),
    ("--buffer-size", int, 0, "replay buffer samples (default: 20000; at most 1 GiB of them "
     "on the board)"),
    ("--learning-rate", float, 0.0, "AdamW learning rate, in (0, 1] (default: 0.002)"),
    ("--weight-decay", float, None, "AdamW weight decay, in [0, 1] (default: 0.0001)"),
    ("--channels", int, 0, "network width (default: 32)"),
    ("--blocks", int, None, "residual blocks, >= 0 (default: 2)"),
)
ALPHAZERO_FLAGS_NAMES = tuple(flag for flag, *_ in ALPHAZERO_FLAGS)
ALPHAZERO_ONLY = (*(flag for flag, *_ in ALPHAZERO_FLAGS), "--target", "--minutes",
                  "--eval-minutes", "--resume")


def checked(kind: type, low: float | None, high: float | None = None) -> Callable[[str], Any]:
    """An argparse type: an integer or a number above ``low`` (at least 0 when None) and at
    most ``high``, checked by ``gym_tictactoe.checks`` (its one wording); without ``high`` its
    upper bound is the setting's own."""
    check: Callable[..., Any] = check_int if kind is int else check_number  # by kind, below

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = text  # the checker says what was expected and quotes what was given
        try:
            if kind is int:
                return check(value, "value", 0 if low is None else low + 1, high)
            return check(value, "value", 0.0 if low is None else low, high,
                         low_open=low is not None)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parse.__name__ = kind.__name__
    return parse


def check_alphazero_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """AlphaZero's flags with another algorithm are a usage error."""
    if args.algo != "alphazero":
        given = [flag for flag in ALPHAZERO_ONLY if getattr(args, _dest(flag)) is not None]
        if given:
            parser.error(f"{given[0]} applies to --algo alphazero only")


def _dest(flag: str) -> str:
    return flag[2:].replace("-", "_")


def alphazero_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The AlphaZero settings given, by field name (``RunConfig.alphazero``)."""
    names = (_dest(flag) for flag in (*ALPHAZERO_FLAGS_NAMES, "--target"))
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def resume_from(args: argparse.Namespace) -> None:
    """Fill ``args`` from the run ``args.resume`` continues: a ValueError of one line when it is
    no such run, or a flag given contradicts it (--board, --seed or a setting that differs;
    --out, --name, --start and --start-probability, which it keeps)."""
    from agents.alphazero.run import flat_settings
    from agents.alphazero.state import STATE_FILE, load_state

    run = args.resume = _run_folder(args.resume, STATE_FILE)
    saved = load_state(run / STATE_FILE)
    flat, kept = flat_settings(saved.trainer.settings), saved.run
    args.algo = "alphazero"  # another --algo was refused: AlphaZero's flags are its own
    fixed = {"--board": saved.trainer.rules, "--seed": kept["seed"],
             **{flag: flat[_dest(flag)] for flag in (*ALPHAZERO_FLAGS_NAMES, "--target")}}
    # A finished run may go on at another learning rate (a step of a decay schedule, in a
    # new run folder); a run cut short continues exactly as it began.
    finished = (run / "results.json").exists()
    for flag, value in fixed.items():
        given = getattr(args, _dest(flag))
        if given is not None and given != value:
            if flag == "--learning-rate" and finished:
                continue
            later = (" (a new --learning-rate applies when continuing a finished run)"
                     if flag == "--learning-rate" else "")
            raise ValueError(f"{flag} {_shown(given)} conflicts with the run in {run}, whose "
                             f"{flag[2:]} is {_shown(value)}: leave it out (a resumed run "
                             f"keeps its settings){later}")
        setattr(args, _dest(flag), value if flag in ("--board", "--seed") else None)
    for flag in ("--out", "--name", "--start", "--start-probability"):
        if getattr(args, _dest(flag)) is not None:
            raise ValueError(f"{flag} does not apply with --resume: the run keeps its own")
    for name in ("episodes", "minutes", "eval_every", "eval_minutes"):
        if getattr(args, name) is None:
            setattr(args, name, kept[name])
    args.out, args.name = run.resolve().parent, run.resolve().name.rpartition("_")[0]
    _check_finished(args, run, saved)


def _shown(value: Any) -> str:
    return value.name if isinstance(value, game.Rules) else str(value)


def _run_folder(run: Path, state_file: str) -> Path:
    """The run folder ``run`` names (its state file's path names it too), else a ValueError."""
    from agents.run_folder import LOCK
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


def check_limits(config: RunConfig) -> None:
    """AlphaZero's settings (each one's bounds and the memory they imply on the board) and its
    actors on a local Ray, SB3's --n-envs: a ValueError of one line before anything runs."""
    if config.kind == "alphazero":
        from agents.alphazero.run import settings_of
        from agents.alphazero.workers import check_workers

        settings_of(config)
        if config.workers is not None:
            check_workers(config.workers, config.ray_address)
    check_sb3_envs(config)


def check_sb3_envs(config: RunConfig) -> None:
    """--n-envs of an SB3 algorithm as the model loader accepts it (``agents.limits``): at most
    ``MAX_N_ENVS`` envs and, for PPO, a rollout buffer of ``n_steps`` transitions of each within
    ``MAX_BUFFER_BYTES`` on the run's board. A ValueError of one line, before anything is
    built."""
    if config.kind != "sb3" or config.n_envs is None:
        return
    check_int(config.n_envs, "--n-envs", 1, MAX_N_ENVS, note=" (SB3's envs stepped together)")
    if config.algo == "dqn":  # its replay buffer has a length of its own, within the limit
        return
    try:
        from agents.sb3 import HYPERPARAMETERS
    except ImportError:  # train.py names the extra to install next
        return
    steps, board = HYPERPARAMETERS[config.algo]["n_steps"], config.board
    check_bytes("--n-envs", config.n_envs, steps * sb3_transition_bytes(config.algo,
                board.n_cells), MAX_BUFFER_BYTES, board.name,
                f"the rollout buffer of {steps} transitions an env")


# Tabular Q's steering at each checkpoint (agents.q_focus), refused for the other algorithms.
Q_FOCUS_FLAGS = ("--focus-share", "--back-share", "--forget", "--alpha-end", "--alpha-episodes")


def add_q_focus_flags(parser: argparse.ArgumentParser) -> None:
    """Starts aimed at the positions still played wrong and the learning-rate floor annealed,
    in their own group of the help (``agents.q_focus``; off by default)."""
    from agents.q_focus import ALPHA_EPISODES
    from agents.q_learning import QLearningConfig
    from gym_tictactoe.cli.arguments import positive_int, probability

    group = parser.add_argument_group(
        "aimed starts and annealing (--algo q only)", "at each exact checkpoint (every "
        "--eval-every episodes); off by default except on 4x4x3 and 4x4x4, where "
        "agents/hyperparams/q.yml holds the settings that reached perfect play")
    group.add_argument("--focus-share", type=probability, default=None, metavar="P",
                       help="share of the random starts spread over the positions the "
                            "checkpoint found played wrong (the rest stays uniform)")
    group.add_argument("--back-share", type=probability, default=None, metavar="P",
                       help="share of the random starts on those positions' predecessors "
                            "(two plies before, the same side to move)")
    group.add_argument("--forget", action=argparse.BooleanOptionalAction, default=None,
                       help="zero the visit counts of the positions played wrong, so that "
                            "they learn at 1/n again (with --focus-share or --back-share)")
    group.add_argument("--alpha-end", type=checked(float, 0.0, 1.0), default=None,
                       metavar="X", help="anneal the learning-rate floor geometrically from "
                       f"{QLearningConfig.alpha} to X, in (0, 1], at each checkpoint (default: "
                       "fixed)")
    group.add_argument("--alpha-episodes", type=positive_int, default=None, metavar="N",
                       help=f"over N episodes, X after them (default: {ALPHA_EPISODES:,})")


def check_q_focus_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The steering flags with another algorithm, shares over 1 or a flag without the one it
    modifies are a usage error."""
    given = [flag for flag in Q_FOCUS_FLAGS if getattr(args, _dest(flag)) is not None]
    if given and args.algo != "q":
        parser.error(f"{given[0]} applies to --algo q only (tabular starts and learning rate)")
    shares = (args.focus_share or 0.0) + (args.back_share or 0.0)
    if shares > 1:
        parser.error(f"--focus-share + --back-share must be at most 1 (the rest of the random "
                     f"starts stays uniform); got {shares:g} (a flag left out takes "
                     f"agents/hyperparams/q.yml's value for {args.board.name})")
    if shares and args.start == "empty":
        parser.error("--focus-share and --back-share aim the random starts: they need --start "
                     "random (the default)")
    if args.forget and not shares:
        parser.error("--forget needs --focus-share or --back-share above 0: it resets the "
                     "positions the checkpoint aims the starts at")
    if args.alpha_episodes is not None and args.alpha_end is None:
        parser.error("--alpha-episodes needs --alpha-end, the learning-rate floor it anneals to")


def q_focus_of(args: argparse.Namespace) -> Any:
    """The ``agents.q_focus.Focus`` the flags describe, defaults filled in (None when it
    steers nothing: uniform starts and a fixed learning-rate floor)."""
    from agents.q_focus import ALPHA_EPISODES, Focus

    focus = Focus(share=args.focus_share or 0.0, back_share=args.back_share or 0.0,
                  forget=bool(args.forget), alpha_end=args.alpha_end,
                  alpha_episodes=args.alpha_episodes or ALPHA_EPISODES)
    return focus if focus.aims or focus.alpha_end is not None else None


DEVICES = ("cpu", "cuda", "auto")


def check_device_flag(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--device applies to the algorithms that run torch (AlphaZero and SB3's)."""
    if args.device is not None and args.algo == "q":
        parser.error("--device applies to --algo alphazero and the SB3 algorithms only "
                     "(tabular Q-learning runs on NumPy)")


def resolve_device(device: str | None, cuda: Callable[[], bool] | None = None) -> str:
    """``cpu`` or ``cuda`` for --device (None: cpu; auto: cuda where torch finds a GPU); a
    ValueError of one line for cuda where there is none. ``cuda`` says whether there is one
    (default: ``torch.cuda.is_available``, torch imported only for cuda or auto)."""
    if device in (None, "cpu"):
        return "cpu"
    if cuda is None:
        try:
            import torch
        except ImportError:  # train.py names the extra to install once the flags are checked
            return "cpu" if device == "auto" else "cuda"
        cuda = torch.cuda.is_available
    if cuda():
        return "cuda"
    if device == "cuda":
        raise ValueError("--device cuda: torch finds no CUDA GPU on this machine "
                         "(torch.cuda.is_available() is False); use --device cpu or auto")
    return "cpu"
