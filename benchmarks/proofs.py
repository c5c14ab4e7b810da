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

Agreement: the prover's value of every reachable position of each board (by default every
board of at most 16 cells: ``every_board``) against the table solver's, proved in chunks of
positions on one table per board with a progress line each; with ``--sample N``, boards with
more positions get a seeded sample of N. The results are printed; they are written as JSON only
to ``--out``.
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
from benchmarks.progress import Progress, duration, line, writable, write_json
from gym_tictactoe import game

PUBLISHED = {"4x5x4": 0, "4x6x4": 0, "5x5x4": 0, "5x5x5": 0, "5x6x4": 1, "6x6x4": 1,
             "6x6x5": 0}
STRETCH = {"7x7x5": 0}  # Hsu et al., Theoretical Computer Science 815 (2020)
AGREEMENT_CHUNK = 1 << 18  # positions per compiled call: a progress line each
AGREEMENT_TABLE = 1 << 26  # bytes of the prover's table, shared by a board's positions
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


def every_board(cells: int = game.SOLVED_CELLS) -> list[str]:
    """Every board of at most ``cells`` cells the rules accept, smallest first: each rows x
    cols in both orientations (the same game transposed, but another bit layout and other line
    masks for the prover) and each win length up to the longer side."""
    sizes = [(r * c, r, c, k) for r in range(1, game.MAX_SIDE + 1)
             for c in range(1, game.MAX_SIDE + 1) if r * c <= cells
             for k in range(1, max(r, c) + 1)]
    return [f"{r}x{c}x{k}" for _, r, c, k in sorted(sizes)]


def agreement(boards: list[str], sample: int | None, seed: int = 0) -> list[dict[str, Any]]:
    """Per board: positions checked (all of them unless ``sample`` is fewer), how many of
    them the prover and the table solver disagree on (the first few named), and seconds."""
    from gym_tictactoe.game.proofs import Prover

    # Loaded (or compiled) once before the clock of the first board starts.
    Prover(game.TICTACTOE, table_bytes=1 << 10, small=True).values([game.EMPTY_BOARD])
    progress, rows = Progress(len(boards)), []
    for board in boards:
        # Rules of its own, not game.rules' cached one: its positions are freed after it.
        rows.append(agree_on(game.Rules(*game.parse_board(board)), sample, seed))
        progress.step(f"{board}: {rows[-1]['positions']:,} positions, "
                      f"{rows[-1]['disagreements']} disagreements, "
                      f"{duration(rows[-1]['seconds'])}")
    return rows


def agree_on(rules: game.Rules, sample: int | None, seed: int) -> dict[str, Any]:
    """One board's row: the table solver builds it in memory (no cache files for hundreds of
    boards), the prover proves the positions in chunks on one table."""
    from gym_tictactoe.game import solver
    from gym_tictactoe.game.proofs import Prover

    start, proving = time.perf_counter(), 0.0
    solution, codes = solver.build(rules), rules.reachable
    every = sample is None or len(codes) <= sample
    if not every:
        codes = np.random.default_rng(seed).choice(codes, sample, replace=False)
    prover = Prover(rules, budget=1 << 62, table_bytes=AGREEMENT_TABLE, small=True)
    wrong, checking = 0, time.perf_counter()
    first: list[dict[str, int]] = []  # the first few disagreements
    for at in range(0, len(codes), AGREEMENT_CHUNK):
        chunk = codes[at : at + AGREEMENT_CHUNK]
        for_x = solution.value_of(chunk).astype(np.int8)
        expected = np.where(rules.to_move_of(chunk) == game.O, -for_x, for_x)
        began = time.perf_counter()
        got = prover.values(chunk)  # 2 (unknown) never equals a value: it counts as wrong
        proving += time.perf_counter() - began
        bad = np.flatnonzero(got != expected)
        wrong += bad.size
        first += [{"code": int(chunk[i]), "table": int(expected[i]), "prover": int(got[i])}
                  for i in bad[: 5 - len(first)]]
        if len(codes) > AGREEMENT_CHUNK:
            print(f"  {rules.name}: {at + len(chunk):,} of {len(codes):,}; "
                  f"{line(at + len(chunk), len(codes), time.perf_counter() - checking)}",
                  file=sys.stderr, flush=True)
    return {"board": rules.name, "positions": len(codes), "all_positions": every,
            "reachable": len(rules.reachable), "disagreements": wrong,
            "first_disagreements": first, "seconds": round(time.perf_counter() - start, 1),
            "prover_seconds": round(proving, 1)}


def agreement_boards(parser: argparse.ArgumentParser, boards: list[str] | None) -> list[str]:
    """The boards asked for (every board of at most 16 cells by default), each checked to be
    one the table solver solves before any work; a bad one is one usage line."""
    try:
        for board in boards or []:
            game.rules(*game.parse_board(board)).check_solvable("the agreement check")
    except ValueError as error:
        parser.error(str(error))
    return boards or every_board()


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
    parser.add_argument("--sample", type=int, default=None,
                        help="agreement: positions per board at most (a seeded sample beyond); "
                             "default: every reachable position")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(prove_one(args.one, args.seconds, args.table_mb << 20)))
        return 0
    out = writable(args.out, "proofs.py") if args.out else None
    command = command_line(__name__, argv)
    if args.agreement:
        rows = agreement(agreement_boards(parser, args.boards), args.sample)
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
