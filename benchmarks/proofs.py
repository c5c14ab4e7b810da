"""The published m,n,k results, proved from the empty board by the compiled proof solver, and the
proof solver checked against the table solver.

    python -m benchmarks proofs [--boards 4x5x4 5x5x4 ...] [--seconds 600] [--out PATH]
    python -m benchmarks proofs --agreement [--boards 3x3x3 3x4x3 ...] [--sample N] [--out PATH]

Proofs: each board is proved in a fresh process (so its peak memory is its own: the
transposition table and the compiled code), wall and CPU seconds apart (the machine may be
shared), with a wall-clock budget per board (rounds of
doubling node budgets on one table: ``Prover.value_within``); a board that runs out is reported
with its nodes and seconds as ``unknown``. The published values (Uiterwijk, IEEE CoG 2019):
4x5x4, 4x6x4, 5x5x4 draws; 5x6x4 and 6x6x4 first-player wins; 5x5x5 and 6x6x5 draws.

Agreement: the prover's value of every reachable position of each board (of at most 16 cells)
against the table solver's; boards with more positions than ``--sample`` get a seeded sample of
that many. The results are printed; they are written as JSON only to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.commands import argument_parser, child, command_line
from benchmarks.progress import Progress, duration, writable, write_json
from gym_tictactoe import game

PUBLISHED = {"4x5x4": 0, "4x6x4": 0, "5x5x4": 0, "5x5x5": 0, "5x6x4": 1, "6x6x4": 1,
             "6x6x5": 0}
STRETCH = {"7x7x5": 0}  # Hsu et al., Theoretical Computer Science 815 (2020)
SMALL = ("3x3x3", "3x4x3", "4x3x3", "3x4x4", "2x6x3", "4x4x3", "4x4x4")
FIRST_ROUND = 1 << 24  # nodes: most boards finish in the first round; each later one doubles
NAMES = {1: "first-player win", 0: "draw", -1: "second-player win", None: "unknown"}


def prove_one(board: str, seconds: float, table_bytes: int) -> dict[str, Any]:
    """Prove one board from the empty board in this process: its row of the table."""
    from gym_tictactoe.game.proofs import Prover

    start = time.perf_counter()
    prover = Prover(game.rules(*game.parse_board(board)), table_bytes=table_bytes, budget=1)
    prover.value(game.EMPTY_BOARD)  # one node: loads (or compiles) the code, timed apart
    prover.budget, prover.nodes = 10**15, 0
    loaded, cpu = time.perf_counter(), time.process_time()
    value = prover.value_within(game.EMPTY_BOARD, seconds, first_round=FIRST_ROUND)
    elapsed, cpu = time.perf_counter() - loaded, time.process_time() - cpu
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    published = {**PUBLISHED, **STRETCH}.get(board)
    return {"board": board, "value": NAMES[value], "published": NAMES[published],
            "nodes": prover.nodes, "seconds": round(elapsed, 2),
            "cpu_seconds": round(cpu, 2), "load_seconds": round(loaded - start, 2),
            "nodes_per_cpu_second": round(prover.nodes / max(cpu, 1e-9)),
            "peak_memory_mb": round(peak_kib / 1024, 1), "table_mb": table_bytes >> 20,
            "seconds_budget": seconds}


def prove_all(boards: list[str], seconds: float, table_bytes: int) -> list[dict[str, Any]]:
    progress, rows = Progress(len(boards)), []
    for board in boards:
        command, env = child("proofs", "--one", board, "--seconds", str(seconds),
                             "--table-mb", str(table_bytes >> 20))
        try:
            done = subprocess.run(command, capture_output=True, text=True, env=env,
                                  timeout=seconds * 3 + 120)
            row = json.loads(done.stdout.strip().splitlines()[-1])
        except (subprocess.TimeoutExpired, IndexError, json.JSONDecodeError):
            row = {"board": board, "value": "unknown", "error": "the proof process failed"}
        rows.append(row)
        progress.step(f"{board}: {row['value']}, {row.get('nodes', 0):,} nodes, "
                      f"{duration(row.get('seconds', 0))}")
    return rows


def agreement(boards: list[str], sample: int, seed: int = 0) -> list[dict[str, Any]]:
    """Per board: positions checked, how many disagree, and whether that was all of them."""
    from gym_tictactoe.game import solver
    from gym_tictactoe.game.proofs import Prover

    rows = []
    for board in boards:
        rules = game.rules(*game.parse_board(board))
        codes, every = rules.reachable, len(rules.reachable) <= sample
        if not every:
            codes = np.random.default_rng(seed).choice(codes, sample, replace=False)
        for_x = solver.solve(rules).value_of(codes).astype(np.int64)
        expected = np.where(rules.to_move_of(codes) == game.O, -for_x, for_x)
        prover, start = Prover(rules, table_bytes=1 << 26, small=True), time.perf_counter()
        got = np.array([prover.value(int(code)) for code in codes])
        rows.append({"board": board, "positions": len(codes), "all_positions": every,
                     "reachable": len(rules.reachable),
                     "disagreements": int((got != expected).sum()),
                     "seconds": round(time.perf_counter() - start, 1)})
        print(f"{board}: {rows[-1]}", file=sys.stderr, flush=True)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| board | value | published | nodes | seconds | CPU s | nodes per CPU s | peak MB |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['board']} | {r['value']} | {r.get('published', '')} | "
                     f"{r.get('nodes', 0):,} | {r.get('seconds', '')} | "
                     f"{r.get('cpu_seconds', '')} | "
                     f"{r.get('nodes_per_cpu_second', 0):,} | {r.get('peak_memory_mb', '')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--boards", nargs="+", default=None)
    parser.add_argument("--seconds", type=float, default=600.0, help="wall budget per board")
    parser.add_argument("--table-mb", type=int, default=256, help="transposition table size")
    parser.add_argument("--agreement", action="store_true")
    parser.add_argument("--sample", type=int, default=200_000,
                        help="agreement: positions per board at most (a seeded sample beyond)")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(prove_one(args.one, args.seconds, args.table_mb << 20)))
        return 0
    out = writable(args.out, "proofs.py") if args.out else None
    command = command_line(__name__, argv)
    if args.agreement:
        rows = agreement(args.boards or list(SMALL), args.sample)
        print(json.dumps(rows, indent=1))
    else:
        rows = prove_all(args.boards or list(PUBLISHED), args.seconds, args.table_mb << 20)
        print(table(rows))
    if out:
        write_json(out, {"command": command, "machine_cores": _cores(), "runs": rows})
    return 0


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
