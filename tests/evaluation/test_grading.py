"""Sampled exact grading on boards of 17 to 64 cells (smoke-sized, on 4x5x4 where proofs take
milliseconds): the Wilson interval, the two samplings' verdicts, the best-response walk, and
``evaluate`` with ``--sample`` and ``--report``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from bench_helpers import benchmark_module

from gym_tictactoe import cli, game
from gym_tictactoe.evaluation import grading, sampled, walk
from gym_tictactoe.game import book, proven
from gym_tictactoe.players.proved import ProvedMoves

R454 = game.rules(4, 5, 4)


@pytest.fixture(autouse=True)
def small_book(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_TICTACTOE_CACHE", str(tmp_path))
    monkeypatch.setattr(book, "PLIES", {"4x5x4": 2})
    book.book.cache_clear()
    proven.proof_cache.cache_clear()
    yield
    book.book.cache_clear()
    proven.proof_cache.cache_clear()


def lowest_cell(observation, mask) -> int:
    return int(np.flatnonzero(mask)[0])


class Perfect:
    """The proved value-keeping move, lowest first (a relative board in, as a policy sees)."""

    def __init__(self) -> None:
        self.moves = ProvedMoves(R454)

    def __call__(self, observation, mask) -> int:
        cells = np.asarray(observation, dtype=np.int8)
        if (cells == 1).sum() != (cells == 2).sum():  # O to move: back to absolute marks
            cells = game.SWAP[cells]
        return self.moves.choices(R454.encode(cells))[0]


def test_wilson_matches_the_textbook_interval():
    low, high = sampled.wilson(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert sampled.wilson(0, 0) == (0.0, 1.0)
    assert sampled.wilson(5, 5)[1] == 1.0


@pytest.mark.parametrize("sampling", sampled.SAMPLINGS)
def test_a_perfect_policy_keeps_the_value_at_every_sampled_position(sampling):
    rate = sampled.sampled_rate(Perfect(), R454, 6, seed=1, sampling=sampling)
    assert rate.rate == 1.0 and rate.decided == 6 and not rate.first_blunders
    assert rate.interval[0] < 1.0 == rate.interval[1]


def test_a_weak_policys_blunders_are_proved_and_seeded():
    first = sampled.sampled_rate(lowest_cell, R454, 8, seed=2, sampling="uniform")
    again = sampled.sampled_rate(lowest_cell, R454, 8, seed=2, sampling="uniform")
    assert first.rate is not None and first.rate < 1.0 and first.first_blunders
    assert first.as_dict() | {"seconds": 0} == again.as_dict() | {"seconds": 0}
    board, move, keeping = first.first_blunders[0]
    assert move not in keeping and board[move] == game.EMPTY


@pytest.mark.slow
@pytest.mark.parametrize("seat", ["X", "O"])
def test_the_walk_finds_a_losing_line_or_says_undecided(seat):
    found = walk.best_response(lowest_cell, R454, seat, nodes=200, seconds=30)
    assert found["result"] == "loss"
    code = game.EMPTY_BOARD
    for cell in found["losing_line"]:
        code = R454.play(code, cell)
    # The line ends where the opponent is proved to win (or has won).
    assert R454.is_terminal(code) or proven.value(code, R454) == (1 if seat == "O" else -1)
    short = walk.best_response(Perfect(), R454, seat, nodes=3, seconds=30)
    assert short["result"] == "undecided" and short["nodes"] > 3
    assert short["no_loss_within"] is None
    longer = walk.best_response(Perfect(), R454, seat, nodes=300, seconds=30)
    assert longer["result"] == "undecided" and longer["no_loss_within"] >= 1


def test_bad_settings_are_refused_in_one_line():
    with pytest.raises(ValueError, match="sample must be an integer"):
        sampled.sampled_rate(lowest_cell, R454, 0)
    with pytest.raises(ValueError, match="sampling must be one of games, uniform"):
        sampled.sampled_rate(lowest_cell, R454, 1, sampling="all")
    with pytest.raises(ValueError, match="17 to 64 cells"):
        grading.grade(lowest_cell, game.rules(9, 9, 5))


def _model(path):
    """An untrained AlphaZero network on 4x5x4 (seeded): a model file evaluate loads."""
    torch = pytest.importorskip("torch")
    from agents.alphazero import files
    from agents.alphazero.network import NetworkSettings, PolicyValueNet

    torch.manual_seed(0)
    return files.save(path, PolicyValueNet(NetworkSettings(4, 1)), R454)


@pytest.mark.slow
def test_evaluate_grades_a_model_on_samples_and_reports_it(tmp_path, capsys):
    model = _model(tmp_path / "az.npz")
    report = tmp_path / "report"
    assert cli.main(["evaluate", str(model), "--games", "1", "--sample", "3",
                     "--walk-nodes", "30", "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert "sampled optimal-move rate on 4x5x4" in out and "best response, policy as O" in out
    data = json.loads((report / "report.json").read_text())
    assert set(data["grading"]["sampled"]) == {"games", "uniform"}
    assert data["grading"]["sampled"]["uniform"]["positions"] == 3


def test_evaluate_refuses_a_bad_sample_size(tmp_path, capsys):
    model = _model(tmp_path / "az.npz")
    with pytest.raises(SystemExit):
        cli.main(["evaluate", str(model), "--sample", "0"])
    assert "expected an integer from 1 to 100,000, got '0'" in capsys.readouterr().err


def test_the_benchmark_grades_players_and_writes_only_to_out(tmp_path, capsys):
    bench = benchmark_module("grading")
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "grading.json"
    assert bench.main(["--board", "4x5x4", "--players", "heuristic", "--sample", "2",
                       "--walk-nodes", "5", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    row = data["players"][0]
    assert row["player"] == "heuristic" and row["sampled"]["games"]["positions"] == 2
    assert {r["result"] for r in row["best_response"].values()} <= {"loss", "undecided"}
    assert "| heuristic |" in capsys.readouterr().out
    assert [p.name for p in out.parent.iterdir()] == ["grading.json"]


def test_the_benchmark_grades_a_saved_model_with_its_training(tmp_path, capsys):
    bench = benchmark_module("grading")
    (tmp_path / "run").mkdir()
    model = _model(tmp_path / "run" / "model.npz")
    (tmp_path / "run" / "results.json").write_text(json.dumps(
        {"config": {"algo": "alphazero"}, "learning_curve": [{"episodes": 7, "seconds": 1.0}]}))
    out = tmp_path / "grading.json"
    assert bench.main(["--board", "4x5x4", "--players", "--models", str(model), "--sample", "2",
                       "--walk-nodes", "5", "--out", str(out)]) == 0
    (row,) = json.loads(out.read_text())["players"]
    assert row["player"] == "alphazero (run)" and row["model"] == str(model)
    assert row["training"] == {"algo": "alphazero", "episodes": 7}
    assert row["sampled"]["uniform"]["positions"] == 2


def test_the_benchmark_refuses_a_missing_model_in_one_line(tmp_path):
    bench = benchmark_module("grading")
    with pytest.raises(SystemExit, match=r"^grading\.py: .*nothing\.npz"):
        bench.main(["--players", "--models", str(tmp_path / "nothing.npz"), "--sample", "1"])


def test_the_benchmark_refuses_a_model_of_another_board(tmp_path):
    bench = benchmark_module("grading")
    model = _model(tmp_path / "model.npz")
    with pytest.raises(SystemExit, match="is a 4x5x4 model; --board is 5x5x4"):
        bench.main(["--players", "heuristic", "--models", str(model), "--sample", "1"])
