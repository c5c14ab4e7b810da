"""The compiled alpha-beta player answers as the Python player it replaced did: the same moves,
score, depth and node count on seeded positions of 6x6x4, 7x7x5 and 15x15x5 at two node budgets
(recorded from the Python player by ``benchmarks/legacy.py``'s ``record_alphabeta``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gym_tictactoe import game
from gym_tictactoe.players.search import AlphaBetaPlayer

CASES = json.loads((Path(__file__).parents[1] / "data" / "alphabeta_python_moves.json")
                   .read_text())["cases"]


@pytest.mark.parametrize("board", ["6x6x4", "7x7x5", "15x15x5"])
def test_the_compiled_player_answers_as_the_python_one_did(board):
    cases = [case for case in CASES if case["board"] == board]
    assert len(cases) >= 18
    rows, cols, k = (int(n) for n in board.split("x"))
    players = {budget: AlphaBetaPlayer(rows, cols, k, max_nodes=budget) for budget in (300, 2000)}
    for case in cases:
        cells = np.array([".XO".index(ch) for ch in case["cells"]], dtype=np.int8)
        mark = game.X if np.count_nonzero(cells) % 2 == 0 else game.O
        found = players[case["max_nodes"]].search(cells, mark)
        assert (list(found.moves), found.score, found.depth, found.nodes) == (
            case["moves"], case["score"], case["depth"], case["nodes"]), case
