"""``benchmarks/alphazero.py --speed BOARD... --training S``: AlphaZero's training speed end to
end (self-play, the learner's gradient steps, the weights sent to the actors), in games a second.

Each run is ``Trainer.train`` for ``S`` seconds of training time on an untrained network of
seed 0, with ``train.py``'s rounds: in this process (no ``--workers``), then with each count of
Ray actors of ``--workers`` (``workers.RayPlayer``: ``games_per_round`` games and
``steps_per_round`` steps per actor a round, learning overlapping the next round's self-play),
one after the other, ``--repeats`` times, so that a machine's load weighs on every count alike.
The actors start (and import torch) before the clock does. Self-play starts at the empty board
(exploring starts enumerate a 4x4 board's positions first, which takes seconds in each actor).
Each run also counts the boards evaluated per network call in self-play (its leaves per call,
the batch each call gets), and the load average before and after it: a busy machine's figures
are lower bounds, and with fewer free cores than actors plus the learner, the actors take
turns.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any


def training_run(board: str, workers: int | None, seconds: float) -> dict[str, Any]:
    """``seconds`` of training on ``board`` in this process (``workers`` None) or with that many
    Ray actors (a local Ray already started); its games a second and leaves per network call."""
    from agents.alphazero import Trainer
    from agents.alphazero.workers import RayPlayer
    from agents.sb3 import torch_threads
    from gym_tictactoe import game

    rules, settings = game.rules(*game.parse_board(board)), _settings()
    trainer, calls = Trainer(rules, settings, seed=0), [0.0, 0.0, 0.0]
    if workers is None:
        evaluate = trainer.evaluate

        def counting(boards: Any) -> Any:
            calls[0], calls[1] = calls[0] + 1, calls[1] + len(boards)
            return evaluate(boards)

        trainer.evaluate = counting  # type: ignore[method-assign]
    else:
        trainer.player = player = RayPlayer(rules, settings.play, settings.network, 0, workers)
        player(trainer.net, workers)  # the actors started, torch imported, before the clock
        before = player.counts()
    load = os.getloadavg()[0]
    try:
        with torch_threads(1):
            trainer.train(None, None, minutes=seconds / 60)
        if workers is not None:
            # Counted once the round sent ahead at the end is played too: a round more.
            calls[:] = [a - b for a, b in zip(player.counts(), before, strict=True)]
    finally:
        if workers is not None:
            player.close()
    return {"board": board, "workers": workers or 0, **_figures(trainer, calls),
            "load_average_before": round(load, 2),
            "load_average_after": round(os.getloadavg()[0], 2)}


def _figures(trainer: Any, calls: list[float]) -> dict[str, Any]:
    """A finished run's games a second, its rounds, and ``calls``' network calls, leaves and
    the actors' CPU seconds (0 in process)."""
    return {"games": trainer.games, "seconds": round(trainer.seconds, 2),
            "games_per_second": round(trainer.games / trainer.seconds, 2),
            "driver_cpu_seconds": round(trainer.cpu_seconds or 0.0, 2),
            "round_games": trainer.round_games(None, 0),
            "round_steps": trainer.settings.steps_per_round * trainer.workers,
            "actor_cpu_seconds": round(calls[2], 2),
            "network_calls": int(calls[0]), "leaves_per_call": round(calls[1] / calls[0], 1)}


def _settings() -> Any:
    """``Trainer``'s defaults, self-play from the empty board."""
    from agents.alphazero import AlphaZeroSettings

    defaults = AlphaZeroSettings()
    return dataclasses.replace(defaults, play=dataclasses.replace(
        defaults.play, start_probability=0.0))


def training_rows(boards: list[str], workers: list[int], seconds: float,
                  repeats: int) -> list[dict[str, Any]]:
    """Every board: ``repeats`` times in this process, then with each count of ``workers``."""
    import logging

    import ray

    ray.init(address="local", num_cpus=max(workers), include_dashboard=False,
             log_to_driver=False, logging_level=logging.WARNING)
    rows = []
    try:
        for board in boards:
            for repeat in range(repeats):
                for count in [None, *workers]:
                    found = {**training_run(board, count, seconds), "repeat": repeat}
                    print(f"{board:<8}{where(count):<16}repeat {repeat}  "
                          f"{found['games_per_second']:>7.1f} games/s  "
                          f"{found['leaves_per_call']:>5.1f} leaves/call  "
                          f"load {found['load_average_before']:.1f}", flush=True)
                    rows.append(found)
    finally:
        ray.shutdown()
    return rows


def where(workers: int | None) -> str:
    return "in process" if not workers else f"{workers} Ray worker" + "s" * (workers > 1)


def summary(rows: list[dict[str, Any]], workers: list[int]) -> list[dict[str, Any]]:
    """Per board and count: the mean games a second over the repeats, and its ratio to one
    worker's (the repeats paired: each count's run beside one worker's of the same repeat)."""
    found = []
    for board in dict.fromkeys(row["board"] for row in rows):
        rate = {(row["workers"], row["repeat"]): row["games_per_second"]
                for row in rows if row["board"] == board}
        repeats = sorted({repeat for _, repeat in rate})
        for count in [0, *workers]:
            mean = sum(rate[count, r] for r in repeats) / len(repeats)
            ratios = [rate[count, r] / rate[1, r] for r in repeats] if 1 in workers else []
            found.append({"board": board, "where": where(count),
                          "games_per_second": round(mean, 2),
                          "to_one_worker": [round(ratio, 2) for ratio in ratios]})
    return found


def training_speed(args: Any, write: Any, command: str, versions: dict[str, str]) -> int:
    """``--speed ... --training S``: the rows, a summary, the machine and its load."""
    import platform

    from agents.run.numerics import cpu_model

    start = time.perf_counter()
    load = os.getloadavg()
    rows = training_rows(args.speed, args.workers, args.training, args.repeats)
    table = summary(rows, args.workers)
    print("board   where           games/s  to 1 worker, per repeat")
    for line in table:
        ratios = ", ".join(f"{ratio:.2f}x" for ratio in line["to_one_worker"])
        print(f"{line['board']:<8}{line['where']:<16}{line['games_per_second']:>7.1f}  {ratios}")
    machine = {"cpu": cpu_model(), "cpus": os.cpu_count(), "python": platform.python_version(),
               "load_average_at_start": [round(x, 2) for x in load],
               "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
               "wall_seconds": round(time.perf_counter() - start, 1)}
    write(args.out, {"command": command, "machine": machine, "versions": versions,
                     "training_seconds_per_run": args.training, "summary": table,
                     "runs": rows})
    return 0
