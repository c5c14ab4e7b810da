"""Digests of everything tic-tac-toe (3x3) computes, to pin it byte for byte across refactors.

``digests()`` returns SHA-256 digests of the rules tables, the solver's tables, the heuristic's
table, the game counts, and full seeded trajectories (observations, rewards, flags, infos) of a
seeded random agent against every 3x3 opponent in the single env and, for table opponents, in the
vector env. ``tests/test_boards_3x3.py`` compares them with ``3x3_digests.json``, which was
recorded from commit c760140, the last commit before boards of any size.

It uses only names that existed then, so it runs against both old and new code. To regenerate the
fixture from a given commit (only when a 3x3 change is intended), from the repository root::

    git worktree add /tmp/old <commit>
    PYTHONPATH=/tmp/old .venv/bin/python tests/data/record_3x3.py > tests/data/3x3_digests.json
    git worktree remove /tmp/old

(PYTHONPATH puts the old package ahead of the editable install; the script prints the imported
package's path on stderr so you can check.)
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

import numpy as np

import gym_tictactoe
from gym_tictactoe import game
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.envs.vector import TicTacToeVectorEnv
from gym_tictactoe.game import solver
from gym_tictactoe.players import heuristic

T3 = game.TICTACTOE  # tic-tac-toe's rules, for lines that would not fit

OPPONENTS = ["random", "minimax", "heuristic", "montecarlo", "epsilon:epsilon=0.3",
             "random+minimax*2"]
TABLE_OPPONENTS = [name for name in OPPONENTS if name != "montecarlo"]
MARKS = ["X", "O", "random"]
SEEDS = [0, 1, 2]
EPISODES = 4  # per seed, single env
VECTOR_STEPS = 30  # per seed, vector env of 8 boards


def array_digest(array: Any) -> str:
    """SHA-256 of an array's dtype, shape and bytes (C order): independent of NumPy's file
    format."""
    array = np.ascontiguousarray(array)
    digest = hashlib.sha256(f"{array.dtype.str}{array.shape}".encode())
    digest.update(array.tobytes())
    return digest.hexdigest()


def plain(value: Any) -> Any:
    """A value as JSON data, keeping the dtype of arrays and NumPy scalars."""
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, np.ndarray | np.generic):
        return {"dtype": value.dtype.str, "shape": list(np.shape(value)),
                "values": np.asarray(value).tolist()}
    return [type(value).__name__, value]


def json_digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(plain(value), sort_keys=True).encode()).hexdigest()


def table_digests() -> dict[str, str]:
    solution = solver.solve()
    tabled, reachable = T3.tables, np.zeros(T3.n_codes, dtype=bool)
    reachable[T3.reachable] = True
    tables = {  # under the names the 3x3 tables had as aliases in gym_tictactoe.game
        "CELLS": tabled.cells, "WINNER": tabled.winner, "TO_MOVE": tabled.to_move,
        "TERMINAL": tabled.terminal, "LEGAL_MASK": tabled.legal_mask, "NEXT": tabled.next,
        "CANONICAL": tabled.canonical, "REACHABLE": T3.reachable,
        "IS_REACHABLE": reachable, "LINE_ARRAY": T3.line_array,
        "SYMMETRIES": T3.symmetries, "INVERSE_SYMMETRIES": T3.inverse_symmetries,
        "solution.score": solution.score, "solution.value": solution.value,
        "solution.distance": solution.distance, "solution.best": solution.best,
        "solution.keeps_value": solution.keeps_value, "heuristic.table": heuristic.table(T3),
    }
    digests = {name: array_digest(table) for name, table in tables.items()}
    digests["LAYERS"] = json_digest(list(game.TICTACTOE.layers))
    digests["LINES"] = json_digest(game.TICTACTOE.lines)
    digests["count_games"] = json_digest(game.count_games())
    digests["random_play_outcome"] = json_digest(game.random_play_outcome())
    return digests


def agent_action(rng: np.random.Generator, mask: np.ndarray) -> int:
    """A seeded random legal cell, or now and then any cell (an illegal move ends the game)."""
    if rng.random() < 0.1:
        return int(rng.integers(9))
    return int(rng.choice(np.flatnonzero(mask)))


def recorded_info(info: dict, done: bool) -> dict:
    """``info`` as c760140 wrote it. Since issue 29 every key is on every step (-1, "" and False
    where c760140 left a key out and wrote None for a draw's winner), so that replay buffers
    storing infos as arrays can read them; mapping back keeps every other byte pinned."""
    info = dict(info)
    if info.get("opponent_action") == -1:
        del info["opponent_action"]
    if info.get("illegal_action") is False:
        del info["illegal_action"]
    if "winner" in info and not done:
        del info["winner"]
    elif "winner" in info:
        info["winner"] = info["winner"] or None
    return info


def single_trace(opponent: str, agent_mark: str, seed: int) -> list:
    env, rng = TicTacToeEnv(opponent=opponent, agent_mark=agent_mark), np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    trace: list = [(obs, recorded_info(info, False))]
    for _ in range(EPISODES):
        while not (len(trace[-1]) == 5 and trace[-1][2]):
            *step, info = env.step(agent_action(rng, trace[-1][-1]["action_mask"]))
            trace.append((*step, recorded_info(info, step[2])))
        obs, info = env.reset()
        trace.append((obs, recorded_info(info, False)))
    return trace


def vector_trace(opponent: str, agent_mark: str, seed: int) -> list:
    envs = TicTacToeVectorEnv(8, opponent=opponent, agent_mark=agent_mark)
    rng = np.random.default_rng(seed)
    trace: list = [envs.reset(seed=seed)]
    for _ in range(VECTOR_STEPS):
        masks = trace[-1][-1]["action_mask"]
        legal = np.argmax(rng.random(masks.shape) + masks, axis=1)
        actions = np.where(rng.random(8) < 0.9, legal, rng.integers(-1, 10, size=8))
        trace.append(envs.step(actions))
    return trace


def episode_digests() -> dict[str, str]:
    digests = {}
    for opponent in OPPONENTS:
        for mark in MARKS:
            traces = [single_trace(opponent, mark, seed) for seed in SEEDS]
            digests[f"single {opponent} {mark}"] = json_digest(traces)
    for opponent in TABLE_OPPONENTS:
        for mark in MARKS:
            traces = [vector_trace(opponent, mark, seed) for seed in SEEDS]
            digests[f"vector {opponent} {mark}"] = json_digest(traces)
    return digests


def digests() -> dict[str, str]:
    return {**table_digests(), **episode_digests()}


if __name__ == "__main__":
    print(f"recording {gym_tictactoe.__file__}", file=sys.stderr)
    print(json.dumps(digests(), indent=1, sort_keys=True))
