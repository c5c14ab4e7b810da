"""Exact grading of players and saved models on a board of 17 to 64 cells (5x5x4 by default): each
player's sampled optimal-move rate (two samplings, every verdict proved, 95% Wilson interval)
and its best response per seat where the walk finishes within its budget
(``gym_tictactoe.evaluation.grading``).

    python -m benchmarks grading [--board 5x5x4] [--players alphabeta mcts heuristic]
                                 [--models RUN/model.zip ...] [--sample 60] [--walk-nodes 300]
                                 [--seed 0] [--out PATH]

Each player plays as a policy from its default settings, seeded (its generator drawn from
``--seed``). ``--models`` grades saved models too (train.py's ``model.npz`` or ``model.zip`` on
the same board; an AlphaZero model plays its raw network, greedy), each recorded with what its
run's ``results.json`` says of its training. Progress goes to stderr; the results are written as
JSON only to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.commands import argument_parser, command_line
from benchmarks.progress import Progress, duration, writable, write_json
from gym_tictactoe import game
from gym_tictactoe.cli.arguments import board_arg, bounded_int, player_names, seed_arg
from gym_tictactoe.cli.models import board_of, load
from gym_tictactoe.evaluation.grading import format_grade, grade
from gym_tictactoe.extras import MissingExtra
from gym_tictactoe.players.opponents import parse_opponent

PLAYERS = ("alphabeta", "mcts", "heuristic")
PUBLIC = ("A public AlphaZero project scores its network at 92.11% optimal moves on 5x5x4 "
          "openings of at most three stones (a different sample: every such opening, not ours)")


class PlayerPolicy:
    """A built-in player as a policy: the relative board a policy sees back to absolute marks,
    then the player's ``act`` with its own seeded generator."""

    def __init__(self, spec: str, rules: game.Rules, seed: int) -> None:
        self.player, self.rules = parse_opponent(spec, rules), rules
        self.rng = np.random.default_rng(seed)

    def __call__(self, observation: Any, mask: Any) -> int:
        cells = np.asarray(observation, dtype=np.int8)
        mark = game.X if (cells == 1).sum() == (cells == 2).sum() else game.O
        board = cells if mark == game.X else game.SWAP[cells]
        return int(self.player.act(board.copy(), mark, self.rng))


def contenders(args: argparse.Namespace) -> list[tuple[str, Any, dict[str, Any]]]:
    """(name, policy, what to record beside its grade) for each player, then each model."""
    found: list[tuple[str, Any, dict[str, Any]]] = [
        (name, PlayerPolicy(name, args.board, args.seed), {}) for name in args.players]
    for path in args.models:
        try:
            policy, kind = load(str(path))
        except (FileNotFoundError, ValueError, MissingExtra) as error:  # as `evaluate` says it
            raise SystemExit(f"grading.py: {error}") from None
        if board_of(policy).name != args.board.name:
            raise SystemExit(f"grading.py: {path} is a {board_of(policy).name} model; "
                             f"--board is {args.board.name}")
        found.append((f"{kind} ({path.parent.name})", policy, {"model": str(path),
                                                                "training": training(path)}))
    return found


def training(path: Path) -> dict[str, Any]:
    """What the run's results.json beside the model says of its training (empty without one)."""
    try:
        results = json.loads((path.parent / "results.json").read_text())
        last = results["learning_curve"][-1]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return {}
    keys = ("episodes", "timesteps", "train_seconds", "train_cpu_seconds")
    found = {"algo": results.get("config", {}).get("algo"),
             **{key: last[key] for key in keys if key in last}}
    if "train_seconds" not in found and "train_seconds" in results.get("timings", {}):
        found["train_seconds"] = results["timings"]["train_seconds"]  # SB3's curve has none
    return found


def grade_all(args: argparse.Namespace) -> list[dict[str, Any]]:
    players = contenders(args)
    progress, rows = Progress(len(players)), []
    for name, policy, extra in players:
        began = time.perf_counter()
        graded = grade(policy, args.board, sample=args.sample, seed=args.seed,
                       walk_nodes=args.walk_nodes, walk_seconds=args.walk_seconds,
                       progress=lambda text, name=name: print(f"  {name}: {text}",
                                                               file=sys.stderr, flush=True))
        rows.append({"player": name, **extra, **graded,
                     "seconds": round(time.perf_counter() - began, 1)})
        print(f"{name}:\n{format_grade(graded)}", flush=True)
        progress.step(f"{name} graded in {duration(rows[-1]['seconds'])}")
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| player | own games: rate [95% CI] | random-depth: rate [95% CI] | "
             "undecided | best response as X | as O |", "|---|---|---|---:|---|---|"]
    for row in rows:
        rates = [row["sampled"][s] for s in ("games", "uniform")]
        cells = [f"{r['rate']:.1%} [{r['interval'][0]:.1%}, {r['interval'][1]:.1%}] of "
                 f"{r['decided']}" if r["rate"] is not None else "none decided" for r in rates]
        undecided = sum(r["undecided"] for r in rates)
        seats = [row["best_response"][s]["result"] for s in ("X", "O")]
        lines.append(f"| {row['player']} | {cells[0]} | {cells[1]} | {undecided} | "
                     f"{seats[0]} | {seats[1]} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--board", type=board_arg, default=game.rules(5, 5, 4))
    parser.add_argument("--players", nargs="*", default=list(PLAYERS), choices=player_names())
    parser.add_argument("--models", nargs="+", type=Path, default=[], metavar="PATH",
                        help="saved models to grade after the players (model.npz or model.zip)")
    parser.add_argument("--sample", type=bounded_int(1, 10_000), default=60,
                        help="positions per sampling and player")
    parser.add_argument("--walk-nodes", type=bounded_int(1, 10**6), default=300,
                        help="positions per best-response walk (per seat)")
    parser.add_argument("--walk-seconds", type=bounded_int(1, 3600), default=30,
                        help="seconds per best-response walk (per seat)")
    parser.add_argument("--seed", type=seed_arg, default=0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = writable(args.out, "grading.py") if args.out else None
    command = command_line(__name__, argv)
    began = time.perf_counter()
    rows = grade_all(args)
    print(table(rows))
    if out:
        write_json(out, {"command": command, "board": args.board.name, "sample": args.sample,
                         "walk_nodes": args.walk_nodes, "walk_seconds": args.walk_seconds,
                         "seed": args.seed, "seconds": round(time.perf_counter() - began, 1),
                         "public_figure": PUBLIC, "players": rows})
    return 0
