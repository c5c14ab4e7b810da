"""The search and self-play tables of the docs: ``mcts`` against OpenSpiel's MCTSBot, AlphaZero
on 3x3, and exact best responses against search players (see ``tables.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.commands import recorded
from benchmarks.table_text import load, markdown, ratio


def mcts(results: Path) -> str:
    """``mcts`` against OpenSpiel's MCTSBot: score per seat and simulations a second, per board
    (``benchmarks/mcts.py``)."""
    boards = load(results, "mcts.json")["boards"]
    rows = []
    for board in boards:
        seats = {seat: sum(scores) / len(scores) for seat, scores in board["score_by_seat"].items()}
        ours, theirs = board["speed"]["ours"], board["speed"]["openspiel"]
        rows.append([board["board"], f"{board['simulations_per_move']:,}", str(board["games"]),
                     f"{100 * board['score']:.0f}% ({100 * seats['X']:.0f}% / "
                     f"{100 * seats['O']:.0f}%)",
                     f"{ours['per_second']:,} / {theirs['per_second']:,}",
                     ratio(board["speed_ratio"])])
    return markdown(["board", "simulations a move", "games", "mcts score (as X / as O)",
                     "simulations/s: mcts / MCTSBot", "ratio"], rows)


def alphazero(results: Path) -> str:
    """AlphaZero on 3x3 (``benchmarks/alphazero.py``): self-play games and seconds to the first
    perfect raw network, and the saved network with search, per seed."""
    runs = load(results, "alphazero_3x3.json")["runs"]

    def searched(run: dict[str, Any]) -> str:
        found = run.get("with_search") or {}
        if not found:
            return ""
        return (f"{100 * found['optimal_move_rate']:.2f}%, {found['best_response']['X']} / "
                f"{found['best_response']['O']} ({found['simulations']} simulations)")

    return markdown(["seed", "raw network perfect at (self-play games)", "training time",
                     "with search: optimal moves, best response X / O"],
                    [[str(run["seed"]),
                      f"{run['perfect_at_games']:,}" if run["perfect_at_games"] else "not perfect",
                      f"{run['train_seconds']:.0f} s", searched(run)] for run in runs])


def alphazero_long(results: Path) -> str:
    """AlphaZero's long runs on the 16-cell boards (``benchmarks/alphazero.py --minutes``): the
    raw network's exact figures at each checkpoint of training time, per board present."""
    rows = []
    for board in ("4x4x3", "4x4x4"):
        if not (results / f"alphazero_{board}.json").exists():  # a run still to be made
            continue
        data = load(results, f"alphazero_{board}.json")
        for run in data["runs"]:
            # Curves from before the rate could change lack it: the run's own, all along.
            rate = run["hyperparameters"]["learning_rate"]
            rows += [[board, str(run["seed"]), f"{point['train_seconds'] / 60:.0f} min",
                      _cpu_minutes(point.get("train_cpu_seconds")),
                      f"{point['episodes']:,}", f"{point.get('learning_rate', rate):g}",
                      f"{100 * point['rate']:.4f}%", point["X"], point["O"]]
                     for point in run["learning_curve"]]
    return markdown(["board", "seed", "training time", "its CPU time", "self-play games",
                     "learning rate", "optimal moves", "as X", "as O"], rows)


def alphazero_aimed(results: Path) -> str:
    """AlphaZero's 4x4 runs with the board's defaults in agents/hyperparams/alphazero.yml
    (aimed starts, an annealed learning rate): the raw network's exact figures at each
    checkpoint and how many positions it still played wrong, per board present."""
    rows = []
    for board, data in _aimed_runs(results).items():
        for run in data["runs"]:
            rows += [[board, str(run["seed"]), f"{point['train_seconds'] / 60:.1f} min",
                      _cpu_minutes(point.get("train_cpu_seconds")),
                      f"{point['episodes']:,}", f"{point['learning_rate']:.5f}",
                      f"{100 * point['rate']:.4f}%", f"{point['wrong']:,}", point["X"],
                      point["O"]] for point in run["learning_curve"]]
    return markdown(["board", "seed", "training time", "its CPU time", "self-play games",
                     "learning rate", "optimal moves", "positions played wrong", "as X",
                     "as O"], rows)


def alphazero_aimed_rows(results: Path) -> list[list[str]]:
    """The headline's row per aimed run: where it stands at its last checkpoint."""
    rows = []
    for board, data in _aimed_runs(results).items():
        for run in data["runs"]:
            last = run["learning_curve"][-1]
            minutes = f"{last['train_seconds'] / 60:.0f} min of training"
            if last.get("train_cpu_seconds") is not None:
                minutes += f" ({last['train_cpu_seconds'] / 60:.0f} CPU min)"
            found = (f"perfect after {last['episodes']:,} self-play games, {minutes}"
                     if last["perfect"] else
                     f"{100 * last['rate']:.4f}% optimal moves ({last['wrong']:,} positions "
                     f"wrong), {last['X']} / {last['O']} against a best response, after "
                     f"{minutes}: not perfect")
            rows.append([f"AlphaZero (raw network), `train.py --algo alphazero --board "
                         f"{board}` defaults, seed {run['seed']}", found, recorded(data)])
    return rows


def _aimed_runs(results: Path) -> dict[str, dict[str, Any]]:
    return {board: load(results, f"alphazero_{board}_aimed.json") for board in ("4x4x3", "4x4x4")
            if (results / f"alphazero_{board}_aimed.json").exists()}


def _cpu_minutes(seconds: float | None) -> str:
    return "not kept" if seconds is None else f"{seconds / 60:.0f} min"


def search_exact(results: Path) -> str:
    """Exact best response against seeded search players (``benchmarks/search_exact.py``)."""
    runs = load(results, "search_exact.json")["runs"]
    return markdown(["board", "player", "best response: as X / as O", "perfect play gets",
                     "positions asked", "CPU time"],
                    [[run["board"], f"`{run['player']}`",
                      f"{run['best_response']['X']} / {run['best_response']['O']}",
                      f"{run['perfect_play_gets']['X']} / {run['perfect_play_gets']['O']}",
                      f"{run['asked']:,}", f"{run['cpu_seconds']:.1f} s"] for run in runs])


def q_batched(results: Path) -> str:
    """Episodes a second of the batched tabular learner against the one-board learner, same run
    (``benchmarks/q_batched.py``)."""
    boards = load(results, "q_batched.json")["boards"]
    batches = [size for size in boards[0]["speedup"]]
    rows = [[board["board"], f"{board['episodes_per_second']['sequential']:,.0f}",
             *(f"{board['episodes_per_second'][size]:,.0f} ({ratio(board['speedup'][size])})"
               for size in batches)] for board in boards]
    return markdown(["board", "one board", *(f"B = {size}" for size in batches)], rows)


Q_PERFECT_RUNS = ("q_perfect_4x4x3.json", "q_perfect_4x4x3_all_starts.json",
                  *(f"q_perfect_4x4x3_focus_seed{seed}.json" for seed in range(3)),
                  *(f"q_perfect_4x4x3_self_play_focus_seed{seed}.json" for seed in range(3)),
                  "q_perfect_4x4x4.json", "q_perfect_4x4x4_focus_back_anneal.json",
                  "q_perfect_4x4x4_focus_ahead_anneal.json",
                  "q_perfect_4x4x4_focus_back_forget.json",
                  *(f"q_perfect_4x4x4_long_seed{seed}.json" for seed in range(3)))


def q_perfect(results: Path) -> str:
    """The batched tabular learner run toward perfect play on the 16-cell boards
    (``benchmarks/q_perfect.py``), each run's starts and learning-rate schedule named."""
    rows = []
    for name in Q_PERFECT_RUNS:
        if not (results / name).exists():  # a run still to be made
            continue
        run = load(results, name)
        last = run["curve"][-1]
        result = ("perfect" if run["perfect_at_episodes"] else
                  f"{100 * last['rate']:.4f}% optimal moves, {last['X']} / {last['O']}")
        rows.append([run["board"], "self-play" if run["opponent"] == "self" else "ε 0.4",
                     str(run.get("seed", 0)), _q_variant(run), result,
                     f"{(run['perfect_at_episodes'] or last['episodes']) / 1e6:.0f}M",
                     f"{run['perfect_after_seconds'] or last['seconds']:.0f} s",
                     f"{run['peak_rss_mb']:,} MB",
                     " / ".join(run["perfect_results"][seat] for seat in ("X", "O"))])
    return markdown(["board", "opponent", "seed", "starts", "result", "episodes", "wall time",
                     "peak memory", "perfect play gets"], rows)


def _q_variant(run: dict[str, Any]) -> str:
    """uniform 0.75; or aimed 0.5, back 0.2, forget, alpha to 0.01."""
    focus = run.get("focus") or {}
    if not focus.get("share"):
        return f"uniform {run['env_options'].get('start_probability', '')}"
    parts = [f"aimed {focus['share']}"]
    parts += [f"{label} {focus[key]}" for key, label in (("back_share", "back"),
                                                          ("ahead_share", "ahead"))
              if focus.get(key)]
    if focus.get("forget"):
        parts.append("forget")
    schedule = run.get("alpha_schedule") or {}
    if schedule.get("end") is not None:
        parts.append(f"alpha to {schedule['end']}")
    return ", ".join(parts)


Q_DEFAULT_BOARDS = ("4x4x3", "4x4x4")


def _q_default_runs(results: Path) -> dict[str, list[dict[str, Any]]]:
    """``train.py --board B --seed S`` with no other flag (``q_seeds.py --board B``), per board
    measured so far."""
    found = {}
    for board in Q_DEFAULT_BOARDS:
        path = results / f"q_seeds_{board}.json"
        if path.exists():
            found[board] = json.loads(path.read_text())["runs"]
    return found


def q_defaults(results: Path) -> str:
    """Tabular Q on the 4x4 boards with train.py's defaults for the board
    (agents/hyperparams/q.yml): episodes to perfect play and the run's times."""
    rows = []
    for board, runs in _q_default_runs(results).items():
        for run in runs:
            reached = run["perfect_at_episodes"]
            rows.append([board, str(run["seed"]), f"{reached:,}" if reached else "not perfect",
                         f"{run['train_seconds']:.0f} s", f"{run['total_seconds']:.0f} s",
                         f"`{run['command']}`"])
    return markdown(["board", "seed", "episodes to perfect play", "training time",
                     "whole run", "command"], rows)


def q_defaults_rows(results: Path) -> list[list[str]]:
    """The headline's row: train.py on each 4x4 board with no other flag."""
    rows = []
    for board, runs in _q_default_runs(results).items():
        counts = [run["perfect_at_episodes"] for run in runs]
        seeds = ", ".join(str(run["seed"]) for run in runs)
        spread = (f"perfect in {len(counts) - counts.count(None)} of {len(counts)} runs"
                  if None in counts else
                  f"perfect after {min(counts):,}" + ("" if min(counts) == max(counts) else
                                                       f"\N{EN DASH}{max(counts):,}")
                  + " episodes" + (" on each" if len(set(counts)) == 1 < len(counts) else ""))
        minutes = [run["total_seconds"] / 60 for run in runs]
        rows.append([f"`train.py --board {board}`, no other flag, seed"
                     f"{'s' if len(runs) > 1 else ''} {seeds}",
                     f"{spread}, {min(minutes):.0f}\N{EN DASH}{max(minutes):.0f} min a run",
                     recorded(*runs)])
    return rows


def _contender(row: dict[str, Any]) -> str:
    """A built-in player's name, or a saved model's algorithm with what its training cost."""
    if "model" not in row:
        return f"`{row['player']}`"
    done = row.get("training") or {}
    budget = (f"{done['timesteps']:,} timesteps" if "timesteps" in done else
              f"{done['episodes']:,} self-play games" if "episodes" in done else "")
    if "train_seconds" in done:
        budget += f", {done['train_seconds'] / 60:.0f} min"
    if "train_cpu_seconds" in done:
        budget += f" ({done['train_cpu_seconds'] / 60:.0f} CPU min)"
    return f"{done.get('algo', row['player'])} model ({budget.lstrip(', ')})"


def grading(results: Path) -> str:
    """Sampled exact grading of the search players and trained models (``benchmarks/grading.py``):
    each sampling's optimal-move rate with its 95% Wilson interval, the best response per seat."""
    data = load(results, "grading_5x5x4.json")

    def rate(found: dict[str, Any]) -> str:
        if found["rate"] is None:
            return "none decided"
        low, high = found["interval"]
        return (f"{found['rate']:.1%} [{low:.1%}, {high:.1%}] of {found['decided']}"
                + (f" ({found['undecided']} undecided)" if found["undecided"] else ""))

    def seat(found: dict[str, Any]) -> str:
        if found["result"] == "loss":
            return f"loss: {' '.join(map(str, found['losing_line']))}"
        within = found.get("no_loss_within")
        if not within:
            return found["result"]
        return f"{found['result']} (no loss within {within} opponent move{'s' * (within > 1)})"

    rows = [[_contender(row), rate(row["sampled"]["games"]), rate(row["sampled"]["uniform"]),
             seat(row["best_response"]["X"]), seat(row["best_response"]["O"]),
             f"{row['seconds']:.0f} s"] for row in data["players"]]
    return (markdown(["player", "own games: rate [95% CI]", "random depth: rate [95% CI]",
                      "best response as X", "as O", "time"], rows)
            + f"\n{recorded(data)}\n")


def exact_rows(results: Path) -> list[list[str]]:
    """The headline's rows past 16 cells: the published m,n,k values proved from the empty board,
    and the trained models' sampled optimal-move rate on 5x5x4."""
    proofs = load(results, "proofs.json")
    runs = proofs["runs"]
    agree = [run for run in runs if run["value"] == run["published"]]
    unknown = [run["board"] for run in runs if run["value"] == "unknown"]
    slowest = max(agree, key=lambda run: run["seconds"])
    rows = [[f"proof solver, the published m,n,k values ({', '.join(r['board'] for r in runs)})",
             f"{len(agree)} of {len(runs)} reproduced from the empty board, each within "
             f"{slowest['seconds']:.0f} s ({slowest['board']})"
             + (f"; {', '.join(unknown)} unknown within its budget" if unknown else ""),
             recorded(proofs)]]
    grading = load(results, "grading_5x5x4.json")
    models = [row for row in grading["players"] if "model" in row]
    if models:
        rates = [f"{_contender(row)}: {row['sampled']['games']['rate']:.1%}" for row in models]
        rows.append([f"trained models graded exactly on 5x5x4 (optimal moves in their own games, "
                     f"{grading['sample']} positions, every verdict proved)", "; ".join(rates),
                     recorded(grading)])
    return rows
