"""Train an agent on TicTacToe-v0, prove how close to perfect it plays, and write the results.

    python train.py                                   # tabular Q-learning until perfect play
    python train.py --algo dqn                        # DQN until perfect play (or 300k timesteps)
    python train.py --opponent self                   # tabular self-play

Writes ``<out>/<name>/model.npz`` (Q-table) or ``model.zip`` (SB3), ``results.json`` and
``learning_curve.png`` (optimal-move rate and best-response results against training time).
Every argument is checked before anything is trained or created; a run that fails leaves no
empty folder behind.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any

from agents import EXPLORING_STARTS, start_options
from gym_tictactoe import game
from gym_tictactoe.arguments import board_arg, opponent_spec, positive_int, probability, seed_arg
from gym_tictactoe.evaluation import RESULT_SCORES
from gym_tictactoe.extras import MissingExtra, require
from gym_tictactoe.files import atomic_path
from gym_tictactoe.opponents import parse_opponent
from gym_tictactoe.report import (
    checkpoint_message,
    checkpoint_result,
    evaluating_message,
    format_summary,
    summarize,
)

ALGOS = ("q", "maskable-ppo", "ppo", "dqn")
EPISODES, TIMESTEPS = 200_000, 300_000  # SB3: benchmarks/training.py's budget
EVAL_EVERY = {"q": 1000, "sb3": 10_000}
# On 13-16 cells one exact evaluation takes 4-9 s for a Q-table and 10-25 s for a network:
# every 1,000 episodes or 10,000 timesteps would be most of the run.
EVAL_EVERY_BIG = {"q": 100_000, "sb3": 100_000}
NAME_MAX = 255  # bytes in a folder name on common file systems
POOL, MIX_SHARE = 5, 0.2
REFRESH_EVERY = {"q": 1000, "sb3": 10_000}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algo", choices=ALGOS, default="q", help="the agent (default: q)")
    parser.add_argument("--timesteps", type=positive_int, default=None,
                        help=f"SB3 budget in agent timesteps (default: {TIMESTEPS})")
    parser.add_argument("--episodes", type=positive_int, default=None,
                        help=f"Q-learning budget in episodes (default: {EPISODES})")
    parser.add_argument("--opponent", type=training_opponent, default=None,
                        help="'self' (self-play) or an opponent spec, e.g. 'minimax' or "
                             "'random+heuristic+minimax*2' "
                             "(default: the algorithm's curriculum)")
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
    parser.add_argument("--board", type=board_arg, default=game.TICTACTOE, metavar="RxCxK",
                        help="rows x cols x win length of a board of at most 16 cells, e.g. "
                        "4x4x3 (default: 3x3x3)")
    parser.add_argument("--seat", choices=("X", "O", "random"), default="random",
                        help="the agent's mark (default: random, drawn each episode)")
    parser.add_argument("--seed", type=seed_arg, default=0,
                        help="seed of everything, 0 <= seed < 2**32 (default: 0)")
    parser.add_argument("--n-envs", type=positive_int, default=None,
                        help="SB3 parallel envs (default: the algorithm's own)")
    parser.add_argument("--canonical", action=argparse.BooleanOptionalAction, default=None,
                        help="SB3: show the network every board in its canonical orientation "
                             "(default: on)")
    parser.add_argument("--start", choices=("empty", "random"), default=None,
                        help="where training episodes begin; 'random' (exploring starts, the "
                             "default) draws a position for --start-probability of them")
    parser.add_argument("--start-probability", type=probability, default=None, metavar="P",
                        help="share of episodes with a random start (default: "
                             f"{EXPLORING_STARTS['start_probability']})")
    parser.add_argument("--eval-every", type=positive_int, default=None,
                        help="exact evaluation period: episodes for q (default 1000), "
                             "timesteps for SB3 (default 10000)")
    parser.add_argument("--games", type=positive_int, default=200,
                        help="final games per opponent and seat (default: 200)")
    parser.add_argument("--out", type=Path, default=Path("runs"), help="output root (runs)")
    parser.add_argument("--name", default=None, help="run folder name (default: ALGO-seedSEED)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def training_opponent(text: str) -> str:
    """An argparse type: ``self`` (self-play) or an opponent spec."""
    return "self" if text.strip() == "self" else opponent_spec(text)


def check_self_play(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Self-play flags only with --opponent self; their defaults filled in."""
    flags = ("--pool", "--refresh-every", "--snapshot", "--mix", "--mix-share")
    given = [flag for flag in flags if getattr(args, flag[2:].replace("-", "_")) is not None]
    if args.opponent != "self":
        if given:
            parser.error(f"{given[0]} applies to self-play only (--opponent self)")
        return
    if args.mix is None and args.mix_share is not None:
        parser.error("--mix-share needs --mix, the opponent played in that share")
    if args.mix_share is not None and not 0 < args.mix_share < 1:
        parser.error(f"--mix-share must be strictly between 0 and 1; got {args.mix_share}")
    args.pool = args.pool or POOL
    args.refresh_every = args.refresh_every or REFRESH_EVERY["q" if args.algo == "q" else "sb3"]
    args.mix_share = None if args.mix is None else args.mix_share or MIX_SHARE


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments, checked: a flag of the other kind of algorithm, a bad opponent spec or an
    unusable --out or --name is a usage error (exit 2), never a traceback later."""
    parser = build_parser()
    args = parser.parse_args(argv)
    q = args.algo == "q"
    sb3_only = ("--timesteps", "--n-envs", "--canonical")
    for flag in sb3_only if q else ("--episodes",):
        if getattr(args, flag.strip("-").replace("-", "_")) is not None:
            parser.error(f"{flag} does not apply to --algo {args.algo}: Q-learning counts "
                         "--episodes (and sees every symmetry of a position as one entry), the "
                         "SB3 algorithms --timesteps on --n-envs boards with --canonical")
    if args.start == "empty" and args.start_probability is not None:
        parser.error("--start-probability applies to --start random only")
    args.episodes, args.timesteps = args.episodes or EPISODES, args.timesteps or TIMESTEPS
    kind = "q" if q else "sb3"
    args.eval_every = args.eval_every or (EVAL_EVERY if args.board.tabled
                                          else EVAL_EVERY_BIG)[kind]
    board = "" if args.board is game.TICTACTOE else f"-{args.board.name}"
    args.name = args.name or f"{args.algo}{board}-seed{args.seed}"
    check_self_play(parser, args)
    try:
        args.board.check_solvable("train.py (it evaluates exactly)")
        parse_opponent(args.mix or ("random" if args.opponent in (None, "self")
                                    else args.opponent), args.board)
    except ValueError as error:
        parser.error(str(error))
    try:
        args.run_dir = _run_dir(args.out, args.name)
    except ValueError as error:
        parser.error(str(error))
    return args


def _run_dir(out: Path, name: str) -> Path:
    """``out/name``; a bad name or an unusable ``out`` is a ValueError saying what is wrong."""
    if not name or Path(name).name != name or name in (".", ".."):
        raise ValueError(f"--name must be a plain folder name; got {name!r}")
    if len(os.fsencode(name)) > NAME_MAX:
        raise ValueError(f"--name is {len(os.fsencode(name))} bytes long; a folder name has at "
                         f"most {NAME_MAX}")
    parent = out.resolve().parent
    if not parent.is_dir():
        raise ValueError(f"--out {out}: its parent folder {parent} does not exist")
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} exists and is not a folder")
    if (out / name).exists() and not (out / name).is_dir():
        raise ValueError(f"--out {out} --name {name}: {out / name} exists and is not a folder")
    if not os.access(out if out.exists() else parent, os.W_OK | os.X_OK):
        raise ValueError(f"--out {out}: cannot write there")
    return out / name


def check_extras(args: argparse.Namespace) -> None:
    """MissingExtra, before any work, when the run needs a package that is not installed."""
    if args.algo == "q":
        if not args.no_progress:
            require("tqdm", "train", "the progress bar (hide it with --no-progress)")
        return
    for module in ("torch", "stable_baselines3", "sb3_contrib"):
        require(module, "sb3", f"--algo {args.algo}")
    if not args.no_progress:  # SB3's progress bar
        for module in ("tqdm", "rich"):
            require(module, "sb3", "the progress bar (hide it with --no-progress)")


def make_run_dir(run_dir: Path) -> list[Path]:
    """Create ``run_dir`` (and its parent ``--out`` if missing); the folders made, deepest first.
    OSError (a read-only or virtual file system such as /proc or /sys) as a one-line message."""
    made = [folder for folder in (run_dir, run_dir.parent) if not folder.exists()]
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        remove_empty(made)
        raise OSError(f"cannot create the run folder {run_dir}: "
                      f"{error.strerror or error}") from None
    return made


def remove_empty(folders: list[Path]) -> None:
    """Remove those of ``folders`` that are empty (what a failed run made and left unused)."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


@dataclass
class Trained:
    """What a training run hands on: the policy, the learning curve, the model file's name, the
    opponent it trained against and the settings that applied."""

    policy: Any
    curve: list[dict[str, Any]]
    model_file: str
    opponent: str
    settings: dict[str, Any]


def train_q(args: argparse.Namespace) -> Trained:
    """Tabular Q-learning until perfect play or the episode budget."""
    import gymnasium as gym

    from agents.q_learning import TRAINING_OPPONENT, QLearningAgent
    from gym_tictactoe.evaluation import evaluate

    opponent, board = args.opponent or TRAINING_OPPONENT, args.board.kwargs
    options = env_options(args, EXPLORING_STARTS)
    agent, curve, start = QLearningAgent(seed=args.seed, **board), [], time.perf_counter()

    say = announcer(args)

    def on_eval(agent: QLearningAgent, episodes: int) -> bool:
        if say is not None:
            say(checkpoint_message(episodes, "episodes", args.board))
        curve.append(_curve_entry(evaluate(agent), episodes=episodes,
                                  seconds=time.perf_counter() - start))
        if say is not None:
            say(checkpoint_result(curve[-1]))
        return curve[-1]["perfect"]

    settings = {"episodes": args.episodes, "env_options": options,
                "hyperparameters": asdict(agent.config)}
    if opponent == "self":
        from agents import self_play

        pool = args.pool_object
        self_play.train_q(agent, pool, args.episodes, args.refresh_every, seed=args.seed,
                          agent_mark=args.seat, eval_every=args.eval_every, on_eval=on_eval,
                          progress=not args.no_progress, env_options=options)
        settings["self_play"] = self_play_settings(args, pool)
    else:
        env = gym.make("TicTacToe-v0", opponent=opponent, agent_mark=args.seat, **board,
                       **options)
        agent.train(env, args.episodes, seed=args.seed, eval_every=args.eval_every,
                    on_eval=on_eval, progress=not args.no_progress)
    agent.save(args.run_dir / "model.npz")
    return Trained(agent, curve, "model.npz", opponent, settings)


def snapshot_pool(args: argparse.Namespace) -> Any:
    """The self-play pool --pool, --snapshot, --mix and --mix-share describe: FileNotFoundError
    or ValueError for a --snapshot that is no model of ours or plays another board."""
    from agents.self_play import SnapshotPool

    pool = SnapshotPool(args.board, args.pool, args.mix, args.mix_share or 0.0, seed=args.seed)
    for path in args.snapshot or []:
        pool.add_file(path)
    return pool


def self_play_settings(args: argparse.Namespace, pool: Any) -> dict[str, Any]:
    return {"pool": args.pool, "refresh_every": args.refresh_every, "mix": args.mix,
            "mix_share": args.mix_share, "snapshot_files": [str(p) for p in args.snapshot or []],
            "snapshots_taken": pool.added}


def train_sb3(args: argparse.Namespace) -> Trained:
    """An SB3 algorithm with SB3's own progress bar and exact evaluation as it trains."""
    from agents import sb3
    from agents.sb3_files import save_model

    opponent = args.opponent or sb3.CURRICULUM
    n_envs = args.n_envs or sb3.N_ENVS[args.algo]
    options = env_options(args, sb3.ENV_OPTIONS[args.algo])
    canonical, pool, callbacks = options["canonical"], None, []
    if opponent == "self":
        from agents.self_play import snapshot_callback

        pool = args.pool_object
        callbacks.append(snapshot_callback(pool, args.refresh_every, args.algo, canonical))
    model, callback = sb3.train(
        args.algo, args.timesteps, opponent=pool.opponent() if pool else opponent,
        agent_mark=args.seat, seed=args.seed, n_envs=n_envs, eval_every=args.eval_every,
        progress_bar=not args.no_progress, rules=args.board, env_options=options,
        callbacks=callbacks, announce=announcer(args),
    )
    save_model(model, args.run_dir / "model.zip", args.board, canonical=canonical)
    settings = {"timesteps": args.timesteps, "n_envs": n_envs, "env_options": options,
                "hyperparameters": sb3.HYPERPARAMETERS[args.algo]}
    if pool is not None:
        settings["self_play"] = self_play_settings(args, pool)
    return Trained(sb3.ModelPolicy(model, args.algo, args.board, canonical), callback.history,
                   "model.zip", opponent, settings)


def announcer(args: argparse.Namespace) -> Any:
    """How to say that an exact evaluation runs, on boards of 13-16 cells (seconds each, the
    progress bar standing still meanwhile): a line above the bar (tqdm's, or SB3's rich one,
    which passes printed lines through), or None on smaller boards, where it takes milliseconds.
    """
    if args.board.tabled:
        return None
    if args.no_progress:
        return partial(print, flush=True)
    from tqdm import tqdm

    return tqdm.write


def env_options(args: argparse.Namespace, defaults: dict[str, Any]) -> dict[str, Any]:
    """The training envs' options: ``defaults`` (``agents.EXPLORING_STARTS``, or for SB3
    ``agents.sb3.ENV_OPTIONS``, which adds ``canonical``) overridden by --start,
    --start-probability and (SB3) --canonical / --no-canonical."""
    options = start_options(args.start, args.start_probability, defaults)
    if "canonical" in defaults:
        options = {"canonical": defaults["canonical"] if args.canonical is None
                   else args.canonical, **options}
    return options


def _evaluation_threads(algo: str) -> contextlib.AbstractContextManager:
    """One torch thread for an SB3 model's final evaluation, as for its training: torch's
    default (every core) made it several times slower on 2 busy cores (77 s of a 117 s run)."""
    if algo == "q":
        return contextlib.nullcontext()
    from agents.sb3 import torch_threads

    return torch_threads(1)


def _curve_entry(report: Any, **clock: float) -> dict[str, Any]:
    # The same encoding as the rest of results.json (and as SB3's callback history).
    return {**{k: round(v, 3) if isinstance(v, float) else v for k, v in clock.items()},
            "rate": report.move_rate.rate,
            "X": report.best_response["X"].result, "O": report.best_response["O"].result,
            "perfect": report.perfect}


def versions() -> dict[str, str]:
    names = ("gymnasium-tictactoe", "gymnasium", "numpy", "torch", "stable-baselines3",
             "sb3-contrib")
    found = {"python": platform.python_version()}
    for name in names:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[name] = metadata.version(name)
    return found


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as indented JSON to ``path`` atomically: never a half-written file."""
    with atomic_path(path) as temp, open(temp, "w") as file:
        json.dump(data, file, indent=2)


def plot_curve(path: Path, curve: list[dict[str, Any]], clock: str, title: str) -> None:
    """Optimal-move rate and the best-response result per seat against training time.
    MissingExtra without matplotlib."""
    matplotlib = require("matplotlib", "train", "the learning-curve plot")
    matplotlib.use("Agg")  # files only: CI has no screen
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 5.5),
                                      gridspec_kw={"height_ratios": [2, 1]})
    x = [entry[clock] for entry in curve]
    top.plot(x, [entry["rate"] for entry in curve], marker=".", color="tab:blue")
    top.set(ylabel="optimal-move rate", title=title, ylim=(min(0.5, *top.get_ylim()), 1.01))
    top.grid(alpha=0.3)
    for seat, style in (("X", "-"), ("O", "--")):
        scores = [RESULT_SCORES[entry[seat]] for entry in curve]
        bottom.step(x, scores, style, where="post", label=f"as {seat}")
    bottom.set(xlabel=clock, ylabel="best response", yticks=[-1, 0, 1], ylim=(-1.3, 1.3))
    bottom.set_yticklabels(["loss", "draw", "win"])
    bottom.legend(loc="upper left", ncols=2)
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    with atomic_path(path) as temp:
        fig.savefig(temp, format="png", dpi=100)
    plt.close(fig)


def run(args: argparse.Namespace) -> None:
    """Train, evaluate, write model + results.json + plot, print the results table."""
    start = time.perf_counter()
    trained = (train_q if args.algo == "q" else train_sb3)(args)
    train_seconds = time.perf_counter() - start
    print(evaluating_message(args.games, args.board), flush=True)
    with _evaluation_threads(args.algo):
        summary = summarize(trained.policy, games=args.games, seed=args.seed)
    clock = "episodes" if args.algo == "q" else "timesteps"
    first_perfect = next((entry[clock] for entry in trained.curve if entry["perfect"]), None)
    timings = {"train_seconds": round(train_seconds, 3),
               "total_seconds": round(time.perf_counter() - start, 3)}
    write_json(args.run_dir / "results.json", {
        "config": run_config(args, trained), "seed": args.seed, "versions": versions(),
        "timings": timings, f"perfect_at_{clock}": first_perfect, **summary,
        "learning_curve": trained.curve})
    print(format_summary(summary))
    reached = (f"reached at {first_perfect:,} {clock}" if first_perfect
               else "not reached within the budget")
    print(f"\nperfect play {reached}; training took {train_seconds:.1f} s")
    plotted = plot_if_possible(args, trained.curve, clock)
    written = [trained.model_file, "results.json"] + (["learning_curve.png"] if plotted else [])
    print(f"wrote {args.run_dir}: {', '.join(written)}")


def plot_if_possible(args: argparse.Namespace, curve: list[dict[str, Any]], clock: str) -> bool:
    """The learning curve's PNG, or a one-line warning when matplotlib is missing."""
    try:
        plot_curve(args.run_dir / "learning_curve.png", curve, clock,
                   f"{args.algo}, seed {args.seed}")
    except MissingExtra as error:
        print(f"train.py: warning: no learning_curve.png: {error}", file=sys.stderr)
        return False
    return True


def run_config(args: argparse.Namespace, trained: Trained) -> dict[str, Any]:
    """The settings that applied to this run: the opponent actually trained against, the budget
    and evaluation period of this kind of algorithm, never the other kind's."""
    return {"algo": args.algo, "board": args.board.name, "opponent": trained.opponent,
            "seat": args.seat,
            "seed": args.seed, **trained.settings, "eval_every": args.eval_every,
            "games": args.games, "run_dir": str(args.run_dir)}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        check_extras(args)
        args.pool_object = snapshot_pool(args) if args.opponent == "self" else None
        made = make_run_dir(args.run_dir)
    except (MissingExtra, OSError, ValueError) as error:  # ValueError: a --snapshot file
        print(f"train.py: error: {error}", file=sys.stderr)
        return 1 if isinstance(error, MissingExtra) else 2
    try:
        run(args)
    finally:
        remove_empty(made)  # a run that failed before writing anything leaves no folder
    return 0


if __name__ == "__main__":
    sys.exit(main())
