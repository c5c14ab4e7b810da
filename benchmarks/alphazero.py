"""Does AlphaZero reach perfect play, and how fast? ``train.py --algo alphazero --seed S``.

    python -m benchmarks alphazero                       # 3x3, seeds 0-4, into runs/benchmarks/
    python -m benchmarks alphazero --out benchmarks/results/alphazero_3x3.json   # committed
    python -m benchmarks alphazero --speed 3x3x3 4x4x4 6x6x4   # self-play speed, one process
    python -m benchmarks alphazero --speed 3x3x3 4x4x4 6x6x4 --workers 1 2 \
        --out benchmarks/results/alphazero_speed.json    # and in 1 and 2 Ray actors (committed)
    python -m benchmarks alphazero --speed 4x4x4 --workers 1 2 --training 60 --repeats 3 \
        --out benchmarks/results/alphazero_training_speed.json   # training, end to end
    python -m benchmarks alphazero --board 4x4x3 --minutes 90 --eval-minutes 15 --resume

Each seed is one ``train.py --algo alphazero --seed S`` run (self-play, exact evaluation of the
raw network every 256 games, stopped at the first perfect one or at ``--episodes`` games), in a
new process into a temporary folder removed afterwards. The JSON keeps each run's games to
perfect play, its training time (checkpoints included), the final raw network's exact figures
and its learning curve; with ``--search N`` also the exact figures of the saved network playing
through a search of N simulations. Games reproduce exactly on one machine and torch version;
seconds depend on the machine and its load.

With ``--minutes M`` each seed is instead one long run, ``train.py --algo alphazero --minutes M
--eval-minutes E`` (the raw network evaluated exactly every E minutes of training time), kept in
``--runs`` (default ``runs/benchmarks/alphazero-BOARD``, not a temporary folder): the results
JSON is rewritten after every checkpoint (its learning curve so far, read from the run's
``checkpoint.npz``), so a killed run loses nothing measured; with ``--resume`` a seed whose run
is already there continues it (``train.py --resume``) instead of starting again, and one that
has trained its M minutes is only collected.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.commands import argument_parser, command_line
from benchmarks.progress import (
    RUNS,
    board,
    processes,
    results_file,
    seed_runs,
    train_results,
    writable,
    write_json,
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from agents.run.flags import checked
    from gym_tictactoe.cli.arguments import positive_int, seed_arg, simulations_arg

    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--seeds", nargs="+", type=seed_arg, default=None,
                        help="default: 0-4, with --minutes 0 alone")
    parser.add_argument("--board", type=board, default="3x3x3", help="RxCxK (default: %(default)s)")
    parser.add_argument("--episodes", type=positive_int, default=30_000,
                        help="self-play games per run at most (default: %(default)s)")
    parser.add_argument("--search", type=simulations_arg, default=None, metavar="N",
                        help="also evaluate the saved network with a search of N simulations")
    parser.add_argument("--speed", nargs="+", type=board, default=None, metavar="RxCxK",
                        help="instead: self-play speed of an untrained network on these boards")
    parser.add_argument("--workers", nargs="+", type=processes, default=[], metavar="N",
                        help="with --speed: also in N Ray actors on a local Ray, for each N")
    parser.add_argument("--rounds", type=positive_int, default=4,
                        help="with --speed: rounds of 64 games timed (default: %(default)s)")
    parser.add_argument("--training", type=checked(float, 0), default=None, metavar="S",
                        help="with --speed: instead, training end to end, S seconds a run, in "
                             "process and in each count of --workers (benchmarks/"
                             "alphazero_speed.py)")
    parser.add_argument("--repeats", type=positive_int, default=3,
                        help="with --training: runs of each count, alternating (default: "
                             "%(default)s)")
    parser.add_argument("--out", type=results_file, default=None,
                        help="results JSON (default: runs/benchmarks/alphazero.json, with "
                             "--minutes alphazero_BOARD.json)")
    _add_long_runs(parser)
    args = parser.parse_args(argv)
    if args.learning_rate is not None and not args.resume:
        parser.error("--learning-rate goes with --resume (a new run takes train.py's default)")
    if args.training is not None and not (args.speed and args.workers):
        parser.error("--training goes with --speed BOARD... and --workers N...")
    if args.seeds is None:
        args.seeds = [0, 1, 2, 3, 4] if args.minutes is None else [0]
    if args.out is None:
        args.out = RUNS / ("alphazero.json" if args.minutes is None
                           else f"alphazero_{args.board}.json")
    return args


def _add_long_runs(parser: argparse.ArgumentParser) -> None:
    from agents.run.flags import checked

    long_runs = parser.add_argument_group("long runs (--minutes)")
    long_runs.add_argument("--minutes", type=checked(float, 0), default=None,
                           help="one train.py run per seed of this many minutes of training")
    long_runs.add_argument("--eval-minutes", type=checked(float, 0), default=15.0,
                           help="exact checkpoint period in training minutes (default: 15)")
    long_runs.add_argument("--runs", type=Path, default=None, help="where the runs are kept "
                           "(default: runs/benchmarks/alphazero-BOARD)")
    long_runs.add_argument("--resume", action="store_true",
                           help="continue each seed's run found in --runs")
    long_runs.add_argument("--learning-rate", type=checked(float, 0), default=None, metavar="X",
                           help="with --resume and more --minutes: a finished run goes on at "
                                "this learning rate (train.py --learning-rate)")


def run_seed(args: argparse.Namespace, seed: int, folder: Path) -> dict[str, Any]:
    """One ``train.py --algo alphazero --seed SEED`` into ``folder``; its figures."""
    command = ["train.py", "--algo", "alphazero", "--board", args.board, "--seed", str(seed),
               "--episodes", str(args.episodes), "--games", "20", "--no-progress",
               "--out", str(folder), "--name", "az"]
    results = train_results("alphazero.py", command, folder, f"--seed {seed}")
    run = {"seed": seed, "command": "python " + " ".join(command[:9]),
           "perfect_at_games": results.get("perfect_at_episodes"),
           "train_seconds": results["timings"]["train_seconds"],
           "final": {k: results.get(k) for k in ("optimal_move_rate", "best_response",
                                                  "perfect")},
           "hyperparameters": results["config"]["hyperparameters"],
           "versions": results["versions"], "learning_curve": results["learning_curve"]}
    if args.search is not None:
        run["with_search"] = with_search(next(folder.glob("az_*/model.npz")), args.search)
    return run


def with_search(model: Path, simulations: int) -> dict[str, Any]:
    """The exact figures of ``model`` playing through a search of ``simulations``."""
    from agents.models import load_policy
    from agents.sb3 import torch_threads
    from gym_tictactoe.evaluation import evaluate

    start = time.perf_counter()
    with torch_threads(1):
        policy, _ = load_policy(model, max_simulations=simulations)
        report = evaluate(policy)
    return {"simulations": simulations, "optimal_move_rate": report.move_rate.rate,
            "best_response": {s: r.result for s, r in report.best_response.items()},
            "perfect": report.perfect, "seconds": round(time.perf_counter() - start, 1)}


def untrained(board: str) -> Any:
    """A trainer of seed 0 on ``board`` (its untrained network) and its self-play settings from
    the empty board (no exploring starts, whose positions take seconds to enumerate on 4x4)."""
    import dataclasses

    from agents.alphazero import Trainer
    from gym_tictactoe import game

    trainer = Trainer(game.rules(*game.parse_board(board)), seed=0)
    return trainer, dataclasses.replace(trainer.settings.play, start_probability=0.0)


def speed(board: str, games: int = 64, rounds: int = 4) -> dict[str, Any]:
    """``rounds`` rounds of ``games`` self-play games in this process, otherwise the default
    settings, on an untrained network, one torch thread: games per second and boards per
    network call."""
    import numpy as np

    from agents.alphazero.self_play import play_games
    from agents.sb3 import torch_threads

    trainer, play = untrained(board)
    calls, moves, rng = [], 0, np.random.default_rng(0)

    def counting(boards: Any) -> Any:
        calls.append(len(boards))
        return trainer.evaluate(boards)

    start, cpu = time.perf_counter(), time.process_time()
    with torch_threads(1):
        for _ in range(rounds):
            moves += len(play_games(trainer.rules, counting, games, play, rng).outcomes)
    found = row(board, "in process", games * rounds, time.perf_counter() - start, moves,
                (len(calls), sum(calls), time.process_time() - cpu), play.simulations)
    return {**found, "games_per_round": games}


def ray_speed(board: str, workers: int, games: int = 64, rounds: int = 4) -> dict[str, Any]:
    """As ``speed``, each round's games shared among ``workers`` Ray actors (a local Ray already
    started); one warm-up round first (the actors start and import torch), timed apart."""
    from agents.alphazero.workers import RayPlayer

    trainer, play = untrained(board)
    start = time.perf_counter()
    player = RayPlayer(trainer.rules, play, trainer.settings.network, 0, workers)
    player(trainer.net, workers)
    startup, before = time.perf_counter() - start, player.counts()
    start, moves = time.perf_counter(), 0
    for _ in range(rounds):
        moves += len(player(trainer.net, games).outcomes)
    seconds, after = time.perf_counter() - start, player.counts()
    player.close()
    where = f"{workers} Ray worker" + "s" * (workers > 1) + f", {games} g/round" * (games != 64)
    found = row(board, where, games * rounds, seconds, moves,
                tuple(a - b for a, b in zip(after, before, strict=True)), play.simulations)
    return {**found, "games_per_round": games, "workers": workers,
            "startup_seconds": round(startup, 2)}


def row(board: str, where: str, games: int, seconds: float, moves: int,
        counts: tuple[Any, ...], simulations: int) -> dict[str, Any]:
    """One line of the speed table; ``counts``: network calls, boards evaluated and the CPU
    seconds of the processes playing (not Ray's own daemons, nor the driver waiting)."""
    calls, boards, cpu = counts
    return {"board": board, "where": where, "games": games, "seconds": round(seconds, 2),
            "games_per_second": round(games / seconds, 2), "cpu_seconds": round(cpu, 2),
            "games_per_cpu_second": round(games / cpu, 2), "moves": moves,
            "network_calls": calls, "boards_per_call": round(boards / calls, 1),
            "simulations": simulations, "workers": 0}


def speed_table(args: argparse.Namespace) -> int:
    """``--speed``: every board in this process, then in each count of Ray workers."""
    import platform

    from agents.run.numerics import cpu_model

    load, rows = os.getloadavg(), [speed(board, rounds=args.rounds) for board in args.speed]
    if args.workers:
        rows += ray_rows(args)
    print("board   where                           games/s  games/CPU s  boards/call")
    for found in rows:
        print(f"{found['board']:<8}{found['where']:<32}{found['games_per_second']:>7.1f}  "
              f"{found['games_per_cpu_second']:>11.1f}  {found['boards_per_call']:>11.1f}")
    machine = {"cpu": cpu_model(), "cpus": os.cpu_count(), "python": platform.python_version(),
               "load_average_at_start": load[0], "load_average_at_end": os.getloadavg()[0]}
    write(args.out, {"command": command_line(__name__), "machine": machine,
                     "versions": versions(), "speed": rows})
    return 0


def ray_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    import logging

    import ray

    ray.init(address="local", num_cpus=max(args.workers), include_dashboard=False,
             log_to_driver=False, logging_level=logging.WARNING)
    # Several workers split a round's 64 games, so each evaluates smaller batches; with 64
    # games each (a round of 64 x N) their batches are as big as one process's.
    cases = [(workers, games) for workers in args.workers
             for games in sorted({64, 64 * workers})]
    try:
        return [ray_speed(board, workers, games, rounds=args.rounds)
                for workers, games in cases for board in args.speed]
    finally:
        ray.shutdown()


def versions() -> dict[str, str]:
    import contextlib
    from importlib import metadata

    found = {}
    for name in ("torch", "numpy", "ray"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[name] = metadata.version(name)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    writable(args.out, "alphazero.py")
    if args.speed and args.training is not None:
        from benchmarks.alphazero_speed import training_speed

        return training_speed(args, write, command_line(__name__), versions())
    if args.speed:
        return speed_table(args)
    if args.minutes is not None:
        from benchmarks.alphazero_long import long_runs

        return long_runs(args, write)
    load = os.getloadavg()[0]

    def save(runs: list[dict[str, Any]]) -> None:
        write(args.out, {"command": command_line(__name__), "board": args.board,
                         "load_average_at_start": load, "runs": runs}, quiet=True)

    runs = seed_runs(args.seeds, partial(run_seed, args), "games", save)
    print("seed  perfect at  training s  final rate")
    for run in runs:
        reached = run["perfect_at_games"]
        print(f"{run['seed']:<6}{f'{reached:,}' if reached else '-':>10}  "
              f"{run['train_seconds']:>10.1f}  {run['final']['optimal_move_rate']:.4%}")
    print(f"results written to {args.out}")
    return 0


write = write_json  # the name alphazero_long and the speed table call
