"""``train.py``'s flags checked together and made into the frozen run configuration
(:func:`parse_args`): a flag of the other kind of algorithm, of self-play without it, of
AlphaZero or tabular Q's steering with another algorithm, values that contradict each other, a
board tabular Q-learning cannot tabulate, or settings that need more memory on the board than
the limits allow (``agents.limits``; AlphaZero's settings check their own bounds, SB3's --n-envs
is :func:`check_sb3_envs`) are usage errors of one line before anything is trained or created.
The flags themselves are ``agents.run.flags``'; ``--resume`` fills them in
``agents.run.resume``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents import hyperparams
from agents.limits import MAX_BUFFER_BYTES, MAX_N_ENVS, check_bytes, sb3_transition_bytes
from agents.run.config import (
    ALGOS,
    EPISODES,
    MIX_SHARE,
    POOL,
    REFRESH_EVERY,
    TIMESTEPS,
    RunConfig,
    SelfPlay,
    check_out,
)
from agents.run.flags import (
    AIM_FLAGS,
    ALPHAZERO_FLAGS_NAMES,
    ALPHAZERO_ONLY,
    PROG,
    Q_FOCUS_FLAGS,
    build_parser,
    dest,
)
from agents.run.folder import check_stem
from agents.run.resume import resume_from
from gym_tictactoe import game
from gym_tictactoe.checks import check_int
from gym_tictactoe.players.opponents import parse_opponent


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
        progress=not args.no_progress, self_play=self_play_of(args), focus=focus_of(args),
        workers=args.workers, ray_address=args.ray_address, device=device,
        hyperparams=recorded)


def parse_args(argv: list[str] | None = None, prog: str = PROG) -> RunConfig:
    """The run configuration, checked: a flag of the other kind of algorithm, a bad opponent
    spec, a board Q-learning cannot tabulate or an unusable --out or --name is a usage error
    (exit 2), never a traceback later."""
    parser = build_parser(prog)
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
    check_focus_flags(parser, args)
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
        from agents.tabular import batched as q_batched

        most = q_batched.max_batch(config.board)
        if config.n_envs > most:
            raise ValueError(f"--n-envs (boards trained at once) must be at most {most:,} on "
                             f"{config.board.name} (a 4 GiB memory budget for the boards and "
                             f"the learner); got {config.n_envs:,}")


def check_alphazero_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """AlphaZero's flags with another algorithm are a usage error."""
    if args.algo != "alphazero":
        given = [flag for flag in ALPHAZERO_ONLY if getattr(args, dest(flag)) is not None]
        if given:
            parser.error(f"{given[0]} applies to --algo alphazero only")


def alphazero_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The AlphaZero settings given, by field name (``RunConfig.alphazero``)."""
    names = (dest(flag) for flag in (*ALPHAZERO_FLAGS_NAMES, "--target", "--threats"))
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def check_limits(config: RunConfig) -> None:
    """AlphaZero's settings (each one's bounds and the memory they imply on the board) and its
    actors on a local Ray, SB3's --n-envs: a ValueError of one line before anything runs."""
    if config.kind == "alphazero":
        from agents.alphazero.workers import check_workers
        from agents.run.alphazero import settings_of

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


def check_focus_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The steering flags with another algorithm, shares over 1 or a flag without the one it
    modifies are a usage error."""
    given = [flag for flag in Q_FOCUS_FLAGS if getattr(args, dest(flag)) is not None
             and not (args.algo == "alphazero" and flag in AIM_FLAGS)]
    if given and args.algo != "q":
        if given[0] in AIM_FLAGS:
            parser.error(f"{given[0]} applies to --algo q and alphazero only (their aimed "
                         "starts)")
        parser.error(f"{given[0]} applies to --algo q only (tabular starts and learning rate)")
    shares = (args.focus_share or 0.0) + (args.back_share or 0.0)
    if shares > 1:
        parser.error(f"--focus-share + --back-share must be at most 1 (the rest of the random "
                     f"starts stays uniform); got {shares:g} (a flag left out takes "
                     f"agents/hyperparams/{args.algo}.yml's value for {args.board.name})")
    if shares and not args.board.solvable:
        parser.error(f"--focus-share and --back-share aim the starts at the positions an exact "
                     f"checkpoint finds played wrong: boards of at most {game.SOLVED_CELLS} "
                     f"cells; {args.board.name} has {args.board.n_cells}")
    if shares and args.start == "empty":
        parser.error("--focus-share and --back-share aim the random starts: they need --start "
                     "random (the default)")
    if args.forget and not shares:
        parser.error("--forget needs --focus-share or --back-share above 0: it resets the "
                     "positions the checkpoint aims the starts at")
    if args.alpha_episodes is not None and args.alpha_end is None:
        parser.error("--alpha-episodes needs --alpha-end, the learning-rate floor it anneals to")


def focus_of(args: argparse.Namespace) -> Any:
    """The ``agents.tabular.focus.Focus`` the flags describe, defaults filled in (None when it
    steers nothing: uniform starts and a fixed learning-rate floor)."""
    from agents.tabular.focus import ALPHA_EPISODES, Focus

    focus = Focus(share=args.focus_share or 0.0, back_share=args.back_share or 0.0,
                  forget=bool(args.forget), alpha_end=args.alpha_end,
                  alpha_episodes=args.alpha_episodes or ALPHA_EPISODES)
    return focus if focus.aims or focus.alpha_end is not None else None


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
