"""Train an agent on TicTacToe-v0, prove how close to perfect it plays, and write the results.

    python train.py                                   # tabular Q-learning until perfect play
    python train.py --algo dqn                        # DQN until perfect play (or 300k timesteps)
    python train.py --opponent self                   # tabular self-play

Writes a new run folder ``<out>/<name>_<N>`` (N = 1, 2, ... as rl_zoo3 numbers runs: never over
an earlier run) holding ``model.npz`` (Q-table) or ``model.zip`` (SB3), ``results.json`` and
``learning_curve.png``; the folder appears whole when the run ends, or not at all (AlphaZero's
holds its ``checkpoint.npz`` from its first checkpoint on: ``--resume`` continues it). Every
argument is checked before anything is trained or created. The run itself is ``agents.run``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agents import EXPLORING_STARTS, hyperparams
from agents.run_arguments import (
    DEVICES,
    add_alphazero_flags,
    add_q_focus_flags,
    alphazero_settings,
    check_alphazero_flags,
    check_device_flag,
    check_limits,
    check_q_focus_flags,
    q_focus_of,
    resolve_device,
    resume_from,
)
from agents.run_config import (
    ALGOS,
    EPISODES,
    MIX_SHARE,
    POOL,
    REFRESH_EVERY,
    TIMESTEPS,
    UNSOLVED_OPPONENT,
    RunConfig,
    SelfPlay,
    check_out,
)
from agents.run_folder import STATE, OutputError, RunFolder, check_stem
from agents.run_signals import Terminated, sigterm_raises
from gym_tictactoe import game
from gym_tictactoe.cli.arguments import (
    board_arg,
    opponent_spec,
    positive_int,
    probability,
    seed_arg,
)
from gym_tictactoe.extras import MissingExtra, require
from gym_tictactoe.players.opponents import parse_opponent

# Exit codes: 0 done, 1 an optional dependency missing, 2 a usage error (or a --snapshot that is
# no model of ours), 3 the run's files could not be written (a full disk...): nothing was kept;
# 130 and 143 (as a shell reports 128 + the signal): interrupted (Ctrl-C) or terminated.
EXIT_MISSING, EXIT_USAGE, EXIT_OUTPUT = 1, 2, 3
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143
EPILOG = ("Each run writes a new folder OUT/NAME_N (N = 1, 2, ...: one more than the highest "
          "already there, as rl_zoo3 numbers its runs), whole or not at all; an earlier run is "
          "never overwritten. Exit codes: 0 done, 1 an optional dependency missing, 2 a usage "
          "error, 3 the run's files could not be written (a full disk, a folder that vanished): "
          "one line on stderr, nothing half-written left behind; 130 interrupted (Ctrl-C), 143 "
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=EPILOG)
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
                              "local Ray (at most one per CPU here) unless --ray-address "
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


def check_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A flag of the other kind of algorithm, or of self-play without it, is a usage error."""
    sb3_only: tuple[str, ...] = ("--timesteps", "--n-envs", "--canonical")
    if args.algo == "alphazero" and args.opponent is not None:
        parser.error("--opponent does not apply to --algo alphazero: it learns from its own "
                     "self-play games only")
    if args.algo == "q":  # --n-envs: the batched learner's boards
        sb3_only = ("--timesteps", "--canonical")
    for flag in sb3_only if args.algo in ("q", "alphazero") else ("--episodes",):
        if getattr(args, flag.strip("-").replace("-", "_")) is not None:
            parser.error(f"{flag} does not apply to --algo {args.algo}: Q-learning and "
                         "AlphaZero count --episodes (Q-learning sees every symmetry of a "
                         "position as one entry), the SB3 algorithms --timesteps on --n-envs "
                         "boards with --canonical")
    if args.workers is not None and args.algo != "alphazero":
        parser.error(f"--workers does not apply to --algo {args.algo}: only AlphaZero's "
                     "self-play runs in Ray actors")
    if args.ray_address is not None and args.workers is None:
        parser.error("--ray-address needs --workers, the number of Ray actors to start there")
    if args.start == "empty" and args.start_probability is not None:
        parser.error("--start-probability applies to --start random only")
    flags = ("--pool", "--refresh-every", "--snapshot", "--mix", "--mix-share")
    given = [flag for flag in flags if getattr(args, flag[2:].replace("-", "_")) is not None]
    if args.opponent != "self" and given:
        parser.error(f"{given[0]} applies to self-play only (--opponent self)")
    if args.mix is None and args.mix_share is not None:
        parser.error("--mix-share needs --mix, the opponent played in that share")
    if args.mix_share is not None and not 0 < args.mix_share < 1:
        parser.error(f"--mix-share must be strictly between 0 and 1; got {args.mix_share}")


def self_play_of(args: argparse.Namespace) -> SelfPlay | None:
    """The self-play settings, defaults filled in (None without --opponent self)."""
    if args.opponent != "self":
        return None
    refresh = args.refresh_every or REFRESH_EVERY["q" if args.algo == "q" else "sb3"]
    share = None if args.mix is None else args.mix_share or MIX_SHARE
    return SelfPlay(args.pool or POOL, refresh, tuple(args.snapshot or ()), args.mix, share)


def config_of(args: argparse.Namespace, device: str = "cpu",
              recorded: dict[str, Any] | None = None) -> RunConfig:
    """The frozen run configuration the checked flags describe (``device`` resolved,
    ``recorded``: the hyperparameter file's values as results.json records them)."""
    settings = alphazero_settings(args)
    unlimited = args.algo == "alphazero" and args.minutes is not None
    return RunConfig(
        algo=args.algo, board=args.board, seed=args.seed, seat=args.seat,
        opponent=args.opponent,
        episodes=args.episodes or (None if unlimited else EPISODES), alphazero=settings,
        minutes=args.minutes, eval_minutes=args.eval_minutes, resume=args.resume,
        timesteps=args.timesteps or TIMESTEPS, n_envs=args.n_envs, canonical=args.canonical,
        start=args.start, start_probability=args.start_probability,
        eval_every=args.eval_every, games=args.games, out=args.out, name=args.name,
        progress=not args.no_progress, self_play=self_play_of(args), q_focus=q_focus_of(args),
        workers=args.workers, ray_address=args.ray_address, device=device,
        hyperparams=recorded)


def parse_args(argv: list[str] | None = None) -> RunConfig:
    """The run configuration, checked: a flag of the other kind of algorithm, a bad opponent
    spec, a board Q-learning cannot tabulate or an unusable --out or --name is a usage error
    (exit 2), never a traceback later."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.algo is not None:  # --algo q --resume RUN: the flag's own error, not the run's
        check_alphazero_flags(parser, args)
    if args.resume is not None:
        try:
            resume_from(args)
        except ValueError as error:
            parser.error(str(error))
    defaults = {"algo": "q", "board": game.TICTACTOE, "seed": 0, "out": Path("runs")}
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    opponent = args.opponent  # the file's is a spec checked when read, on any board
    device, recorded = fill_defaults(parser, args)
    check_flags(parser, args)
    check_alphazero_flags(parser, args)
    check_q_focus_flags(parser, args)
    config = config_of(args, device, recorded)
    try:
        check_limits(config)
        if config.kind == "q":
            check_q_board(config.board)
            check_q_batch(config)
        mix = config.self_play.mix if config.self_play else None
        parse_opponent(mix or ("random" if opponent in (None, "self") else opponent),
                       config.board)
        assert config.name is not None  # RunConfig.__post_init__ named the run
        check_stem(config.name)
        check_out(config.out)
    except ValueError as error:
        parser.error(str(error))
    return config


def fill_defaults(parser: argparse.ArgumentParser, args: argparse.Namespace
                  ) -> tuple[str, dict[str, Any] | None]:
    """The flags left out filled from the hyperparameter file (a resumed run keeps its own
    values); the device resolved, and the file's values as results.json records them."""
    check_device_flag(parser, args)
    try:
        recorded = None if args.resume is not None else hyperparams.fill(args)
        return resolve_device(args.device), recorded
    except ValueError as error:
        parser.error(str(error))


def check_q_board(board: game.Rules) -> None:
    """A ValueError naming the algorithms that do train on ``board`` when tabular Q-learning
    cannot (a table of every position fits boards of at most ``game.SOLVED_CELLS`` cells)."""
    if not board.solvable:
        others = ", ".join(algo for algo in ALGOS if algo != "q")
        raise ValueError(f"tabular Q-learning (a table of every position) needs a board of at "
                         f"most {game.SOLVED_CELLS} cells; {board.name} has {board.n_cells}: "
                         f"train there with --algo {others}")


def check_q_batch(config: RunConfig) -> None:
    """--n-envs of --algo q: at most the boards that fit the memory budget (ValueError)."""
    if config.algo == "q" and config.n_envs is not None:
        from agents import q_batched

        most = q_batched.max_batch(config.board)
        if config.n_envs > most:
            raise ValueError(f"--n-envs (boards trained at once) must be at most {most:,} on "
                             f"{config.board.name} (a 4 GiB memory budget for the boards and "
                             f"the learner); got {config.n_envs:,}")


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


def main(argv: list[str] | None = None) -> int:
    """Run ``train.py`` with ``argv``; returns the exit code (module comment above)."""
    with sigterm_raises():
        try:
            return _main(argv)
        except (KeyboardInterrupt, Terminated) as stop:
            return stopped(stop)


def stopped(stop: BaseException, folder: RunFolder | None = None) -> int:
    """Say in one line that the run was interrupted or terminated (and where its last
    checkpoint is kept, if one is); the exit code."""
    said = "Terminated" if isinstance(stop, Terminated) else "Interrupted"
    final = None if folder is None else folder.final
    if final is not None and (final / STATE).is_file():
        said += (f": {final} keeps its last checkpoint; train.py --resume {final} continues "
                 "the run")
    print(f"\n{said}.", file=sys.stderr)
    return EXIT_TERMINATED if isinstance(stop, Terminated) else EXIT_INTERRUPTED


def _main(argv: list[str] | None) -> int:
    from agents.run import run, snapshot_pool

    config = parse_args(argv)
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
        print(f"train.py: error: {error}", file=sys.stderr)
        return exit_code(error)
    try:
        run(config, folder, pool)
    except OutputError as error:  # a failure while training keeps its traceback: a bug
        print(f"train.py: error: {error}", file=sys.stderr)
        return EXIT_OUTPUT
    except (KeyboardInterrupt, Terminated) as stop:
        return stopped(stop, folder)
    return 0


def exit_code(error: Exception) -> int:
    """1 for a missing extra, 3 for a full disk, 2 for the rest (the command as given)."""
    if isinstance(error, MissingExtra):
        return EXIT_MISSING
    return EXIT_OUTPUT if isinstance(error, OutputError) else EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
