"""Does any damaged or hostile file get past its loader? A seeded mutation fuzz of the five kinds
of file the project reads: the Q-table, SB3 and AlphaZero model files, an AlphaZero training
checkpoint and a solved board's cache file.

    python -m benchmarks fuzz                                   # 1,000 mutants of each
    python -m benchmarks fuzz --out benchmarks/results/fuzz.json    # the committed figures
    python -m benchmarks fuzz --targets q cache --count 200 --seed 1

Each file is written by the project's own writer (``fuzz_targets``), then mutated ``--count``
times (``mutants``: bytes flipped, cut, repeated, appended; members removed, repeated, renamed,
added, recompressed or damaged inside; .npy headers given other shapes, dtypes (``'<U0'``
included) and orders; NaN, +inf, -inf and 1e308 written into float arrays and JSON fields). Every
mutant must be refused with the loader's one-line error or load into something usable (see
``fuzz_targets``); anything else escapes. Each kind is loaded in a process of its own under a
memory cap (``--memory-mib`` above what loading the original took; a MemoryError escapes) and a
``--seconds`` alarm per mutant (a hang escapes); a process that dies is an escape too, and the
next one goes on after the mutant that killed it. Prints progress and every escape; the exit
status is 1 when anything escaped. The JSON (only with ``--out``) holds the counts per kind and
mutator and every escape.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.commands import argument_parser, child
from benchmarks.fuzz_targets import TARGETS, attempt
from benchmarks.mutants import mutants
from benchmarks.progress import writable, write_json

HANG_STATUS = 124  # a worker's exit status when a load outlived --seconds
def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--targets", nargs="+", choices=list(TARGETS), default=list(TARGETS))
    parser.add_argument("--count", type=int, default=1000, help="mutants of each kind")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--memory-mib", type=int, default=1024,
                        help="address space a load may take beyond the original's")
    parser.add_argument("--seconds", type=int, default=60, help="the longest a load may take")
    parser.add_argument("--out", type=Path, help="results JSON (none without it)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for name in ("count", "memory_mib", "seconds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if not 0 <= args.seed < 2**32:
        parser.error("--seed must be from 0 to 4,294,967,295")
    return args


def fuzz_target(args: argparse.Namespace, target: str) -> dict[str, Any]:
    """Every mutant of ``target``, loaded by worker processes (a new one after one dies)."""
    outcomes: Counter[str] = Counter()
    by_mutator: dict[str, Counter[str]] = {}
    escapes: list[dict[str, Any]] = []
    started, start = time.perf_counter(), 0
    while start < args.count:
        command, env = child("fuzz", "--worker", target, "--start", str(start),
                             *(f"--{k}={getattr(args, k.replace('-', '_'))}"
                               for k in ("count", "seed", "memory-mib", "seconds")))
        pending = None
        with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) as worker:
            for line in worker.stdout:
                record = json.loads(line)
                if "outcome" not in record:  # the worker is about to load this one
                    pending = record
                    continue
                pending, start = None, record["index"] + 1
                tally(record, target, outcomes, by_mutator, escapes)
                if start % 100 == 0:
                    print(f"  {target}: {start:,}/{args.count:,} {dict(outcomes)} "
                          f"({time.perf_counter() - started:.0f} s)", flush=True)
        if pending is not None:  # it died loading that one
            why = ("a hang" if worker.returncode == HANG_STATUS
                   else f"exit status {worker.returncode}")
            tally({**pending, "outcome": "escaped", "detail": f"the loading process died ({why})"},
                  target, outcomes, by_mutator, escapes)
            start = pending["index"] + 1
        elif worker.returncode != 0:
            raise SystemExit(f"error: the {target} worker failed (exit status "
                             f"{worker.returncode}) before loading a mutant")
    return {"mutants": args.count, "outcomes": dict(outcomes),
            "by_mutator": {name: dict(c) for name, c in sorted(by_mutator.items())},
            "escapes": escapes, "seconds": round(time.perf_counter() - started, 1)}


def tally(record: dict[str, Any], target: str, outcomes: Counter[str],
          by_mutator: dict[str, Counter[str]], escapes: list[dict[str, Any]]) -> None:
    outcomes[record["outcome"]] += 1
    by_mutator.setdefault(record["mutator"], Counter())[record["outcome"]] += 1
    if record["outcome"] == "escaped":
        escapes.append({k: record[k] for k in ("index", "mutator", "detail")})
        print(f"  ESCAPED {target} #{record['index']} ({record['mutator']}): "
              f"{record['detail'][:200]}", flush=True)


def work(args: argparse.Namespace) -> int:
    """The worker: make the original, load it once, cap the memory, then each mutant from
    ``--start`` on, a JSON line before and after each."""
    target = TARGETS[args.worker]
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        original = target.make(folder)
        outcome = attempt(target, folder / target.file_name, original)
        if outcome[0] != "loaded":
            sys.exit(f"error: the original {target.name} file does not load: {outcome}")
        data = (folder / target.file_name).read_bytes()
        path = folder / "mutant" / target.file_name
        path.parent.mkdir()
        for index, (mutator, mutant) in enumerate(mutants(data, args.count, args.seed)):
            if index < args.start:
                continue
            print(json.dumps({"index": index, "mutator": mutator}), flush=True)
            path.write_bytes(mutant)
            watchdog = threading.Timer(args.seconds, os._exit, (HANG_STATUS,))
            watchdog.start()
            with memory_cap(args.memory_mib):
                outcome, detail = attempt(target, path, original)
            watchdog.cancel()
            print(json.dumps({"index": index, "mutator": mutator, "outcome": outcome,
                              "detail": detail[:500]}), flush=True)
    return 0


@contextmanager
def memory_cap(mib: int) -> Iterator[None]:
    """The address space capped, for the block, at ``mib`` MiB more than the process has now
    (Linux's /proc tells how much; elsewhere no cap)."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        yield
        return
    size = next(int(line.split()[1]) * 1024 for line in status.splitlines()
                if line.startswith("VmSize:"))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = size + mib * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard < 0 else min(limit, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        return work(args)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # for the workers: one thread each
    out = writable(args.out, "fuzz.py") if args.out else None
    results: dict[str, Any] = {"count": args.count, "seed": args.seed,
                               "memory_mib": args.memory_mib, "seconds": args.seconds,
                               "targets": {}}
    for target in args.targets:
        print(f"{target}: {args.count:,} mutants of {TARGETS[target].file_name}", flush=True)
        results["targets"][target] = found = fuzz_target(args, target)
        print(f"{target}: {found['outcomes']} in {found['seconds']:.0f} s", flush=True)
        if out:
            write_json(out, results, quiet=True)
    escaped = sum(len(found["escapes"]) for found in results["targets"].values())
    print(f"{escaped} of {args.count * len(args.targets):,} mutants escaped")
    if out:
        print(f"results written to {out}")
    return 1 if escaped else 0
