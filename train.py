"""Train an agent on TicTacToe-v0, prove how close to perfect it plays, and write the results.

    python train.py                                   # tabular Q-learning until perfect play
    python train.py --algo maskable-ppo --timesteps 200000

Writes ``<out>/<name>/model.npz`` (Q-table) or ``model.zip`` (SB3), ``results.json`` and
``learning_curve.png`` (optimal-move rate and best-response results against training time).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import time
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any

from gym_tictactoe.cli import positive_int
from gym_tictactoe.evaluation import RESULT_SCORES
from gym_tictactoe.files import atomic_path
from gym_tictactoe.opponents import parse_opponent
from gym_tictactoe.report import format_summary, summarize

ALGOS = ("q", "maskable-ppo", "ppo", "dqn")
EPISODES, TIMESTEPS = 200_000, 200_000


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algo", choices=ALGOS, default="q", help="the agent (default: q)")
    parser.add_argument("--timesteps", type=positive_int, default=None,
                        help=f"SB3 budget in agent timesteps (default: {TIMESTEPS})")
    parser.add_argument("--episodes", type=positive_int, default=None,
                        help=f"Q-learning budget in episodes (default: {EPISODES})")
    parser.add_argument("--opponent", default=None,
                        help="opponent spec, e.g. 'minimax' or 'random+heuristic+minimax*2' "
                             "(default: the algorithm's curriculum)")
    parser.add_argument("--seat", choices=("X", "O", "random"), default="random",
                        help="the agent's mark (default: random, drawn each episode)")
    parser.add_argument("--seed", type=partial(positive_int, low=0), default=0,
                        help="seed of everything (default: 0)")
    parser.add_argument("--n-envs", type=positive_int, default=None,
                        help="SB3 parallel envs (default: the algorithm's own)")
    parser.add_argument("--eval-every", type=positive_int, default=None,
                        help="exact evaluation period: episodes for q (default 1000), "
                             "timesteps for SB3 (default 10000)")
    parser.add_argument("--games", type=positive_int, default=200,
                        help="final games per opponent and seat (default: 200)")
    parser.add_argument("--out", type=Path, default=Path("runs"), help="output root (runs)")
    parser.add_argument("--name", default=None, help="run folder name (default: ALGO-seedSEED)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments, checked: a flag of the other kind of algorithm, a bad opponent spec or an
    unusable --out is a usage error (exit 2), never a traceback later."""
    parser = build_parser()
    args = parser.parse_args(argv)
    wrong = "--timesteps" if args.algo == "q" else "--episodes"
    if getattr(args, wrong.strip("-")) is not None:
        parser.error(f"{wrong} does not apply to --algo {args.algo}: Q-learning counts "
                     "--episodes, the SB3 algorithms --timesteps")
    args.episodes, args.timesteps = args.episodes or EPISODES, args.timesteps or TIMESTEPS
    args.name = args.name or f"{args.algo}-seed{args.seed}"
    try:
        args.run_dir = _run_dir(args.out, args.name)
        if args.opponent is not None:
            parse_opponent(args.opponent)
    except ValueError as error:
        parser.error(str(error))
    return args


def _run_dir(out: Path, name: str) -> Path:
    """``out/name``, created; a missing or unwritable parent is a usage error, not a traceback."""
    if not name or Path(name).name != name or name in (".", ".."):
        raise ValueError(f"--name must be a plain folder name; got {name!r}")
    parent = out.resolve().parent
    if not parent.is_dir():
        raise ValueError(f"--out {out}: its parent folder {parent} does not exist")
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} exists and is not a folder")
    if not os.access(out if out.exists() else parent, os.W_OK | os.X_OK):
        raise ValueError(f"--out {out}: cannot write there")
    return out / name


def train_q(args: argparse.Namespace) -> tuple[Any, list[dict[str, Any]], str]:
    """Tabular Q-learning until perfect play or the episode budget; returns the agent, the
    learning curve and the model file name."""
    import gymnasium as gym

    from agents.q_learning import TRAINING_OPPONENT, QLearningAgent
    from gym_tictactoe.evaluation import evaluate

    env = gym.make("TicTacToe-v0", opponent=args.opponent or TRAINING_OPPONENT,
                   agent_mark=args.seat)
    agent, curve, start = QLearningAgent(seed=args.seed), [], time.perf_counter()

    def on_eval(agent: QLearningAgent, episodes: int) -> bool:
        curve.append(_curve_entry(evaluate(agent), episodes=episodes,
                                  seconds=time.perf_counter() - start))
        return curve[-1]["perfect"]

    agent.train(env, args.episodes, seed=args.seed, eval_every=args.eval_every or 1000,
                on_eval=on_eval, progress=not args.no_progress)
    agent.save(args.run_dir / "model.npz")
    return agent, curve, "model.npz"


def train_sb3(args: argparse.Namespace) -> tuple[Any, list[dict[str, Any]], str]:
    """An SB3 algorithm with SB3's own progress bar and exact evaluation as it trains."""
    from agents import sb3
    from agents.sb3_files import save_model

    model, callback = sb3.train(
        args.algo, args.timesteps, opponent=args.opponent or sb3.CURRICULUM,
        agent_mark=args.seat, seed=args.seed, n_envs=args.n_envs,
        eval_every=args.eval_every or 10_000, progress_bar=not args.no_progress,
    )
    save_model(model, args.run_dir / "model.zip")
    curve = [{**entry, "X": RESULT_SCORES[entry["X"]], "O": RESULT_SCORES[entry["O"]]}
             for entry in callback.history]
    return sb3.ModelPolicy(model, args.algo), curve, "model.zip"


def _curve_entry(report: Any, **clock: float) -> dict[str, Any]:
    return {**{k: round(v, 3) if isinstance(v, float) else v for k, v in clock.items()},
            "rate": report.move_rate.rate,
            "X": RESULT_SCORES[report.best_response["X"].result],
            "O": RESULT_SCORES[report.best_response["O"].result],
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
    """Optimal-move rate and the best-response result per seat against training time."""
    import matplotlib

    matplotlib.use("Agg")  # files only: CI has no screen
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 5.5),
                                      gridspec_kw={"height_ratios": [2, 1]})
    x = [entry[clock] for entry in curve]
    top.plot(x, [entry["rate"] for entry in curve], marker=".", color="tab:blue")
    top.set(ylabel="optimal-move rate", title=title, ylim=(min(0.5, *top.get_ylim()), 1.01))
    top.grid(alpha=0.3)
    for seat, style in (("X", "-"), ("O", "--")):
        bottom.step(x, [entry[seat] for entry in curve], style, where="post", label=f"as {seat}")
    bottom.set(xlabel=clock, ylabel="best response", yticks=[-1, 0, 1], ylim=(-1.3, 1.3))
    bottom.set_yticklabels(["loss", "draw", "win"])
    bottom.legend(loc="upper left", ncols=2)
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    with atomic_path(path) as temp:
        fig.savefig(temp, format="png", dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.run_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    policy, curve, model_file = (train_q if args.algo == "q" else train_sb3)(args)
    trained = time.perf_counter() - start
    summary = summarize(policy, games=args.games, seed=args.seed)
    clock = "episodes" if args.algo == "q" else "timesteps"
    first_perfect = next((entry[clock] for entry in curve if entry["perfect"]), None)
    results = {
        "config": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "seed": args.seed, "versions": versions(),
        "timings": {"train_seconds": round(trained, 3),
                    "total_seconds": round(time.perf_counter() - start, 3)},
        f"perfect_at_{clock}": first_perfect, **summary, "learning_curve": curve,
    }
    write_json(args.run_dir / "results.json", results)
    plot_curve(args.run_dir / "learning_curve.png", curve, clock, f"{args.algo}, seed {args.seed}")
    print(format_summary(summary))
    reached = (f"reached at {first_perfect:,} {clock}" if first_perfect
               else "not reached within the budget")
    print(f"\nperfect play {reached}; training took {trained:.1f} s")
    print(f"wrote {args.run_dir / model_file}, results.json and learning_curve.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
