"""How fast does the alpha-beta player answer, and how does it fare against a random player?

    python -m benchmarks alphabeta [--quick] [--json PATH]

Reply times are wall-clock milliseconds of ``AlphaBetaPlayer(rows, cols, k).act`` (default
settings, board checks included) on positions from real play: seeded uniformly random games and
seeded alpha-beta self-play games (first two moves random near the centre), taken after 4 to 40
moves. Times depend on the machine's load: the load average is printed beside them, and no test
asserts them. The results against random are seeded games with the alpha-beta player as X in half
of them and as O in the other half.

``measure()`` returns everything as a dict (``benchmarks/speed.py`` calls it for its big-board
section); ``main`` prints it.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.commands import argument_parser
from benchmarks.progress import results_file, writable, write_json
from gym_tictactoe import game
from gym_tictactoe.players.search import AlphaBetaPlayer
from gym_tictactoe.players.threats import Geometry, geometry

Board = npt.NDArray[np.int8]
Player = Callable[[Board, int, np.random.Generator], int]
BOARDS = ((15, 15, 5), (6, 6, 4))
TARGET_MS = 50.0  # issue 8: median reply on 15x15x5 with default settings


def random_player(board: Board, mark: int, rng: np.random.Generator) -> int:
    empty = np.flatnonzero(board == game.EMPTY)
    return int(empty[int(rng.random() * empty.size)])


def wins(geo: Geometry, board: Board, cell: int) -> bool:
    """Whether the stone just put on ``cell`` completes a line (only its lines are checked)."""
    lines = geo.line_cells[list(geo.cell_lines[cell])]
    return bool((board[lines] == board[cell]).all(axis=1).any())


def play(geo: Geometry, x: Player, o: Player, rng: np.random.Generator,
         opening: int = 0, stop: int | None = None) -> tuple[int, list[Board]]:
    """One game: the winner's mark (0 for a draw) and the positions before each move. The first
    ``opening`` moves are random cells near the centre; the game is cut off after ``stop``."""
    board = np.zeros(geo.cells, dtype=np.int8)
    seen: list[Board] = []
    centre = np.array([c for c in range(geo.cells) if geo.centre_distance[c] <= 8])
    for ply in range(geo.cells if stop is None else min(stop, geo.cells)):
        mark = game.X if ply % 2 == 0 else game.O
        seen.append(board.copy())
        if ply < opening:
            free = centre[board[centre] == game.EMPTY]
            cell = int(free[int(rng.random() * free.size)])
        else:
            cell = (x if mark == game.X else o)(board.copy(), mark, rng)
        board[cell] = mark
        if wins(geo, board, cell):
            return mark, seen
    return 0, seen


def positions(rows: int, cols: int, k: int, count: int, seed: int = 0) -> list[Board]:
    """``count`` positions after 4 to 40 moves of unfinished games: half from random play, half
    from alpha-beta self-play."""
    geo, rng = geometry(rows, cols, k), np.random.default_rng(seed)
    player = AlphaBetaPlayer(rows, cols, k).act
    found: list[Board] = []
    while len(found) < count // 2:
        _, seen = play(geo, random_player, random_player, rng)
        eligible = [b for b in seen if 4 <= np.count_nonzero(b) <= 40]
        picks = rng.permutation(len(eligible))[: max(1, count // 20)]
        found += [eligible[i] for i in sorted(picks)]
    while len(found) < count:
        _, seen = play(geo, player, player, rng, opening=2, stop=41)
        found += [b for b in seen if 4 <= np.count_nonzero(b) <= 40][::3]
    return found[:count]


def reply_times(player: AlphaBetaPlayer, boards: list[Board]) -> dict[str, float]:
    """Milliseconds per ``act`` over ``boards``: wall-clock median, 90th percentile and maximum,
    and the median of the process's CPU time (less sensitive to other jobs on the machine)."""
    rng, wall, cpu = np.random.default_rng(0), [], []
    for board in boards:
        mark = game.X if np.count_nonzero(board) % 2 == 0 else game.O
        start, start_cpu = time.perf_counter(), time.process_time()
        player.act(board, mark, rng)
        wall.append(1000 * (time.perf_counter() - start))
        cpu.append(1000 * (time.process_time() - start_cpu))
    return {"median_ms": statistics.median(wall), "p90_ms": float(np.percentile(wall, 90)),
            "max_ms": max(wall), "cpu_median_ms": statistics.median(cpu),
            "positions": len(wall)}


def versus_random(rows: int, cols: int, k: int, games: int, seed: int = 0,
                  **settings: Any) -> dict[str, dict[str, int]]:
    """Alpha-beta against uniformly random play, ``games // 2`` games in each seat."""
    geo, rng = geometry(rows, cols, k), np.random.default_rng(seed)
    player = AlphaBetaPlayer(rows, cols, k, **settings).act
    record = {seat: {"win": 0, "draw": 0, "loss": 0} for seat in ("as_X", "as_O")}
    for i in range(games):
        seat, mark = ("as_X", game.X) if i % 2 == 0 else ("as_O", game.O)
        x, o = (player, random_player) if mark == game.X else (random_player, player)
        winner, _ = play(geo, x, o, rng)
        record[seat]["draw" if winner == 0 else "win" if winner == mark else "loss"] += 1
    return record


def measure(boards: tuple[tuple[int, int, int], ...] = BOARDS, count: int = 60, games: int = 20,
            seed: int = 0) -> dict[str, Any]:
    """Reply times (default settings) and results against random, per board ``RxCxK``."""
    results: dict[str, Any] = {"load_average": os.getloadavg()[0], "cpus": os.cpu_count()}
    for rows, cols, k in boards:
        player = AlphaBetaPlayer(rows, cols, k)
        results[f"{rows}x{cols}x{k}"] = {
            "player": repr(player),
            "reply": reply_times(player, positions(rows, cols, k, count, seed)),
            "versus_random": versus_random(rows, cols, k, games, seed),
        }
    return results


def report(results: dict[str, Any]) -> str:
    lines = [f"alpha-beta player, default settings (load average {results['load_average']:.2f} "
             f"on {results['cpus']} CPUs: times are wall clock and move with the load)"]
    for name, entry in results.items():
        if not isinstance(entry, dict):
            continue
        reply, record = entry["reply"], entry["versus_random"]
        lines.append(f"  {name}: reply median {reply['median_ms']:.1f} ms, 90% "
                     f"{reply['p90_ms']:.1f} ms, max {reply['max_ms']:.1f} ms "
                     f"(CPU time median {reply['cpu_median_ms']:.1f} ms) "
                     f"over {reply['positions']} positions")
        for seat, r in record.items():
            lines.append(f"    vs random {seat}: {r['win']} won, {r['draw']} drawn, "
                         f"{r['loss']} lost")
    gomoku = results.get("15x15x5")
    if gomoku:
        verdict = "met" if gomoku["reply"]["median_ms"] <= TARGET_MS else "NOT met"
        lines.append(f"  target: 15x15x5 median <= {TARGET_MS:.0f} ms: {verdict}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--quick", action="store_true", help="fewer positions and games")
    parser.add_argument("--json", type=results_file, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    if args.json:
        writable(args.json, "alphabeta.py")
    results = measure(count=20, games=4) if args.quick else measure()
    print(report(results))
    if args.json:
        write_json(args.json, results)
    return 0
