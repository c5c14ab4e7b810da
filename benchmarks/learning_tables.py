"""The learning tables of docs/figures.md (tabular Q and SB3 runs, the ablation, self-play),
from ``benchmarks/results/``."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from benchmarks.table_text import load, markdown, percent

ALGO_NAMES = {"dqn": "DQN", "maskable-ppo": "MaskablePPO", "ppo": "PPO", "q": "tabular Q"}


def q_seeds(results: Path) -> str:
    """Tabular Q on 3x3, ``train.py --seed S``: episodes to perfect play and training time."""
    runs = load(results, "q_seeds.json")["runs"]
    return markdown(["seed", *(str(run["seed"]) for run in runs)], [
        ["episodes to perfect play",
         *(f"{run['perfect_at_episodes']:,}" if run["perfect_at_episodes"] else "not perfect"
           for run in runs)],
        ["training time", *(f"{run['train_seconds']:.1f} s" for run in runs)]])


Q_BOARD_POINTS = {"4x4x3": (200_000, 1_000_000, 2_000_000), "4x4x4": (200_000, 2_000_000)}


def q_boards(results: Path) -> str:
    """Tabular Q on 4x4 boards at a few points of the 2M-episode runs, beside the runs without
    exploring starts at the same points where there are any."""
    with_starts = load(results, "q_boards.json")["runs"]
    empty = {(run["board"], point["episodes"]): point["rate"]
             for run in load(results, "q_boards_empty_starts.json")["runs"]
             for point in run["curve"]}
    rows = []
    for run in with_starts:
        perfect = run["perfect_results"]
        for point in run["curve"]:
            if point["episodes"] not in Q_BOARD_POINTS.get(run["board"], ()):
                continue
            rate = percent(point["rate"], 1)
            before = empty.get((run["board"], point["episodes"]))
            rows.append([run["board"], f"{point['episodes']:,}",
                         rate if before is None else f"{rate} ({percent(before, 1)})",
                         f"{point['X']} / {point['O']}", f"{perfect['X']} / {perfect['O']}",
                         f"{point['train_seconds']:.0f} s"])
    return markdown(["board", "episodes", "optimal-move rate (without exploring starts)",
                     "best response: as X / as O", "perfect play gets", "training"], rows)


def default_runs(results: Path) -> list[dict[str, Any]]:
    runs = [*load(results, "training.json")["runs"], *load(results, "training_ppo.json")["runs"]]
    return [run for run in runs if run["variant"] == "default"]


def sb3_timesteps(results: Path) -> str:
    """Timesteps (and seconds) to the first perfect evaluation, per SB3 algorithm and seed."""
    runs = default_runs(results)
    seeds = sorted({run["seed"] for run in runs})
    rows = []
    for algo in ("dqn", "maskable-ppo", "ppo"):
        by_seed = {run["seed"]: run for run in runs if run["algo"] == algo}
        rows.append([ALGO_NAMES[algo], *(_reached(by_seed.get(seed)) for seed in seeds)])
    return markdown(["algo", *(f"seed {seed}" for seed in seeds)], rows)


def _reached(run: dict[str, Any] | None) -> str:
    if run is None:
        return ""
    if run["perfect"] is None:
        return f"not perfect (best {percent(run['best_rate'])})"
    return f"{run['perfect']['timesteps']:,} ({run['perfect']['seconds']:.0f} s)"


def sb3_boards(results: Path) -> str:
    """DQN and MaskablePPO on the 16-cell boards with train.py's defaults: at each exact
    checkpoint the optimal-move rate and each seat's result against a best response."""
    data = load(results, "sb3_boards.json")
    rows = []
    for run in data["runs"]:
        gets = run["perfect_results"]
        for point in run["curve"]:
            rows.append([run["board"], ALGO_NAMES[run["algo"]], f"{point['timesteps']:,}",
                         percent(point["rate"]), point["X"], point["O"],
                         f"{gets['X']} / {gets['O']}", f"{point['seconds'] / 60:.0f} min"])
    return markdown(["board", "algo", "timesteps", "optimal moves", "as X", "as O",
                     "perfect play gets (X / O)", "time so far"], rows)


def sb3_boards_5m(results: Path) -> str:
    """The 5M-timestep runs: each exact checkpoint as the optimal-move rate and the seats'
    results against a best response, a row per board and algorithm."""
    data = load(results, "sb3_boards_5m.json")
    points = sorted({point["timesteps"] // 1_000_000 for run in data["runs"]
                     for point in run["curve"] if point["timesteps"] % 1_000_000 == 0})
    rows = []
    for run in data["runs"]:
        at = {point["timesteps"]: point for point in run["curve"]}
        cells = []
        for million in points:
            point = at.get(million * 1_000_000)
            cells.append("" if point is None else
                         f"{percent(point['rate'])} ({point['X']} / {point['O']})")
        gets, last = run["perfect_results"], run["curve"][-1]
        rows.append([run["board"], ALGO_NAMES[run["algo"]], *cells,
                     f"{percent(last['rate'])} ({last['X']} / {last['O']}) at "
                     f"{last['timesteps']:,}", f"{gets['X']} / {gets['O']}",
                     f"{run['wall_seconds'] / 60:.0f} min"])
    return markdown(["board", "algo", *(f"{million}M (X / O)" for million in points),
                     "the saved model", "perfect play gets", "wall time"], rows)


def _change(key: str, value: Any) -> str:
    """``policy_kwargs={'net_arch': ...}`` as the hidden layers; any other setting as k=v."""
    if key != "policy_kwargs":
        return f"{key}={value:,}" if isinstance(value, int) else f"{key}={value}"
    arch = value["net_arch"]
    return "hidden layers " + str(arch["pi"] if isinstance(arch, dict) else arch)


def sb3_variants(results: Path) -> str:
    """One change at a time from the SB3 defaults, same budget and seed: the exact result at
    the end, and its difference from the default's optimal-move rate in points."""
    runs = load(results, "sb3_variants.json")["runs"]
    default = {(run["algo"], run["board"]): run["rate"] for run in runs
               if not run["changes"]}
    rows = []
    for run in runs:
        base = default.get((run["algo"], run["board"]))
        change = ", ".join(_change(key, value) for key, value in run["changes"].items())
        rows.append([run["board"], ALGO_NAMES[run["algo"]], change or "(the default)",
                     f"{run['timesteps']:,}", percent(run["rate"]),
                     "" if base is None or not run["changes"]
                     else f"{100 * (run['rate'] - base):+.2f}", run["X"], run["O"],
                     f"{run['wall_seconds'] / 60:.0f} min"])
    return markdown(["board", "algo", "change", "timesteps", "optimal moves", "vs default",
                     "as X", "as O", "wall time"], rows)


ABLATION = {"default": "nothing (the default)", "no-canonical": "canonical boards",
            "no-starts": "exploring starts",
            "old-opponent": "the stronger curriculum (ε 0.2 → 0.4)",
            "before": "all three (the setup before)"}


def ablation(results: Path) -> str:
    """Per change switched off, on the ablation seeds: runs perfect, the worst seed's best rate,
    and the final models averaged over the symmetries."""
    data = load(results, "training.json")
    seeds = set(data["settings"]["ablation_seeds"] or data["settings"]["seeds"])
    runs = [run for run in data["runs"] if run["seed"] in seeds]
    algos = [algo for algo in ("dqn", "maskable-ppo") if algo in data["settings"]["algos"]]
    header = ["switched off"]
    for algo in algos:
        name = ALGO_NAMES[algo]
        header += [f"{name}: perfect", f"{name}: lowest best rate",
                   f"{name} averaged: perfect (lowest rate)"]
    rows = []
    for variant, label in ABLATION.items():
        row = [label]
        for algo in algos:
            row += _ablation_cells([run for run in runs
                                    if run["algo"] == algo and run["variant"] == variant])
        rows.append(row)
    return markdown(header, rows)


def _ablation_cells(group: list[dict[str, Any]]) -> list[str]:
    steps = [run["perfect"]["timesteps"] for run in group if run["perfect"]]
    perfect = f"{len(steps)}/{len(group)}"
    if steps:
        perfect += f" (median {statistics.median(steps):,.0f} steps)"
    averaged = [run["averaged"] for run in group]
    return [perfect, percent(min(run["best_rate"] for run in group)),
            f"{sum(entry['perfect'] for entry in averaged)}/{len(group)} "
            f"({percent(min(entry['rate'] for entry in averaged))})"]


SELF_PLAY = {"q-3x3": "tabular Q, 3x3", "q-3x3-empty": "tabular Q, 3x3, `--start empty`",
             "maskable-ppo-3x3": "MaskablePPO, 3x3", "dqn-3x3": "DQN, 3x3",
             "q-4x4x3": "tabular Q, 4x4x3", "q-4x4x3-empty": "tabular Q, 4x4x3, `--start empty`"}


def self_play(results: Path) -> str:
    """Self-play runs: where each seed became perfect, or its final rate (and, off 3x3, its
    best-response results)."""
    rows = [row for folder in ("self_play_3x3", "self_play_4x4x3")
            for row in load(results, f"{folder}/summary.json")["runs"]]
    seeds = sorted({row["seed"] for row in rows})
    table = []
    for name, label in SELF_PLAY.items():
        found = {row["seed"]: row for row in rows if row["run"] == name}
        if found:
            first = next(iter(found.values()))
            table.append([label, _budget(first), *(_self_play_cell(found.get(seed))
                                                   for seed in seeds)])
    return markdown(["run", "budget", *(f"seed {seed}" for seed in seeds)], table)


def _budget(row: dict[str, Any]) -> str:
    """The run's budget from its train.py command: 200k episodes, 1M episodes, 300k timesteps."""
    words = row["command"].split()
    flag = f"--{row['clock']}"
    amount = int(words[words.index(flag) + 1])
    short = f"{amount // 1_000_000}M" if amount % 1_000_000 == 0 else f"{amount // 1000}k"
    return f"{short} {row['clock']}"


def _self_play_cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return ""
    if row["perfect_at"]:
        return f"{row['perfect_at']:,}"
    rate = percent(row["final_rate"])
    if "--board" in row["command"].split():  # off 3x3, where a draw is not what perfect gets
        rate += f", {row['final']['X']} / {row['final']['O']}"
    return rate
