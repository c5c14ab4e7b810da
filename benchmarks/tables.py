"""The measured tables of the docs, generated from the committed benchmark results.

    python -m benchmarks tables            # rewrite every table in docs/figures.md, docs/index.md
    python -m benchmarks tables --check    # and README.md; --check: exit 1 naming each that differs

A table sits between ``<!-- table: NAME -->`` and ``<!-- end table -->``; ``TABLES`` maps each
NAME to the function that writes it from ``benchmarks/results/``. Nothing between the markers is
typed by hand: to change a figure, re-measure (each benchmark's ``--out``) and regenerate.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import elo_tables, search_tables, speed_table
from benchmarks.commands import argument_parser, recorded
from benchmarks.learning_tables import (
    ablation,
    default_runs,
    q_boards,
    q_seeds,
    sb3_boards,
    sb3_boards_5m,
    sb3_timesteps,
    sb3_variants,
    self_play,
)
from benchmarks.table_text import load, markdown, percent, ratio

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DOCS = ROOT / "docs" / "figures.md"
PAGES = (DOCS, ROOT / "docs" / "index.md", ROOT / "README.md")  # the pages that may hold tables
MARKER = re.compile(r"<!-- table: (?P<name>[a-z0-9-]+) -->\n(?P<body>.*?)<!-- end table -->\n",
                    re.DOTALL)
def headline(results: Path) -> str:
    """The front page's summary: one figure of each benchmark, with the command its results
    file records."""
    seeds = [run["perfect_at_episodes"] for run in load(results, "q_seeds.json")["runs"]]
    sb3 = default_runs(results)
    sb3_steps = [run["perfect"] and run["perfect"]["timesteps"] for run in sb3]
    tabular = [row for row in load(results, "self_play_3x3/summary.json")["runs"]
               if row["run"] == "q-3x3"]
    aimed = [load(results, f"q_perfect_4x4x3_focus_seed{seed}.json") for seed in range(3)]
    long_4x4x4 = [load(results, f"q_perfect_4x4x4_long_seed{seed}.json") for seed in range(3)
                  if (results / f"q_perfect_4x4x4_long_seed{seed}.json").exists()]
    zero = load(results, "alphazero_3x3.json")["runs"]
    single = load(results, "speed.json")["medians"]["single env, moves/s"]
    return markdown(["what", "result", "command"], [
        ["tabular Q-learning, 3x3, seeds " + _seeds(len(seeds)), _spread(seeds, "episodes"),
         recorded(load(results, "q_seeds.json"))],
        ["DQN / MaskablePPO / PPO, 3x3, seeds " + _seeds(len(sb3) // 3),
         _spread(sb3_steps, "timesteps"),
         recorded(load(results, "training.json"), load(results, "training_ppo.json"))],
        ["tabular self-play, 3x3, seeds " + _seeds(len(tabular)),
         _spread([row["perfect_at"] for row in tabular], "episodes"),
         "`python -m benchmarks self_play`"],
        ["AlphaZero (raw network), 3x3, seeds " + _seeds(len(zero)),
         _spread([run["perfect_at_games"] for run in zero], "self-play games"),
         recorded(load(results, "alphazero_3x3.json"))],
        ["tabular Q (batched, aimed starts), 4x4x3 seeds " + _seeds(len(aimed))
         + " / 4x4x4 seed" + ("s " if len(long_4x4x4) > 1 else " ") + _seeds(len(long_4x4x4)),
         _spread([run["perfect_at_episodes"] for run in aimed], "episodes") + " / "
         + _spread([run["perfect_at_episodes"] for run in long_4x4x4], "episodes"),
         f"{recorded(*aimed)}; {recorded(*long_4x4x4)}"],
        *search_tables.q_defaults_rows(results),
        sb3_boards_row(results),
        *alphazero_long_rows(results),
        *search_tables.alphazero_aimed_rows(results),
        *elo_tables.elo_rows(results),
        *search_tables.exact_rows(results),
        ["single env, 3x3, against PettingZoo's `tictactoe_v3`",
         f"{ratio(single['gym-tictactoe'] / single['PettingZoo env()'])} the moves "
         "per second", "`make bench`"]])


def alphazero_long_rows(results: Path) -> list[list[str]]:
    """The headline's row for AlphaZero's long 4x4x4 run: its latest checkpoint (none before
    the run has one)."""
    if not (results / "alphazero_4x4x4.json").exists():
        return []
    data = load(results, "alphazero_4x4x4.json")
    rows = []
    for run in data["runs"]:
        if not run.get("learning_curve"):
            continue
        last = run["learning_curve"][-1]
        rows.append([f"AlphaZero (raw network), 4x4x4, seed {run['seed']}",
                     f"{last['X']} / {last['O']} against a best response (perfect play: "
                     f"draw / draw), {percent(last['rate'])} optimal moves, after "
                     f"{last['train_seconds'] / 60:.0f} minutes of training",
                     recorded(data)])
    return rows


def sb3_boards_row(results: Path) -> list[str]:
    """The headline's row for DQN and MaskablePPO on 4x4: each board's best saved model."""
    data = load(results, "sb3_boards_5m.json")
    runs, budget = data["runs"], data["timesteps"]
    best: dict[str, dict[str, Any]] = {}
    for run in runs:
        last = run["curve"][-1]
        if run["board"] not in best or last["rate"] > best[run["board"]]["rate"]:
            best[run["board"]] = last
    perfect = any(run["curve"][-1]["perfect"] for run in runs)
    return ["DQN / MaskablePPO, 4x4x3 / 4x4x4, seed 0, "
            f"{budget // 1_000_000}M timesteps",
            "at best " + " / ".join(percent(point["rate"], 1) for point in best.values())
            + " optimal moves" + ("" if perfect else ", not perfect"),
            "`python -m benchmarks sb3_boards`"]


def _seeds(count: int) -> str:
    return "0" if count == 1 else f"0\N{EN DASH}{count - 1}"


def _spread(counts: list[int | None], unit: str) -> str:
    """perfect after 17,000-53,000 episodes, or how many runs were not perfect."""
    known = [count for count in counts if count is not None]
    if len(known) < len(counts):
        return f"perfect in {len(known)} of {len(counts)} runs"
    if min(known) == max(known):
        return f"perfect after {min(known):,} {unit}" + (" on each" if len(known) > 1 else "")
    return f"perfect after {min(known):,}\N{EN DASH}{max(known):,} {unit}"


TABLES: dict[str, Callable[[Path], str]] = {
    "q-seeds": q_seeds, "q-boards": q_boards, "sb3-timesteps": sb3_timesteps,
    "ablation": ablation, "self-play": self_play, "speed": speed_table.speed,
    "mcts": search_tables.mcts, "alphazero": search_tables.alphazero,
    "alphazero-long": search_tables.alphazero_long,
    "alphazero-aimed": search_tables.alphazero_aimed,
    "search-exact": search_tables.search_exact, "elo": elo_tables.elo,
    "elo-pairings": elo_tables.elo_pairs,
    "q-batched": search_tables.q_batched,
    "q-perfect": search_tables.q_perfect, "q-defaults": search_tables.q_defaults,
    "sb3-boards": sb3_boards,
    "sb3-boards-5m": sb3_boards_5m, "sb3-variants": sb3_variants,
    "headline": headline, "grading": search_tables.grading,
}


def render(text: str, results: Path) -> tuple[str, list[str]]:
    """``text`` with every table regenerated, and the names of those that changed. A marker
    without a generator is a ValueError naming it."""
    changed: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in TABLES:
            raise ValueError(f"docs table {name!r} has no generator; known: {sorted(TABLES)}")
        body = TABLES[name](results)
        if body != match["body"]:
            changed.append(name)
        return f"<!-- table: {name} -->\n{body}<!-- end table -->\n"

    return MARKER.sub(replace, text), changed


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a table differs from the results")
    parser.add_argument("--docs", type=Path, nargs="+", default=list(PAGES),
                        help="the pages (default: docs/figures.md, docs/index.md, README.md)")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help="the results folder (default: %(default)s)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    stale = 0
    for page in args.docs:
        try:
            text = page.read_text()
            new, changed = render(text, args.results)
        except (OSError, ValueError, KeyError) as error:
            print(f"tables.py: {page}: {error}", file=sys.stderr)
            return 2
        stale += len(changed)
        if args.check:
            for name in changed:
                print(f"tables.py: table {name!r} in {page} differs from {args.results}; "
                      "run python -m benchmarks tables", file=sys.stderr)
            continue
        if changed:
            page.write_text(new)
        print(f"{page}: {len(changed)} of {len(MARKER.findall(text))} tables rewritten"
              + (f" ({', '.join(changed)})" if changed else ""))
    return 1 if args.check and stale else 0
