"""Timing contenders against each other, for the speed benchmarks (``speed``,
``pettingzoo_speed``): a contender is a factory of ``Play``, one unit of work that returns what
it counted (moves, timesteps); the contenders of a group take turns, one timed run each per round,
so a load that comes and goes falls on all alike. Then medians, targets and the printed tables.
"""

from __future__ import annotations

import importlib.util
import statistics
import time
from collections.abc import Callable
from typing import Any

Play = Callable[[], int]  # one unit of work, returning what it counted (moves, timesteps)
FROZEN = "SB3 on a frozen free env"  # a contender that costs nothing: the ceiling of a ratio
# The module each contender needs beyond gym-tictactoe's own dependencies (checked, not
# installed), by the start of its name.
REQUIRES = {"PettingZoo": "pettingzoo", "OpenSpiel": "pyspiel", "pgx": "pgx",
            "TicTacToeSB3VecEnv": "sb3_contrib", "DummyVecEnv": "sb3_contrib", "SB3": "sb3_contrib",
            "gym-tictactoe AEC": "pettingzoo"}


def missing_peers() -> list[str]:
    """The peers' modules that cannot be imported here (``REQUIRES``), in order."""
    return sorted({module for module in REQUIRES.values()
                   if importlib.util.find_spec(module) is None})


def measure(group: dict[str, Callable[[], Play]], rounds: int, seconds: float,
            notes: list[str]) -> dict[str, list[float]]:
    """Rates (count per second) of every installed contender, ``rounds`` turns each."""
    plays: dict[str, Play] = {}
    for name, factory in group.items():
        module = next((m for peer, m in REQUIRES.items() if name.startswith(peer)), None)
        if module and importlib.util.find_spec(module) is None:
            notes.append(f"{name}: skipped, {module} is not installed (pip install -e '.[bench]')")
            continue
        plays[name] = factory()
    rates: dict[str, list[float]] = {name: [] for name in plays}
    for _ in range(rounds):
        for name, play in plays.items():
            count, start = 0, time.perf_counter()
            while time.perf_counter() - start < seconds:
                count += play()
            rates[name].append(count / (time.perf_counter() - start))
    return rates


def median(results: dict, group: str, name: str) -> float | None:
    rates = results[group].get(name)
    return statistics.median(rates) if rates else None


def check_targets(results: dict, targets: list[tuple]) -> list[dict[str, Any]]:
    """Each target of ``targets`` (label, group, ours, peer or None, ratio needed; no peer:
    seconds at most) as met (PASS), below (MISS) or skipped (SKIP), from the median rates."""
    checks = []
    for label, group, ours, peer, needed in targets:
        mine, theirs = median(results, group, ours), median(results, group, peer) if peer else 1
        check: dict[str, Any] = {"target": label, "value": None, "status": "SKIP"}
        if mine is not None and theirs is not None:
            value = mine / theirs if peer else 1 / mine  # a ratio, or seconds
            ok = value >= needed if peer else value <= needed
            check.update(value=value, status="PASS" if ok else "MISS")
        free = median(results, group, FROZEN)
        if free is not None and theirs is not None:
            check["ceiling"] = free / theirs  # what an env costing nothing would reach
        checks.append(check)
    return checks


def print_groups(results: dict) -> None:
    for group, rates in results.items():
        print(f"\n{group}")
        if group.startswith("fixed"):  # times, not rates; no peers
            for name, runs in rates.items():
                times = sorted(1e3 / rate for rate in runs)
                print(f"  {name:26} {statistics.median(times):11.1f} ms   "
                      f"[{times[0]:.1f} .. {times[-1]:.1f}] ms")
            continue
        ours = statistics.median(next(iter(rates.values()))) if rates else 0.0
        for k, (name, runs) in enumerate(rates.items()):
            mid = statistics.median(runs)
            ratio = f"ours/this {ours / mid:7.2f}" if k else ""
            print(f"  {name:26} {mid:14,.0f}  {ratio:17} [{min(runs):,.0f} .. {max(runs):,.0f}]")


STATUS_WORDS = {"PASS": "met", "MISS": "below", "SKIP": "skipped"}  # the JSON keeps PASS/MISS/SKIP


def print_targets(checks: list[dict[str, Any]], notes: list[str]) -> None:
    print("\ntargets (floors the design aims at; one below is reported, not an error)")
    for check in checks:
        value = "-" if check["value"] is None else f"{check['value']:.3g}"
        ceiling = f" (a free env: {check['ceiling']:.3g})" if "ceiling" in check else ""
        print(f"  {STATUS_WORDS[check['status']]:7} {check['target']:38} measured "
              f"{value}{ceiling}")
    counts = {word: sum(STATUS_WORDS[c["status"]] == word for c in checks)
              for word in STATUS_WORDS.values()}
    print("  " + ", ".join(f"{n} {word}" for word, n in counts.items()))
    for note in notes:
        print(f"note: {note}")
