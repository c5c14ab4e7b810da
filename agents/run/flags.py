"""Every flag of ``train.py`` (the console script ``gym-tictactoe-train``), in one parser: the
algorithm and its budget, the opponent, board, seat and seed, self-play, the training env, the
checkpoints, AlphaZero's Ray actors, the output, and the flags of one algorithm each in their
own groups (AlphaZero's settings, budget in minutes and ``--resume``; tabular Q's aimed starts
and annealing). Each value is checked as it is read (``gym_tictactoe.checks``, its one wording);
the checks across flags and the run configuration they make are ``agents.run.arguments``'.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents import EXPLORING_STARTS
from agents.run.config import (
    ALGOS,
    EPISODES,
    MIX_SHARE,
    POOL,
    REFRESH_EVERY,
    TIMESTEPS,
    UNSOLVED_OPPONENT,
)
from gym_tictactoe.checks import check_int, check_number
from gym_tictactoe.cli.arguments import (
    board_arg,
    opponent_spec,
    positive_int,
    probability,
    seed_arg,
)

PROG = "train.py"  # the name its usage and errors go by (the console script gives its own)
DESCRIPTION = ("Train an agent on TicTacToe-v0, prove how close to perfect it plays, and write "
               "the results.")
EPILOG = ("Each run writes a new folder OUT/NAME_N (N = 1, 2, ...: one more than the highest "
          "already there, as rl_zoo3 numbers its runs), whole or not at all; an earlier run is "
          "never overwritten. Exit codes: 0 done, 1 an optional dependency missing, 2 a usage "
          "error, 3 the run's files could not be written (a full disk, a folder that vanished): "
          "one line on stderr, nothing half-written left behind; 4 a Ray actor of --workers "
          "died (with its node): one line; 130 interrupted (Ctrl-C), 143 "
          "terminated (SIGTERM): one line, the run's temporary files removed. AlphaZero runs "
          "reserve their "
          "folder OUT/NAME_N when they start and save their whole training state there at "
          "each checkpoint (checkpoint.npz: network, optimizer, replay buffer, generators, "
          "games, training seconds, learning curve; replaced atomically), so a run that is "
          "killed or interrupted keeps its last checkpoint: a folder holding checkpoint.npz "
          "but no results.json is unfinished, and 'train.py --resume OUT/NAME_N' continues it "
          "exactly where that checkpoint was, ending in the same folder as if never "
          "interrupted. Resuming a finished run, with a larger --episodes or --minutes, "
          "continues it into a new folder OUT/NAME_N+1.")


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """Every flag of the command line, each value checked as it is read."""
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--algo", choices=ALGOS, default=None, help="the agent (default: q)")
    parser.add_argument("--timesteps", type=positive_int, default=None,
                        help=f"SB3 budget in agent timesteps (default: {TIMESTEPS})")
    parser.add_argument("--episodes", type=positive_int, default=None,
                        help=f"Q-learning budget in episodes, AlphaZero's in self-play games "
                             f"(default: {EPISODES})")
    parser.add_argument("--opponent", type=training_opponent, default=None,
                        help="'self' (self-play) or an opponent spec, e.g. 'minimax' or "
                             "'random+heuristic+minimax*2' (default: the algorithm's "
                             f"curriculum; past 16 cells {UNSOLVED_OPPONENT!r})")
    add_self_play_flags(parser)
    parser.add_argument("--board", type=board_arg, default=None, metavar="RxCxK",
                        help="rows x cols x win length, e.g. 4x4x3 or 15x15x5; boards of at "
                        "most 16 cells are evaluated exactly, bigger ones (SB3 only) by seeded "
                        "games (default: 3x3x3)")
    parser.add_argument("--seat", choices=("X", "O", "random"), default="random",
                        help="the agent's mark (default: random, drawn each episode)")
    parser.add_argument("--seed", type=seed_arg, default=None,
                        help="seed of everything, 0 <= seed < 2**32 (default: 0)")
    add_defaults_flags(parser)
    parser.add_argument("--n-envs", type=positive_int, default=None,
                        help="SB3: parallel envs (default: the algorithm's own; at most 65,536, "
                             "and PPO's rollout buffer at most 1 GiB); q: boards "
                             "trained at once by the batched learner (default: 64 on boards "
                             "of at most 12 cells, 4096 beyond; at most what fits 4 GiB "
                             "with the learner's arrays)")
    add_env_flags(parser)
    add_q_focus_flags(parser)
    parser.add_argument("--eval-every", type=positive_int, default=None,
                        help="checkpoint period: episodes for q (default 1000), timesteps for "
                             "SB3 (default 10000; 100000 on boards over 12 cells)")
    add_worker_flags(parser)
    add_output_flags(parser)
    add_alphazero_flags(parser)
    return parser


def add_defaults_flags(parser: argparse.ArgumentParser) -> None:
    """Where the flags left out come from, and --device."""
    parser.add_argument("--device", choices=DEVICES, default=None,
                        help="AlphaZero and SB3: where torch trains; auto: cuda where torch "
                             "finds a GPU (default: the hyperparameter file's, cpu)")
    parser.add_argument_group(
        "defaults", "a flag left out takes its value from the algorithm's hyperparameter file, "
        "agents/hyperparams/ALGO.yml: the board's entry, else the default one (whose values "
        "the flags' help shows); results.json records every value used")


def add_env_flags(parser: argparse.ArgumentParser) -> None:
    """What the training env shows the agent and where its episodes begin."""
    parser.add_argument("--canonical", action=argparse.BooleanOptionalAction, default=None,
                        help="SB3: the network sees each board canonically oriented (default: on)")
    parser.add_argument("--start", choices=("empty", "random"), default=None,
                        help="where training episodes begin; 'random' (exploring starts, the "
                             "default) draws a position for --start-probability of them")
    parser.add_argument("--start-probability", type=probability, default=None, metavar="P",
                        help="share of episodes with a random start (default: "
                             f"{EXPLORING_STARTS['start_probability']})")


def add_worker_flags(parser: argparse.ArgumentParser) -> None:
    """AlphaZero's self-play in Ray actors (the `distributed` extra)."""
    workers = parser.add_argument_group("self-play in Ray actors (--algo alphazero)")
    workers.add_argument("--workers", type=positive_int, default=None, metavar="N",
                         help="play the self-play games in N Ray actors, one CPU each, on a "
                              "local Ray (at most one per CPU here) unless --ray-address, "
                              "--games-per-round games and --steps-per-round steps per actor "
                              "a round, learning while the actors play the next round "
                              "(default: in this process)")
    workers.add_argument("--ray-address", default=None, metavar="ADDR",
                         help="the Ray cluster of the actors: its head's HOST:PORT, or auto "
                              "on one of its nodes (default: a new local Ray)")


def add_output_flags(parser: argparse.ArgumentParser) -> None:
    """The final games, the run folder and the progress bar."""
    parser.add_argument("--games", type=positive_int, default=200,
                        help="final games per opponent and seat (default: 200)")
    parser.add_argument("--out", type=Path, default=None, help="output root (runs)")
    parser.add_argument("--name", default=None, help="run folder name before its number _N "
                        "(default: ALGO[-BOARD][-self-play]-seedSEED)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def add_self_play_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of --opponent self, in their own group of the help."""
    self_play = parser.add_argument_group("self-play (--opponent self)")
    self_play.add_argument("--pool", type=positive_int, default=None,
                           help=f"snapshots of the agent played against (default: {POOL})")
    self_play.add_argument("--refresh-every", type=positive_int, default=None,
                           help="episodes (q) or timesteps (SB3) between snapshots (default: "
                                f"{REFRESH_EVERY['q']} or {REFRESH_EVERY['sb3']})")
    self_play.add_argument("--snapshot", action="append", type=Path, default=None,
                           metavar="MODEL", help="a saved model (train.py's model.npz or "
                           "model.zip, same board) to start the pool with; repeatable")
    self_play.add_argument("--mix", type=opponent_spec, default=None,
                           help="a built-in opponent played in --mix-share of the episodes")
    self_play.add_argument("--mix-share", type=probability, default=None, metavar="P",
                           help=f"share of the episodes against --mix (default: {MIX_SHARE})")


def training_opponent(text: str) -> str:
    """An argparse type: ``self`` (self-play) or an opponent spec."""
    return "self" if text.strip() == "self" else opponent_spec(text)


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
    group.add_argument("--threats", action=argparse.BooleanOptionalAction, default=None,
                       help="the self-play search reads the immediate threats: a win played "
                            "at once, a lone threat the only move searched, positions they "
                            "decide scored exactly (default: off)")
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
    ("--learning-rate-end", float, 0.0, "anneal the learning rate geometrically to this, in "
     "(0, 1], over the budget (--minutes or --episodes, whichever ends first; default: fixed)"),
    ("--weight-decay", float, None, "AdamW weight decay, in [0, 1] (default: 0.0001)"),
    ("--channels", int, 0, "network width (default: 32)"),
    ("--blocks", int, None, "residual blocks, >= 0 (default: 2)"),
)
ALPHAZERO_FLAGS_NAMES = tuple(flag for flag, *_ in ALPHAZERO_FLAGS)
ALPHAZERO_ONLY = (*(flag for flag, *_ in ALPHAZERO_FLAGS), "--target", "--threats", "--minutes",
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


def dest(flag: str) -> str:
    """The attribute argparse stores ``flag`` in."""
    return flag[2:].replace("-", "_")


# The steering at each exact checkpoint (agents.tabular.focus): the aimed starts for tabular Q and
# AlphaZero, the rest for tabular Q only; refused for the other algorithms.
AIM_FLAGS = ("--focus-share", "--back-share")
Q_FOCUS_FLAGS = (*AIM_FLAGS, "--forget", "--alpha-end", "--alpha-episodes")


def add_q_focus_flags(parser: argparse.ArgumentParser) -> None:
    """Starts aimed at the positions still played wrong and the learning-rate floor annealed,
    in their own group of the help (``agents.tabular.focus``; off by default)."""
    from agents.tabular.focus import ALPHA_EPISODES
    from agents.tabular.q_learning import QLearningConfig

    group = parser.add_argument_group(
        "aimed starts (--algo q and alphazero) and annealing (--algo q only)", "at each exact "
        "checkpoint; off by default except on 4x4x3 and 4x4x4, where agents/hyperparams/q.yml "
        "and alphazero.yml hold the settings that reached perfect play")
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


DEVICES = ("cpu", "cuda", "auto")
