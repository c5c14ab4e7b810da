"""The speed table of docs/figures.md, from ``benchmarks/results/speed.json`` (``speed.py --json``).

Each row names the group and contenders of ``speed.py``'s results it shows and the target whose
status (✓ met, ✗ missed) it carries; the numbers are the medians over rounds that speed.py wrote.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.table_text import TIMES, load, markdown, ratio

MARKS = {"PASS": "✓", "MISS": "✗"}
ALPHABETA_MS = 50  # alphabeta.TARGET_MS: a reply on 15x15x5 within this median
OURS = "gym-tictactoe"
PZ = "PettingZoo `tictactoe_v3.env()`"
# (measure, group, ours, peer, label of the peer, ratio needed, target label in speed.json)
RATE_ROWS = [
    ("single env via `gym.make`, minimax opponent, moves/s", "single env, moves/s", OURS,
     "PettingZoo env()", PZ, 10, "single env >= 10x PettingZoo"),
    ("same", "single env, moves/s", OURS, "OpenSpiel",
     "OpenSpiel `tic_tac_toe` (C++, driven from Python)", 0.3, "single env >= 0.3x OpenSpiel"),
    *[(f"vector env, B = {size:,}" + (", board-moves/s" if size == 256 else ""),
       f"vector env B={size}, board-moves/s", OURS, "pgx vmap+jit",
       "pgx `jax.vmap` + `jax.jit`" if size == 256 else "pgx",
       2 if size == 4096 else None, "vector B=4096 >= 2x pgx" if size == 4096 else None)
      for size in (256, 4096, 65536)],
    *[(f"MaskablePPO rollouts, {boards} boards" + (", timesteps/s" if boards == 64 else ""),
       f"MaskablePPO rollouts, {boards} boards, timesteps/s", "TicTacToeSB3VecEnv",
       "DummyVecEnv", "`DummyVecEnv`", 3, f"SB3 rollouts, {boards} boards >= 3x Dummy")
      for boards in (64, 256)],
    ("4x4x4 single env, minimax, vs 3x3 in the same run, moves/s",
     "single env minimax, 3x3 vs 4x4x4, moves/s", "gym-tictactoe 4x4x4", "gym-tictactoe 3x3x3",
     "3x3", 0.5, "4x4x4 minimax >= 0.5x 3x3"),
    ("6x6x4 random play, single env", "random play 6x6x4, moves/s", "gym-tictactoe single",
     "OpenSpiel mnk", "OpenSpiel `mnk` (m=6, n=6, k=4)", 0.3,
     "6x6x4 single >= 0.3x OpenSpiel"),
    ("6x6x4 random play, vector env B = 4,096", "random play 6x6x4, moves/s",
     "gym-tictactoe vector B=4096", "OpenSpiel mnk", "OpenSpiel `mnk`", 3,
     "6x6x4 vector B=4096 >= 3x OpenSpiel"),
    ("15x15x5 (gomoku) random play, single env", "random play 15x15x5, moves/s",
     "gym-tictactoe single", "OpenSpiel gomoku", "OpenSpiel `gomoku`", 0.3,
     "15x15x5 single >= 0.3x OpenSpiel"),
    ("15x15x5 random play, vector env B = 4,096", "random play 15x15x5, moves/s",
     "gym-tictactoe vector B=4096", "OpenSpiel gomoku", "OpenSpiel `gomoku`", 3,
     "15x15x5 vector B=4096 >= 3x OpenSpiel"),
    ("two-player AEC env (`gym_tictactoe.envs.pettingzoo.env()`), 3x3, moves/s",
     "PettingZoo AEC random play 3x3, moves/s", "gym-tictactoe AEC env()",
     "PettingZoo tictactoe_v3.env()", PZ, 5, "PettingZoo AEC >= 5x tictactoe_v3"),
]


def rate(value: float) -> str:
    """Moves or timesteps a second: 145,363 below a million, 2.9 M (three figures) above."""
    return f"{value:,.0f}" if value < 1e6 else f"{value / 1e6:.3g} M"


def speed(results: Path) -> str:
    """The speed table: our medians, the peer's, the ratio and the target's status."""
    data = load(results, "speed.json")
    medians = data["medians"]
    status = {check["target"]: check for check in data["targets"]}
    rows = []
    for measure, group, ours, peer, label, needed, check in RATE_ROWS:
        mine, theirs = medians[group].get(ours), medians[group].get(peer)
        if mine is None or theirs is None:  # a contender speed.py skipped (not installed)
            continue
        rows.append([measure, rate(mine), f"{label} {rate(theirs)}", ratio(mine / theirs),
                     _target(needed, status.get(check))])
    rows.insert(7, _learn_row(medians))
    # alpha-beta's figures: speed.py's own run of alphabeta.py, else alphabeta.py's results file
    search = data.get("alphabeta") or (load(results, "alphabeta.json")
                                       if (results / "alphabeta.json").exists() else {})
    rows += _fixed_rows(data, status, search)
    return markdown(["measure", "gym-tictactoe", "peer", "ratio", "target"], rows)


def _target(needed: float | None, check: dict[str, Any] | None) -> str:
    if needed is None:
        return ""
    text = f"≥ {needed:g}{TIMES}"
    if check is None or check["status"] not in MARKS:
        return text
    ceiling = check.get("ceiling")
    note = (f" (an env costing nothing: {ratio(ceiling)})"
            if ceiling is not None and check["status"] == "MISS" else "")
    return f"{text} {MARKS[check['status']]}{note}"


def _learn_row(medians: dict[str, dict[str, float]]) -> list[str]:
    groups = [medians[f"MaskablePPO learn, 1 epoch, {boards} boards, timesteps/s"]
              for boards in (64, 256)]
    ours = [group["TicTacToeSB3VecEnv"] for group in groups]
    theirs = [group["DummyVecEnv"] for group in groups]
    return ["MaskablePPO `learn`, 1 epoch, 64 / 256 boards", " / ".join(map(rate, ours)),
            " / ".join(map(rate, theirs)),
            " / ".join(ratio(a / b) for a, b in zip(ours, theirs, strict=True)), "(reported)"]


def _fixed_rows(data: dict[str, Any], status: dict[str, dict[str, Any]],
                search: dict[str, Any]) -> list[list[str]]:
    """One-off costs: the solver's build, the 16-cell solves and loads, alpha-beta's reply on
    15x15x5 (``search``: alphabeta.py's results), the import."""
    fixed, solving = data["medians"]["fixed costs, 1/s"], data["solving"]

    def met(*labels: str) -> str:
        return "✓" if all(status.get(label, {}).get("status") == "PASS" for label in labels) \
            else "✗"

    solves = [solving[board]["solve"] for board in ("4x4x3", "4x4x4")]
    loads = [solving[board]["load"]["seconds"] for board in ("4x4x3", "4x4x4")]
    peak = max(solve["peak_mb"] for solve in solves)
    limits = [f"{board} solve {limit}" for board in ("4x4x3", "4x4x4")
              for limit in ("<= 60 s", "peak <= 2 GB")]
    rows = [["`solver.solve()` full build, 3x3", f"{1e3 / fixed['solver.solve() build']:.1f} ms",
             "", "", f"≤ 0.05 s {met('solver build <= 0.05 s')}"],
            ["solving 4x4x3 / 4x4x4 in a fresh process",
             " / ".join(f"{solve['seconds']:.1f} s" for solve in solves) + f", peak {peak:.0f} MB",
             "", "", "≤ 60 s, ≤ 2 GB " + met(*limits)],
            ["loading the cached 4x4x3 / 4x4x4 solution in a new process",
             " / ".join(f"{seconds:.2f} s" for seconds in loads), "", "",
             "≤ 1 s " + met("4x4x3 cached load <= 1 s", "4x4x4 cached load <= 1 s")]]
    reply = search.get("15x15x5", {}).get("reply")
    if reply:
        rows.append(["`alphabeta` reply on 15x15x5, default settings, positions after "
                     "4\N{EN DASH}40 moves of seeded play",
                     f"median {reply['median_ms']:.1f} ms (90%: {reply['p90_ms']:.0f} ms)", "", "",
                     f"≤ {ALPHABETA_MS} ms {'✓' if reply['median_ms'] <= ALPHABETA_MS else '✗'}"])
    rows.append(["`import gym_tictactoe` on top of `import gymnasium`",
                 f"{1e3 / fixed['import gym_tictactoe']:.0f} ms", "", "",
                 f"≤ 0.2 s {met('import <= 0.2 s')}"])
    return rows

