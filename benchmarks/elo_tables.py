"""The Elo tables of the docs (``benchmarks/elo.py``'s results, see ``tables.py``): the ratings,
the key pairs head to head with what they cost, and the headline's row.

Results written before the key pairs (10 games per ordered pairing, no MCTSBot, no costs, no
interval of the learner's gap to alphabeta) still render: their head-to-head scores come from
their pairings, and what they lack is marked as the old format.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.commands import recorded
from benchmarks.progress import duration
from benchmarks.table_text import markdown

ELO_BOARDS = ("6x6x4", "9x9x5", "15x15x5")
MCTSBOT = "MCTSBot"
OLD = "not recorded (old format)"


def head_to_head(rows: Sequence[Sequence[Any]], first: str, second: str) -> dict[str, Any]:
    """``first``'s record against ``second`` over both seats, from (X, O, tally) rows: games,
    points (a win 1, a draw 1/2) and the score, points over games."""
    games = points = 0.0
    for x, o, tally in rows:
        if [x, o] in ([first, second], [second, first]):
            own, other = ("X", "O") if x == first else ("O", "X")
            games += tally[own] + tally[other] + tally["draw"]
            points += tally[own] + tally["draw"] / 2
    return {"games": int(games), "points": points,
            "score": round(points / games, 4) if games else None}


def elo(results: Path) -> str:
    """AlphaZero among the built-in players and MCTSBot on boards too big to solve: each
    player's Elo (random at 0) with its 95% interval and score, strongest first, per board
    present; the AlphaZero rows say how long it trained."""
    rows = []
    for board, data in _elo_results(results):
        for rating in sorted(data["ratings"], key=lambda rating: -rating["elo"]):
            mark = {"lower": "≥ ", "upper": "≤ "}.get(rating["bound"], "")
            interval = "" if rating["interval"] is None else f" ± {rating['interval']:.0f}"
            rows.append([board, _elo_player(rating["name"], data),
                         f"{mark}{round(rating['elo'])}{interval}",
                         f"{100 * rating['points'] / rating['games']:.0f}% of {rating['games']}"])
    return markdown(["board", "player", "Elo (95% interval)", "score (games)"], rows)


def elo_pairs(results: Path) -> str:
    """The key pairs head to head, per board: the first player's score over both seats and
    games, its Elo above the second with the gap's 95% interval, and the games' wall and CPU
    time; then the whole table's cost and the load average."""
    rows = []
    for board, data in _elo_results(results):
        for pair in _pairs(data):
            first, second = pair["players"]
            gap = OLD if "elo" not in pair else (
                f"{pair['elo']:+.0f}" + ("" if pair["interval"] is None
                                         else f" ± {pair['interval']:.0f}"))
            spent = OLD if "wall_seconds" not in pair else (
                f"{duration(pair['wall_seconds'])} / {duration(pair['cpu_seconds'])}")
            rows.append([board, f"{_short(first, data)} against {_short(second, data)}",
                         f"{100 * pair['score']:.1f}% of {pair['games']}", gap, spent])
        rows.append([board, "the whole table", _all_games(data), "", _cost(data)])
    return markdown(["board", "pairing", "score of the first (games)",
                     "Elo of the first above the second (95% interval)",
                     "wall / CPU time"], rows)


def elo_rows(results: Path) -> list[list[str]]:
    """The headline's row for the Elo tables: AlphaZero with search against ``alphabeta``, on
    each board rated (none before there is one)."""
    cells, simulations, budgets = [], set(), set()
    for board, data in _elo_results(results):
        # Results rated before the compiled search recorded no budget: the default was 2,000.
        budgets.add(data.get("alphabeta_max_nodes", 2000))
        elo = {rating["name"]: rating["elo"] for rating in data["ratings"]}
        searched = _searched(data)
        simulations.add(_search_of(searched))
        seconds = data["training"].get("train_seconds")
        trained = f" after {seconds / 60:.0f} min of training" if seconds else ""
        cells.append((board, f"{_gap(data, elo[searched] - elo['alphabeta'])} on {board}"
                             + trained,
                      recorded(data)))
    if not cells:
        return []
    nodes = "/".join(f"{n:,}" for n in sorted(budgets))
    return [["AlphaZero (search of " + "/".join(sorted(simulations)) + ") against "
             f"`alphabeta` ({nodes} positions a move), " + " / ".join(c[0] for c in cells),
             ", ".join(c[1] for c in cells), "; ".join(c[2] for c in cells)]]


def _elo_results(results: Path) -> list[tuple[str, dict[str, Any]]]:
    """(board, elo.py's JSON) for each board rated: none for a run still to be made, or one
    stopped before its last row (no ratings yet)."""
    found = []
    for board in ELO_BOARDS:
        path = results / f"elo_{board}.json"
        if path.exists():
            data = json.loads(path.read_text())
            if data["ratings"]:
                found.append((board, data))
    return found


def _search_of(spec: str, short: bool = False) -> str:
    """``100 simulations`` (``100`` when ``short``; ``, reading threats`` added) of a model
    spec with a search."""
    from gym_tictactoe.cli.models import model_spec

    found = model_spec(spec)
    return (f"{found.simulations}" + ("" if short else " simulations")
            + (", reading threats" if found.threats else ""))


def _searched(data: dict[str, Any]) -> str:
    """The learner: the model through its search."""
    return next(rating["name"] for rating in data["ratings"] if ".npz:" in rating["name"])


def _gap(data: dict[str, Any], difference: float) -> str:
    """The learner's Elo above alphabeta: with the gap's interval and the games head to head
    where recorded, else (the old format) the difference of the two ratings alone."""
    gap = data.get("learner_vs_alphabeta")
    if not gap:
        return f"{difference:+.0f} Elo"
    interval = "" if gap["interval"] is None else f" ± {gap['interval']:.0f}"
    return f"{gap['elo']:+.0f}{interval} Elo ({gap['games']} games head to head)"


def _pairs(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The key pairs as recorded, or, in the old format, the learner against alphabeta from
    the pairings (no gap, no cost)."""
    if "key_pairs" in data:
        return data["key_pairs"]
    first, second = _searched(data), "alphabeta"
    return [{"players": [first, second], **head_to_head(data["pairings"], first, second)}]


def _all_games(data: dict[str, Any]) -> str:
    games = sum(tally["X"] + tally["O"] + tally["draw"] for x, o, tally in data["pairings"]
                if x != o)
    return f"{games:,} games"


def _cost(data: dict[str, Any]) -> str:
    cost = data.get("cost")
    if not cost:
        return f"{duration(data['seconds'])} of wall time (old format: no CPU time)"
    return (f"{duration(cost['wall_seconds'])} / {duration(cost['cpu_seconds'])} on "
            f"{cost['cpus']} cores, load {cost['load_average_at_start'][0]:.1f} at the start")


def _short(name: str, data: dict[str, Any]) -> str:
    """A player in a few words: AlphaZero's search, its raw network, MCTSBot or a built-in."""
    if name == MCTSBOT:
        return f"`{MCTSBOT}`"
    if ".npz:" in name:
        return f"AlphaZero (search of {_search_of(name, short=True)})"
    return "AlphaZero (raw network)" if name.endswith(".npz") else f"`{name}`"


def _elo_player(name: str, data: dict[str, Any]) -> str:
    """A built-in player as `name`; MCTSBot with its settings; the model (a path, maybe with
    ``:simulations=N``) as AlphaZero, with its training."""
    if name == MCTSBOT:
        return f"OpenSpiel's `{MCTSBOT}` ({data['mctsbot']['simulations']:,} simulations)"
    if not name.endswith(".npz") and ".npz:" not in name:
        return f"`{name}`"
    training = data["training"]
    kind = f"a search of {_search_of(name)}" if ".npz:" in name else "raw network"
    seconds, cpu = training.get("train_seconds"), training.get("train_cpu_seconds")
    if not seconds:
        return f"AlphaZero, {kind}"
    trained = f"{seconds / 60:.0f} min of training" + (f", {cpu / 60:.0f} of CPU" if cpu else "")
    games, samples = training.get("games_played"), training.get("samples_played")
    played = f"; {games:,} self-play games" if games else ""
    played += f", {samples:,} moves" if games and samples else ""
    return f"AlphaZero, {kind} ({trained}{played})"
