"""The ``mcts`` player against OpenSpiel's ``MCTSBot``: same simulations, same run, both seats.

    nice -n 10 python -m benchmarks mcts [--quick] [--out benchmarks/results/mcts.json]

On each board both bots search with the same number of simulations a move, the same UCT
constant (2, OpenSpiel's examples') and MCTS-Solver (OpenSpiel's ``solve=True``), one random
rollout a leaf. Game ``g`` seeds both bots with ``g``; ours plays X in the even games and O in
the odd ones. The score is ours (a win 1, a draw 1/2). Speed is simulations a second of CPU
time (``time.process_time``) over every search of the games: OpenSpiel's ``root.explore_count``
and ours ``MCTSPlayer.last.simulations``; both stop early once the root is proven, and ours does
not search a forced move (a win at once or one cell to block; such moves count no simulations
and no time). Games on 15x15x5 are cut at ``MAX_PLIES`` and scored a draw, to bound the time.
OpenSpiel's m,n,k-game numbers its actions as we do on these square boards (the winner of every
game is checked against ours).

Nothing is written unless ``--out`` is given.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from benchmarks.commands import argument_parser
from benchmarks.openspiel_bot import UCT_C, openspiel_bot
from benchmarks.progress import results_file, writable, write_json
from gym_tictactoe import game
from gym_tictactoe.players.mcts import MCTSPlayer

# (rows, cols, k, simulations a move, games): a few games a board keep the run to minutes.
BOARDS = ((3, 3, 3, 1000, 20), (4, 4, 4, 1000, 10), (6, 6, 4, 1000, 40), (15, 15, 5, 1000, 4))
QUICK = ((3, 3, 3, 1000, 4), (4, 4, 4, 300, 2), (6, 6, 4, 300, 2), (15, 15, 5, 100, 2))
MAX_PLIES = 120


def play_game(rules: game.Rules, simulations: int, seed: int, ours_mark: int) -> dict:
    """One seeded game; our result (1, 1/2, 0) and each bot's simulations and CPU seconds."""
    spiel, bot = openspiel_bot(rules, simulations, seed)
    ours = MCTSPlayer(simulations, UCT_C, **rules.kwargs)
    rng = np.random.default_rng(seed)
    state, cells = spiel.new_initial_state(), np.zeros(rules.n_cells, np.int8)
    spent = {"ours": [0, 0.0], "openspiel": [0, 0.0]}
    mark, plies = game.X, 0
    while not state.is_terminal() and plies < MAX_PLIES:
        start = time.process_time()
        if mark == ours_mark:
            move = ours.act(cells, mark, rng)
            assert ours.last is not None  # act() just searched
            sims, who = ours.last.simulations, "ours"
        else:
            root = bot.mcts_search(state)
            move, sims, who = root.best_child().action, root.explore_count, "openspiel"
        if sims:
            spent[who][0] += sims
            spent[who][1] += time.process_time() - start
        state.apply_action(int(move))
        cells[move] = mark
        mark, plies = game.SWAP[mark], plies + 1
    winner = rules.winner(rules.encode(cells)) if rules.solvable else _winner(rules, cells)
    returns = state.returns() if state.is_terminal() else [0.0, 0.0]
    expected = {0.0: game.NO_WINNER, 1.0: game.X, -1.0: game.O}[returns[0]]
    if state.is_terminal() and winner != expected:
        raise RuntimeError(f"OpenSpiel and we disagree on the winner: {returns} vs {winner}")
    score = 0.5 if winner == game.NO_WINNER else float(winner == ours_mark)
    return {"seed": seed, "ours_as": game.MARK_NAMES[ours_mark], "score": score,
            "plies": plies, "spent": spent}


def _winner(rules: game.Rules, cells: np.ndarray) -> int:
    on_line = cells[rules.line_array]
    for mark in (game.X, game.O):
        if (on_line == mark).all(axis=1).any():
            return mark
    return game.NO_WINNER


def measure(boards=BOARDS) -> dict:
    results: dict[str, Any] = {"uct_c": UCT_C, "solve": True, "rollouts_per_leaf": 1,
               "load_average_at_start": os.getloadavg()[0], "cpus": os.cpu_count(),
               "boards": []}
    for rows, cols, k, simulations, games in boards:
        rules = game.rules(rows, cols, k)
        played = [play_game(rules, simulations, g, game.X if g % 2 == 0 else game.O)
                  for g in range(games)]
        results["boards"].append(_summary(rules, simulations, played))
        print(_line(results["boards"][-1]), flush=True)
    results["load_average_at_end"] = os.getloadavg()[0]
    return results


def _summary(rules: game.Rules, simulations: int, played: list[dict]) -> dict:
    rates = {}
    for who in ("ours", "openspiel"):
        sims = sum(g["spent"][who][0] for g in played)
        seconds = sum(g["spent"][who][1] for g in played)
        rates[who] = {"simulations": sims, "cpu_seconds": round(seconds, 3),
                      "per_second": round(sims / seconds) if seconds else None}
    by_seat = {seat: [g["score"] for g in played if g["ours_as"] == seat] for seat in ("X", "O")}
    score = sum(g["score"] for g in played) / len(played)
    ratio = (rates["ours"]["per_second"] / rates["openspiel"]["per_second"]
             if rates["ours"]["per_second"] and rates["openspiel"]["per_second"] else None)
    return {"board": rules.name, "simulations_per_move": simulations, "games": len(played),
            "score": score, "score_by_seat": by_seat, "speed": rates,
            "speed_ratio": None if ratio is None else round(ratio, 1),
            "plies": [g["plies"] for g in played]}


def _line(board: dict) -> str:
    speed = board["speed"]
    return (f"{board['board']:>8}: {board['simulations_per_move']} simulations, "
            f"{board['games']} games, score {100 * board['score']:.0f}% "
            f"(as X {board['score_by_seat']['X']}, as O {board['score_by_seat']['O']}); "
            f"simulations/s ours {speed['ours']['per_second']}, OpenSpiel "
            f"{speed['openspiel']['per_second']}: {board['speed_ratio']}x")


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--quick", action="store_true", help="fewer games and simulations")
    parser.add_argument("--out", type=results_file, help="also write the numbers to this JSON file")
    args = parser.parse_args(argv)
    if args.out:
        writable(args.out, "mcts.py")
    start = time.time()
    results = measure(QUICK if args.quick else BOARDS)
    results["wall_seconds"] = round(time.time() - start, 1)
    results["command"] = "python -m benchmarks mcts" + (" --quick" if args.quick else "")
    if args.out:
        write_json(args.out, results)
    return 0
