"""The search players on the compiled core against the Python players they replaced, in one run:
``alphabeta`` positions a second and ``mcts`` simulations a second per board (the same node or
simulation budget for both, CPU time of this process), the reply time of alphabeta's default on
15x15x5, and the Elo of the new default against the old one (seeded games, both seats, each
opened by random plies near the centre).

    python -m benchmarks search_speed [--quick] [--out benchmarks/results/search_speed.json]

The old players come from git history (``benchmarks/legacy.py``). Times move with the machine's
load (the load average is recorded); the speed-ups are ratios measured side by side.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import alphabeta as ab
from benchmarks import legacy
from benchmarks.commands import argument_parser, command_line
from benchmarks.progress import Progress, writable, write_json
from gym_tictactoe import game
from gym_tictactoe.cli.arguments import board_arg, positive_int
from gym_tictactoe.players.search import DEFAULT_MAX_NODES, AlphaBetaPlayer

OLD_DEFAULT_NODES = 2000  # the Python player's default budget


def board_list(text: str) -> list[game.Rules]:
    return [board_arg(part) for part in text.split(",")]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--boards", type=board_list, default=board_list("6x6x4,15x15x5"),
                        help="boards RxCxK, comma-separated (default: 6x6x4,15x15x5)")
    parser.add_argument("--positions", type=positive_int, default=12,
                        help="positions a board (default: %(default)s)")
    parser.add_argument("--nodes", type=positive_int, default=20000,
                        help="alphabeta's node budget in the speed test (default: %(default)s)")
    parser.add_argument("--simulations", type=positive_int, default=1000,
                        help="mcts simulations a move in the speed test (default: %(default)s)")
    parser.add_argument("--elo-board", type=board_arg, default=board_arg("9x9x5"),
                        help="the board of the Elo games (default: 9x9x5)")
    parser.add_argument("--games", type=positive_int, default=20,
                        help="Elo games, half in each seat (default: %(default)s)")
    parser.add_argument("--quick", action="store_true", help="a few positions and games")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    return parser.parse_args(argv)


def _mark(board: np.ndarray) -> int:
    return game.X if np.count_nonzero(board) % 2 == 0 else game.O


def speed_positions(rules: game.Rules, count: int, seed: int = 0) -> list[np.ndarray]:
    """``count`` positions after 4 to 14 moves of seeded random games, unfinished: openings and
    middle games, where a search spends its budget (later positions of random play are mostly
    decided in a few plies, and their searches end early)."""
    geo, rng, found = ab.geometry(rules.rows, rules.cols, rules.win_length), \
        np.random.default_rng(seed), []
    while len(found) < count:
        _, seen = ab.play(geo, ab.random_player, ab.random_player, rng, stop=15)
        found += [b for b in seen if 4 <= np.count_nonzero(b) <= 14][::5]
    return found[:count]


def alphabeta_speed(rules: game.Rules, boards: list[np.ndarray], nodes: int) -> dict[str, Any]:
    """Positions a second of the old and the new player at the same budget, same positions:
    over every search (the Python edge included: checks, tables, a short search is mostly
    edge) and over the searches that used at least half the budget (the search itself)."""
    old = legacy.old_alphabeta()(rules.rows, rules.cols, rules.win_length, max_nodes=nodes)
    new = AlphaBetaPlayer(rules.rows, rules.cols, rules.win_length, max_nodes=nodes)
    new.search(boards[0], _mark(boards[0]))  # compiled (or loaded from the cache) first
    runs = {"old": [], "new": []}
    for board in boards:
        for name, player in (("old", old), ("new", new)):
            start = time.process_time()
            count = player.search(board, _mark(board)).nodes
            runs[name].append((count, time.process_time() - start))
    out: dict[str, Any] = {"max_nodes": nodes, "positions": len(boards)}
    for label, keep in (("all", lambda n: True), ("long", lambda n: 2 * n >= nodes)):
        picked = {name: [r for r in runs[name] if keep(r[0])] for name in runs}
        rates = {name: sum(r[0] for r in picked[name]) / max(sum(r[1] for r in picked[name]),
                                                              1e-9) for name in runs}
        out[label] = {"searches": len(picked["new"]), "nodes": sum(r[0] for r in picked["new"]),
                      **{f"{name}_positions_per_second": round(rates[name]) for name in runs},
                      "speedup": round(rates["new"] / max(rates["old"], 1e-9), 1)}
    return out


def mcts_speed(rules: game.Rules, boards: list[np.ndarray], simulations: int) -> dict[str, Any]:
    """Simulations a second of the old and the new ``mcts`` (seeded), same positions."""
    from gym_tictactoe.game.positions import from_board
    from gym_tictactoe.players.mcts import MCTSPlayer

    kwargs = {"rows": rules.rows, "cols": rules.cols, "win_length": rules.win_length, "seed": 0}
    out: dict[str, Any] = {"simulations": simulations, "positions": len(boards)}
    for name, kind in (("old", legacy.old_mcts()), ("new", MCTSPlayer)):
        player = kind(simulations, **kwargs)
        player.move(from_board(rules, boards[0]), np.random.default_rng(0))  # compile first
        count, start = 0, time.process_time()
        for board in boards:
            player.move(from_board(rules, board), np.random.default_rng(0))
            count += player.last.simulations
        seconds = time.process_time() - start
        out[name] = {"simulations": count, "cpu_seconds": round(seconds, 3),
                     "simulations_per_second": round(count / max(seconds, 1e-9))}
    out["speedup"] = round(out["new"]["simulations_per_second"]
                           / out["old"]["simulations_per_second"], 1)
    return out


def elo(rules: game.Rules, games: int, seed: int = 0) -> dict[str, Any]:
    """The new default against the old default: ``games`` seeded games, half in each seat."""
    from gym_tictactoe.evaluation.ratings import elo_ratings

    geo = ab.geometry(rules.rows, rules.cols, rules.win_length)
    new = AlphaBetaPlayer(rules.rows, rules.cols, rules.win_length).act
    old = legacy.old_alphabeta()(rules.rows, rules.cols, rules.win_length,
                                 max_nodes=OLD_DEFAULT_NODES).act
    rng, tally = np.random.default_rng(seed), {"new": {"X": 0, "O": 0, "draw": 0},
                                               "old": {"X": 0, "O": 0, "draw": 0}}
    progress = Progress(games)
    for i in range(games):
        x_name = "new" if i % 2 == 0 else "old"
        x, o = (new, old) if x_name == "new" else (old, new)
        winner, _ = ab.play(geo, x, o, rng, opening=2)
        tally[x_name]["draw" if winner == 0 else "X" if winner == game.X else "O"] += 1
        progress.step(f"game {i + 1}: {x_name} as X, winner {'-XO'[winner]}")
    rows = [("new", "old", tally["new"]), ("old", "new", tally["old"])]
    rating = elo_ratings(["old", "new"], rows)[1]
    return {"board": rules.name, "games": games, "opening_plies": 2,
            "new_max_nodes": DEFAULT_MAX_NODES, "old_max_nodes": OLD_DEFAULT_NODES,
            "new_as_X": tally["new"], "old_as_X": tally["old"],
            "new_score": rating.points / max(rating.games, 1),
            "elo_new_over_old": round(rating.elo),
            # With two players a rating's interval is that of its distance from their mean,
            # half the difference: the difference's interval is twice as wide.
            "interval_95": round(2 * rating.interval)}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {"load_average": os.getloadavg()[0], "cpus": os.cpu_count(),
                               "boards": {}}
    for rules in args.boards:
        print(f"{rules.name}: positions ...", file=sys.stderr, flush=True)
        boards = ab.positions(rules.rows, rules.cols, rules.win_length, args.positions)
        entry = results["boards"][rules.name] = {}
        entry["alphabeta"] = alphabeta_speed(rules, boards, args.nodes)
        entry["alphabeta_openings"] = alphabeta_speed(
            rules, speed_positions(rules, args.positions), args.nodes)
        print(f"{rules.name}: alphabeta {entry['alphabeta_openings']}", file=sys.stderr,
              flush=True)
        print(f"{rules.name}: alphabeta {entry['alphabeta']}", file=sys.stderr, flush=True)
        entry["mcts"] = mcts_speed(rules, boards, args.simulations)
        print(f"{rules.name}: mcts {entry['mcts']}", file=sys.stderr, flush=True)
    gomoku = ab.positions(15, 15, 5, args.positions * 2)
    results["default_reply_15x15x5"] = {
        "max_nodes": DEFAULT_MAX_NODES, **ab.reply_times(AlphaBetaPlayer(15, 15, 5), gomoku)}
    results["elo"] = elo(args.elo_board, args.games)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.out is not None:
        writable(args.out, "search_speed.py")
    if args.quick:
        args.positions, args.games, args.nodes = 3, 2, 2000
    results = measure(args)
    results["command"] = command_line(__name__)
    for name, entry in results["boards"].items():
        speed, early = entry["alphabeta"], entry["alphabeta_openings"]
        print(f"{name}: alphabeta x{speed['all']['speedup']} over positions of play, "
              f"x{early['all']['speedup']} over openings (x{early['long']['speedup']} where the "
              f"search used half its budget or more); mcts x{entry['mcts']['speedup']}")
    reply, rating = results["default_reply_15x15x5"], results["elo"]
    print(f"15x15x5 default reply ({reply['max_nodes']} nodes): median {reply['median_ms']:.1f}"
          f" ms, CPU median {reply['cpu_median_ms']:.1f} ms")
    print(f"Elo of the new default over the old on {rating['board']}: "
          f"{rating['elo_new_over_old']} +/- {rating['interval_95']} ({rating['games']} games)")
    if args.out is not None:
        write_json(args.out, results)
    return 0
