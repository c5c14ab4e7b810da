"""Boards other than 3x3, for ``benchmarks/speed.py`` (one command runs both).

* 4x4x4 against 3x3, single env with the minimax opponent, in the same run.
* Random play on 6x6x4 and on free-style gomoku (15x15x5): our single env (random opponent) and
  vector env (B=4096) against OpenSpiel's ``mnk`` (m=6, n=6, k=4) and ``gomoku`` games driven from
  Python, as its users drive them.
* Fixed costs, each in a fresh process with an empty cache folder: solving (4,4,3) and (4,4,4)
  (seconds and peak memory), then loading the cached solution.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.timing import Play

BIG = {"6x6x4": (6, 6, 4), "15x15x5": (15, 15, 5)}
VECTOR_BOARDS = 4096


def pick(mask: np.ndarray, rnd: random.Random) -> int:
    """A uniformly random legal cell of a 0/1 mask (the same agent for every contender)."""
    cells = mask.nonzero()[0]
    return int(cells[int(rnd.random() * cells.size)])


def ours_single(rows: int, cols: int, win_length: int, opponent: str) -> Play:
    import gymnasium as gym

    import gym_tictactoe  # noqa: F401  (registers TicTacToe-v0)

    env = gym.make("TicTacToe-v0", opponent=opponent, rows=rows, cols=cols,
                   win_length=win_length)
    rnd = random.Random(0)
    env.reset(seed=0)

    def play() -> int:
        _, info = env.reset()
        moves, done = int(info["opponent_action"] >= 0), False
        while not done:
            _, _, done, _, info = env.step(pick(info["action_mask"], rnd))
            moves += 1 + (info["opponent_action"] >= 0)
        return moves
    return play


def ours_vector(rows: int, cols: int, win_length: int, boards: int = VECTOR_BOARDS) -> Play:
    import gymnasium as gym

    import gym_tictactoe  # noqa: F401

    envs = gym.make_vec("TicTacToe-v0", num_envs=boards, opponent="random", rows=rows, cols=cols,
                        win_length=win_length, vectorization_mode="vector_entry_point")
    rng = np.random.default_rng(0)
    state = {"mask": envs.reset(seed=0)[1]["action_mask"], "waiting": 0}

    def play() -> int:
        actions = random_cells(state["mask"], rng)
        _, _, terminated, _, info = envs.step(actions)
        moves = boards - state["waiting"] + np.count_nonzero(info["_opponent_action"])
        state.update(mask=envs.unwrapped.action_masks(), waiting=np.count_nonzero(terminated))
        return moves
    return play


def random_cells(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random allowed cell per row: a random cell, drawn again where not allowed
    (few draws while boards are mostly empty), the rest by masked noise."""
    rows, n = masks.shape
    cells = (rng.random(rows) * n).astype(np.int64)
    for _ in range(4):
        bad = np.flatnonzero(~masks[np.arange(rows), cells].astype(bool))
        if bad.size == 0:
            return cells
        cells[bad] = (rng.random(bad.size) * n).astype(np.int64)
    bad = np.flatnonzero(~masks[np.arange(rows), cells].astype(bool))
    cells[bad] = np.argmax(rng.random((bad.size, n)) * masks[bad], axis=1)
    return cells


def openspiel(name: str, params: dict[str, Any]) -> Play:
    import pyspiel

    game, rnd = pyspiel.load_game(name, params), random.Random(0)

    def play() -> int:
        state, moves = game.new_initial_state(), 0
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply_action(legal[int(rnd.random() * len(legal))])
            moves += 1
        return moves
    return play


def groups() -> dict[str, dict[str, Callable[[], Play]]]:
    """Contender groups for ``timing.measure``: the first of each is ours."""
    found = {
        "single env minimax, 3x3 vs 4x4x4, moves/s": {
            "gym-tictactoe 3x3x3": lambda: ours_single(3, 3, 3, "minimax"),
            "gym-tictactoe 4x4x4": lambda: ours_single(4, 4, 4, "minimax"),
        },
    }
    for label, size in BIG.items():
        params = {"m": size[0], "n": size[1], "k": size[2]}
        name = "mnk" if label == "6x6x4" else "gomoku"
        found[f"random play {label}, moves/s"] = {
            "gym-tictactoe single": lambda s=size: ours_single(*s, "random"),
            f"OpenSpiel {name}": lambda n=name, p=params: openspiel(
                n, p if n == "mnk" else {"size": 15, "connect": 5}),
            f"gym-tictactoe vector B={VECTOR_BOARDS}": lambda s=size: ours_vector(*s),
        }
    return found


TARGETS = [  # (label, group, ours, peer, ratio needed)
    ("4x4x4 minimax >= 0.5x 3x3", "single env minimax, 3x3 vs 4x4x4, moves/s",
     "gym-tictactoe 4x4x4", "gym-tictactoe 3x3x3", 0.5),
    *[(f"{label} single >= 0.3x OpenSpiel", f"random play {label}, moves/s",
       "gym-tictactoe single", f"OpenSpiel {'mnk' if label == '6x6x4' else 'gomoku'}", 0.3)
      for label in BIG],
    *[(f"{label} vector B={VECTOR_BOARDS} >= 3x OpenSpiel", f"random play {label}, moves/s",
       f"gym-tictactoe vector B={VECTOR_BOARDS}",
       f"OpenSpiel {'mnk' if label == '6x6x4' else 'gomoku'}", 3.0) for label in BIG],
]

_SOLVE = """
import json, resource, time
from gym_tictactoe import game
from gym_tictactoe.game import solver
rules = game.rules({rows}, {cols}, {k})
start = time.perf_counter()
solver.solve(rules)
print(json.dumps({{"seconds": time.perf_counter() - start,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def solve_costs(sizes: tuple[tuple[int, int, int], ...] = ((4, 4, 3), (4, 4, 4))) -> dict:
    """Per board: a cold solve and a cached load, each in a new process with its own cache."""
    costs = {}
    for size in sizes:
        with tempfile.TemporaryDirectory() as cache:
            env = {"GYM_TICTACTOE_CACHE": cache, "PATH": ""}
            code = _SOLVE.format(rows=size[0], cols=size[1], k=size[2])
            runs = [json.loads(subprocess.run([sys.executable, "-c", code], env=env, text=True,
                                              capture_output=True, check=True).stdout)
                    for _ in range(2)]
        costs["x".join(map(str, size))] = {"solve": runs[0], "load": runs[1]}
    return costs


def print_solve_costs(costs: dict) -> list[dict[str, Any]]:
    print("\nsolving 16-cell boards (fresh process, empty cache; then loading the cache)")
    checks = []
    for board, run in costs.items():
        solve, load = run["solve"], run["load"]
        print(f"  {board:8} solve {solve['seconds']:6.1f} s, peak {solve['peak_mb']:6.0f} MB;"
              f"  load {load['seconds']:5.2f} s")
        for label, ok, value in (
            (f"{board} solve <= 60 s", solve["seconds"] <= 60, solve["seconds"]),
            (f"{board} solve peak <= 2 GB", solve["peak_mb"] <= 2048, solve["peak_mb"]),
            (f"{board} cached load <= 1 s", load["seconds"] <= 1, load["seconds"]),
        ):
            checks.append({"target": label, "value": value, "status": "PASS" if ok else "MISS"})
    return checks
