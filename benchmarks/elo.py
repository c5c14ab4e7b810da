"""Where does AlphaZero stand among the built-in players and OpenSpiel's MCTSBot on a board too
big to solve? Elo ratings.

    python -m benchmarks elo --board 6x6x4 --minutes 60     # train, then rate; runs/benchmarks/
    python -m benchmarks elo --board 6x6x4 --model RUN/model.npz --key-games 200 \
        --out benchmarks/results/elo_6x6x4.json

Without ``--model`` it first trains ``train.py --algo alphazero --board B --minutes M`` (seed
``--seed``; the run folder stays under ``runs/benchmarks/elo``, so ``--resume`` continues an
unfinished one); with ``--model``, the training figures come from the results.json beside it.
The players: random, heuristic, montecarlo, mcts and alphabeta at their defaults, the raw
network, the network through a search of ``--simulations`` (the learner; with ``--threats`` a
search that reads the immediate threats), and OpenSpiel's
``MCTSBot`` (``benchmarks/openspiel_bot.py``: 1,000 simulations, one random rollout a leaf, UCT
constant 2, solver on, seeded per game; left out, with a line on stderr and a note in the JSON,
where OpenSpiel is not installed). The key players, the learner, alphabeta and MCTSBot, play
``--key-games`` games a pair (half in each seat); every other ordered pairing plays ``--games``;
nobody plays itself. Every game is seeded and opened by ``--opening`` random plies: the raw
network and a seeded search answer a position alike every time, and ten games between two such
players would otherwise be one game ten times over. The ratings are a Bradley-Terry fit of the
results (choix, the ``ratings`` extra), random at 0, with 95% intervals; each key pair also gets
its first player's Elo above the second with the interval of that gap (the learner's above
alphabeta is ``learner_vs_alphabeta``). The JSON holds every pairing's tally and its wall and
CPU seconds, the totals and the load average, the ratings and the training time; it is
rewritten after each X player's row, so a stopped run keeps what it played.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
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
    parser.add_argument("--threats", action="store_true",
                        help="the learner's search reads the immediate threats (the model spec's "
                             "threats=on: a win played at once, a lone threat blocked)")
    _add_games(parser)
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


def _add_games(parser: argparse.ArgumentParser) -> None:
    """The flags of how many games, and how each opens."""
    from gym_tictactoe.cli.arguments import non_negative_int, positive_int

    parser.add_argument("--games", type=positive_int, default=10,
                        help="games per ordered pairing that is not a key one (default: "
                             "%(default)s)")
    parser.add_argument("--key-games", type=positive_int, default=200,
                        help="games for each pair among the learner (the network through its "
                             "search), alphabeta and MCTSBot, half in each seat, rounded up "
                             "(default: %(default)s)")
    parser.add_argument("--opening", type=non_negative_int, default=2,
                        help="random plies opening every game (seeded), so that two players "
                             "that always answer alike play different games; at most the "
                             "board's cells - 1, never ending a game (default: %(default)s)")


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
            "samples_played": config.get("samples_played"),
            "resumed_from": config.get("resumed_from"),
            "train_seconds": config.get("train_seconds"),
            "train_cpu_seconds": config.get("train_cpu_seconds"),
            "hyperparameters": config.get("hyperparameters")}


@dataclasses.dataclass
class Table:
    """What the games have made so far: the players (the key ones among them), every ordered
    pairing's (X, O, tally) and what each cost."""

    players: list[str]
    key: list[str]
    extra: dict[str, Any]  # MCTSBot's settings, or why it is left out
    rows: list = dataclasses.field(default_factory=list)
    costs: list = dataclasses.field(default_factory=list)


def schedule(players: Sequence[str], key: Sequence[str], games: int,
             key_games: int) -> list[tuple[str, str, int]]:
    """(X, O, games) for every ordered pairing of two players: half of ``key_games`` (rounded
    up) where both are key players, else ``games``. A player never meets itself: those games
    say nothing of its rating (and would cost MCTSBot's most)."""
    half = -(-key_games // 2)
    return [(x, o, half if x in key and o in key else games)
            for x in players for o in players if x != o]


def lineup(args: argparse.Namespace, model: Path) -> tuple[Table, dict[str, Any]]:
    """The players, the key ones, and the loaded ones by name (the models and MCTSBot)."""
    from benchmarks import openspiel_bot
    from gym_tictactoe.cli import models as cli_models

    searched = f"{model}:simulations={args.simulations}" + (",threats=on" if args.threats
                                                             else "")
    players = [*BUILT_IN, str(model), searched]
    loaded = cli_models.players_for(players, args.board, "arena")
    if loaded is None:
        raise SystemExit(2)
    models = {spec: p for spec, p in zip(players, loaded, strict=True)
              if cli_models.is_model_path(spec)}
    key, extra = [searched, "alphabeta"], {"left_out": openspiel_bot.MISSING}
    if openspiel_bot.installed():
        models[openspiel_bot.NAME] = openspiel_bot.MCTSBotPlayer(args.board)
        extra = openspiel_bot.SETTINGS
        players.append(openspiel_bot.NAME)
        key.append(openspiel_bot.NAME)
    else:
        print(f"elo.py: {openspiel_bot.MISSING}", file=sys.stderr)
    return Table(players, key, extra), models


def play(args: argparse.Namespace, table: Table, models: dict[str, Any], save: Any) -> None:
    """Every ordered pairing's tally and cost, one X player's row at a time, saved after each."""
    from gym_tictactoe.cli import models as cli_models
    from gym_tictactoe.cli import pairing

    rng, progress = np.random.default_rng(args.seed), Progress(len(table.players))
    plan = schedule(table.players, table.key, args.games, args.key_games)
    with cli_models.one_torch_thread(["alphazero"]):
        for x in table.players:
            for _, o, games in (row for row in plan if row[0] == x):
                wall, cpu = time.perf_counter(), time.process_time()
                table.rows.append((x, o, pairing(x, o, games, rng, args.board, models,
                                                 args.opening)))
                table.costs.append({"x": x, "o": o, "games": games,
                                    "wall_seconds": round(time.perf_counter() - wall, 2),
                                    "cpu_seconds": round(time.process_time() - cpu, 2)})
            save(table)
            progress.step(f"{x} as X against every other player")


def key_pairs(table: Table, rated: bool) -> list[dict[str, Any]]:
    """Each pair of key players: the first one's score over both seats, its games and cost,
    and (once ``rated``) its Elo above the second with the 95% interval of that gap."""
    from benchmarks.elo_tables import head_to_head
    from gym_tictactoe.evaluation.ratings import elo_gap

    pairs = []
    for i, first in enumerate(table.key):
        for second in table.key[i + 1:]:
            pair = {"players": [first, second], **head_to_head(table.rows, first, second)}
            spent = [c for c in table.costs if {c["x"], c["o"]} == {first, second}]
            pair["wall_seconds"] = round(sum(c["wall_seconds"] for c in spent), 1)
            pair["cpu_seconds"] = round(sum(c["cpu_seconds"] for c in spent), 1)
            if rated:
                gap, interval = elo_gap(table.players, table.rows, first, second)
                pair["elo"], pair["interval"] = round(gap, 1), _finite(interval)
            pairs.append(pair)
    return pairs


def main(argv: Sequence[str] | None = None) -> int:
    from gym_tictactoe.evaluation.ratings import elo_ratings, ratings_table

    args = parse_args(argv)
    writable(args.out, "elo.py")
    start, load = time.perf_counter(), os.getloadavg()
    model, training = (args.model, training_of(args.model)) if args.model else train(args)
    table, models = lineup(args, model)

    def save(table: Table, ratings: list | None = None) -> None:
        write_json(args.out, _record(args, training, table, ratings, load,
                                     time.perf_counter() - start), quiet=True)

    play(args, table, models, save)
    ratings = elo_ratings(table.players, table.rows)
    save(table, [_plain(rating) for rating in ratings])
    print("\n".join(ratings_table(ratings)))
    print(f"results written to {args.out}")
    return 0


def _record(args: argparse.Namespace, training: dict[str, Any], table: Table,
            ratings: list | None, load: tuple[float, ...], seconds: float) -> dict[str, Any]:
    """The results file: the settings, every pairing with its cost, the key pairs, the ratings
    (once fitted) and the learner's gap to alphabeta."""
    from gym_tictactoe.players.search import DEFAULT_MAX_NODES

    pairs = key_pairs(table, ratings is not None)
    cost = {"wall_seconds": round(sum(c["wall_seconds"] for c in table.costs), 1),
            "cpu_seconds": round(sum(c["cpu_seconds"] for c in table.costs), 1),
            "load_average_at_start": load, "load_average_at_end": os.getloadavg(),
            "cpus": os.cpu_count()}
    return {"command": command_line(__name__), "board": args.board.name,
            "games_per_pairing": args.games, "key_games": args.key_games,
            "key_players": table.key, "opening_plies": args.opening, "training": training,
            "alphabeta_max_nodes": DEFAULT_MAX_NODES, "mctsbot": table.extra,
            "players": table.players, "pairings": table.rows, "costs": table.costs,
            "cost": cost, "key_pairs": pairs,
            "learner_vs_alphabeta": pairs[0] if ratings is not None else None,
            "ratings": ratings, "seconds": round(seconds, 1)}


def _finite(value: float) -> float | None:
    """A number as JSON takes it: one that cannot be estimated is null, not NaN."""
    return None if math.isnan(value) else round(value, 1)


def _plain(rating: Any) -> dict[str, Any]:
    """A rating as JSON takes it: an interval that cannot be estimated is null, not NaN."""
    fields = dataclasses.asdict(rating)
    fields["interval"] = None if math.isnan(fields["interval"]) else fields["interval"]
    return fields
