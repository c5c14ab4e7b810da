"""``python -m benchmarks openings``: every opening of a few random plies, proved, checked
against the table solver on boards it tables."""

from __future__ import annotations

import json
from math import perm

import pytest
from bench_helpers import benchmark_module

from gym_tictactoe import game
from gym_tictactoe.game import solver
from gym_tictactoe.game.notation import parse_cell

pytest.importorskip("numba")


@pytest.mark.parametrize(("board", "plies", "classes"), [("3x3x3", 2, 12), ("3x4x3", 1, 4)])
def test_each_opening_class_has_the_table_solver_s_value(board, plies, classes, tmp_path,
                                                          capsys):
    openings = benchmark_module("openings")
    out = tmp_path / "openings.json"
    assert openings.main(["--board", board, "--plies", str(plies), "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    rules = game.rules(*game.parse_board(board))
    # every ply sequence counted once, in a class of its own symmetry
    assert data["openings"] == sum(r["openings"] for r in data["rows"]) == \
        perm(rules.n_cells, plies)
    assert data["classes"] == len(data["rows"]) == classes
    solution = solver.build(rules)
    for row in data["rows"]:
        cells = [0] * rules.n_cells
        for side, stone in (("X", game.X), ("O", game.O)):
            for name in row[side]:
                cells[parse_cell(name, rules.shape)] = stone
        expected = int(solution.value_of([rules.encode(cells)])[0])  # for X
        assert row["value"] == openings.NAMES[expected], row
    total = sum(count["openings"] for count in data["by_value"].values())
    assert total == data["openings"] and data["by_value"]["unknown"]["openings"] == 0
    assert "openings" in capsys.readouterr().out


@pytest.mark.parametrize(("flags", "message"), [
    (["--plies", "36"], "--plies must leave the game open"),
    (["--plies", "5"], "at most 1,048,576 ply sequences"),
    (["--seconds", "nan"], "--seconds must be a number > 0"),
    (["--board", "9x9x5"], "at most 64 cells"),
])
def test_bad_flags_get_one_line(flags, message, capsys, tmp_path):
    openings = benchmark_module("openings")
    with pytest.raises(SystemExit) as exit_:
        openings.main([*flags, "--out", str(tmp_path / "o.json")])
    assert exit_.value.code == 2 and message in capsys.readouterr().err
