"""The value of every opening of a few random plies, proved: what perfect play gets from the
positions the Elo tables' games start from.

    python -m benchmarks openings [--board 6x6x4] [--plies 2] [--seconds 60] [--out PATH]

``python -m benchmarks elo`` opens every game with ``--opening`` uniformly random plies (2), so
that two players who answer a position alike do not play one game over and over. Where every
such opening is won for the first player, the second player scores only when the first fails to
convert a won position: no player, however strong, can be far ahead of an opponent that
converts its wins as X. This benchmark proves each opening's value with the compiled proof
solver (one opening per class under the board's symmetries, on one transposition table, each
within ``--seconds`` of wall time: ``Prover.value_within``; one that runs out is ``unknown``) and
counts the openings by value, each class weighted by the ply sequences that reach it (the
openings' chances under uniformly random plies).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from math import perm
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.commands import argument_parser, command_line
from benchmarks.progress import RUNS, board, duration, line, results_file, writable, write_json
from benchmarks.proofs import NAMES
from gym_tictactoe import game

MAX_SEQUENCES = 1 << 20  # ply sequences enumerated: 2 plies on 15x15 are 50,400


def openings(rules: game.Rules, plies: int) -> dict[bytes, tuple[np.ndarray, int]]:
    """The positions ``plies`` alternating stones (X first) reach, one per symmetry class, keyed
    by its canonical cells: the cells and how many ply sequences reach the class."""
    from gym_tictactoe.game.symmetry import canonicalize

    cells = np.zeros((perm(rules.n_cells, plies), rules.n_cells), np.int8)
    for row, sequence in enumerate(itertools.permutations(range(rules.n_cells), plies)):
        cells[row, list(sequence)] = [game.X if ply % 2 == 0 else game.O
                                      for ply in range(plies)]
    canonical, _ = canonicalize(rules, cells)
    classes: dict[bytes, tuple[np.ndarray, int]] = {}
    for image in canonical:
        key = image.tobytes()
        classes[key] = (image, classes[key][1] + 1 if key in classes else 1)
    return classes


def prove(rules: game.Rules, classes: dict[bytes, tuple[np.ndarray, int]],
          seconds: float) -> list[dict[str, Any]]:
    """Each class's row: its stones, the value for X (the first player), the openings that
    reach it, nodes and seconds; a progress line each on stderr."""
    from gym_tictactoe.game.notation import cell_name_any
    from gym_tictactoe.game.proofs import Prover

    # One node of the empty board loads (or compiles) the code; the budget of the questions is
    # their seconds, so the node budget is unbounded after it.
    prover = Prover(rules, budget=1, small=True)
    prover.value_of_cells(np.zeros(rules.n_cells, np.int8))
    prover.budget, prover.nodes = 10**15, 0
    rows, start = [], time.perf_counter()
    for done, (cells, count) in enumerate(sorted(classes.values(), key=lambda c: -c[1]), 1):
        nodes, began = prover.nodes, time.perf_counter()
        value = prover.value_within(rules.encode(cells), seconds)
        x_to_move = (cells == game.X).sum() == (cells == game.O).sum()
        for_x = value if value is None or x_to_move else -value
        stones = {name: [cell_name_any(int(c), rules.shape) for c in np.flatnonzero(cells == v)]
                  for name, v in (("X", game.X), ("O", game.O))}
        rows.append({**stones, "value": NAMES[for_x], "openings": count,
                     "nodes": prover.nodes - nodes,
                     "seconds": round(time.perf_counter() - began, 2)})
        print(f"  [{done}/{len(classes)}] X {' '.join(stones['X'])} O {' '.join(stones['O'])}: "
              f"{NAMES[for_x]}; {line(done, len(classes), time.perf_counter() - start)}",
              file=sys.stderr, flush=True)
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Openings and classes by value."""
    return {name: {"openings": sum(r["openings"] for r in rows if r["value"] == name),
                   "classes": sum(r["value"] == name for r in rows)}
            for name in NAMES.values()}


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--board", type=board, default="6x6x4")
    parser.add_argument("--plies", type=int, default=2,
                        help="random plies opening each game (elo --opening; default: 2)")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="wall-clock budget per opening (default: 60)")
    parser.add_argument("--out", type=results_file, default=None,
                        help="results JSON (default: runs/benchmarks/openings_BOARD.json)")
    args = parser.parse_args(argv)
    rules = game.rules(*game.parse_board(args.board))
    if not 0 <= args.plies < rules.n_cells or perm(rules.n_cells, args.plies) > MAX_SEQUENCES:
        parser.error(f"--plies must leave the game open and give at most {MAX_SEQUENCES:,} ply "
                     f"sequences on {args.board}; got {args.plies}")
    if not (args.seconds > 0 and np.isfinite(args.seconds)):
        parser.error(f"--seconds must be a number > 0; got {args.seconds}")
    if rules.n_cells > 64:
        parser.error(f"the proof solver takes boards of at most 64 cells; {args.board} has "
                     f"{rules.n_cells}")
    args.rules = rules
    args.out = writable(args.out or RUNS / f"openings_{args.board}.json", "openings")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    load, start, cpu = os.getloadavg()[0], time.perf_counter(), time.process_time()
    classes = openings(args.rules, args.plies)
    rows = prove(args.rules, classes, args.seconds)
    counts = summary(rows)
    write_json(Path(args.out), {
        "command": command_line(__name__), "board": args.board, "plies": args.plies,
        "seconds_budget": args.seconds, "openings": sum(c for _, c in classes.values()),
        "classes": len(classes), "by_value": counts, "nodes": sum(r["nodes"] for r in rows),
        "seconds": round(time.perf_counter() - start, 1),
        "cpu_seconds": round(time.process_time() - cpu, 1), "load_average_at_start": load,
        "rows": rows})
    for name, count in counts.items():
        print(f"{args.board}, {args.plies} plies: {count['openings']:,} openings "
              f"({count['classes']} classes) {name}")
    print(f"{duration(time.perf_counter() - start)}")
    return 0
