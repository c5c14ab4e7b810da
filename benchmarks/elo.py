"""Where does AlphaZero stand among the built-in players on a board too big to solve? Elo ratings.

    python -m benchmarks elo --board 6x6x4 --minutes 60     # train, then rate; runs/benchmarks/
    python -m benchmarks elo --board 6x6x4 --model runs/alphazero-6x6x4-seed0_1/model.npz

Without ``--model`` it first trains ``train.py --algo alphazero --board B --minutes M`` (seed
``--seed``; the run folder stays under ``runs/benchmarks/elo``, so ``--resume`` continues an
unfinished one); with ``--model``, the training figures come from the results.json beside it.
Then every player meets every player in both seats, ``--games`` seeded games a pairing (the
arena's rules), each opened by ``--opening`` random plies: the raw network and a seeded search
answer a position alike every time, and ten games between two such players would otherwise be
one game ten times over. The ratings are a Bradley-Terry fit of the results (choix, the
``ratings`` extra), random at 0, with 95% intervals. The players: random, heuristic,
montecarlo, mcts and alphabeta at their defaults, the raw network, and the network through a
search of ``--simulations``. The JSON holds every pairing's tally, the ratings and the training
time; it is rewritten after each X player's row, so a stopped run keeps what it played.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.commands import argument_parser, command_line
from benchmarks.progress import RUNS, Progress, results_file, writable, write_json

ROOT = Path(__file__).resolve().parents[1]
BUILT_IN = ("random", "heuristic", "montecarlo", "mcts", "alphabeta")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from agents.run.flags import checked
    from gym_tictactoe.cli.arguments import (
        board_arg,
        non_negative_int,
        positive_int,
        seed_arg,
        simulations_arg,
    )
    from gym_tictactoe.cli.match import check_opening

    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--board", type=board_arg, default="6x6x4",
                        help="RxCxK (default: %(default)s)")
    parser.add_argument("--model", type=Path, default=None,
                        help="an AlphaZero model.npz to rate instead of training one")
    parser.add_argument("--minutes", type=checked(float, 0), default=60.0,
                        help="AlphaZero training time when training (default: %(default)s)")
    parser.add_argument("--seed", type=seed_arg, default=0)
    parser.add_argument("--simulations", type=simulations_arg, default=100,
                        help="the searching player's simulations a move (default: %(default)s)")
    parser.add_argument("--games", type=positive_int, default=10,
                        help="games per ordered pairing (default: %(default)s)")
    parser.add_argument("--opening", type=non_negative_int, default=2,
                        help="random plies opening every game (seeded), so that two players "
                             "that always answer alike play different games; at most the "
                             "board's cells - 1, never ending a game (default: %(default)s)")
    parser.add_argument("--resume", type=Path, default=None, metavar="RUN",
                        help="continue an unfinished training run folder first")
    parser.add_argument("--out", type=results_file, default=RUNS / "elo.json",
                        help="results JSON (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        check_opening(args.opening, args.board)
    except ValueError as error:
        parser.error(f"--{error}")
    return args


def train(args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    """The trained model's path and the run's training figures."""
    out = ROOT / RUNS / "elo"
    command = (["train.py", "--resume", str(args.resume), "--no-progress"] if args.resume else
               ["train.py", "--algo", "alphazero", "--board", args.board.name, "--seed",
                str(args.seed), "--minutes", str(args.minutes), "--eval-minutes",
                str(args.minutes), "--games", "10", "--no-progress", "--out", str(out)])
    print("$ python " + " ".join(command), file=sys.stderr, flush=True)
    done = subprocess.run([sys.executable, *command], cwd=ROOT, check=False)
    if done.returncode:
        raise SystemExit(f"elo.py: train.py failed (exit {done.returncode})")
    folder = max((p.parent for p in out.glob("*/results.json")), key=lambda p: p.stat().st_mtime)
    return folder / "model.npz", training_of(folder / "model.npz")


def training_of(model: Path) -> dict[str, Any]:
    """What the model's run folder says of its training (its results.json beside it), or only
    the model's path for a file without one."""
    found = model.resolve().parent / "results.json"
    if not found.is_file():
        return {"model": str(model)}
    results = json.loads(found.read_text())
    config = results["config"]
    folder = found.parent
    return {"run": str(folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder),
            "timings": results["timings"], "games_played": config.get("games_played"),
            "train_seconds": config.get("train_seconds"),
            "train_cpu_seconds": config.get("train_cpu_seconds"),
            "hyperparameters": config.get("hyperparameters")}


def play(args: argparse.Namespace, model: Path, save: Any) -> tuple[list[str], list]:
    """Every ordered pairing's tally, one X player's row at a time, saved after each row."""
    from gym_tictactoe.cli import models as cli_models
    from gym_tictactoe.cli import pairing

    rules = args.board
    players = [*BUILT_IN, str(model), f"{model}:simulations={args.simulations}"]
    loaded = cli_models.players_for(players, rules, "arena")
    if loaded is None:
        raise SystemExit(2)
    models = {spec: p for spec, p in zip(players, loaded, strict=True)
              if cli_models.is_model_path(spec)}
    rng, rows, progress = np.random.default_rng(args.seed), [], Progress(len(players))
    with cli_models.one_torch_thread(["alphazero"]):
        for x in players:
            rows += [(x, o, pairing(x, o, args.games, rng, rules, models, args.opening))
                     for o in players]
            save(players, rows)
            progress.step(f"{x} as X against every player")
    return players, rows


def main(argv: Sequence[str] | None = None) -> int:
    from gym_tictactoe.evaluation.ratings import elo_ratings, ratings_table
    from gym_tictactoe.players.search import DEFAULT_MAX_NODES

    args = parse_args(argv)
    writable(args.out, "elo.py")
    start = time.perf_counter()
    model, training = (args.model, training_of(args.model)) if args.model else train(args)

    def save(players: list[str], rows: list, ratings: list | None = None) -> None:
        write_json(args.out, {"command": command_line(__name__), "board": args.board.name,
                              "games_per_pairing": args.games, "opening_plies": args.opening,
                              "training": training, "alphabeta_max_nodes": DEFAULT_MAX_NODES,
                              "players": players, "pairings": rows, "ratings": ratings,
                              "seconds": round(time.perf_counter() - start, 1)}, quiet=True)

    players, rows = play(args, model, save)
    ratings = elo_ratings(players, rows)
    save(players, rows, [_plain(rating) for rating in ratings])
    print("\n".join(ratings_table(ratings)))
    print(f"results written to {args.out}")
    return 0


def _plain(rating: Any) -> dict[str, Any]:
    """A rating as JSON takes it: an interval that cannot be estimated is null, not NaN."""
    fields = dataclasses.asdict(rating)
    if math.isnan(fields["interval"]):
        fields["interval"] = None
    return fields
