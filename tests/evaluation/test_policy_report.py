"""The policy report (``evaluate MODEL --report DIR``) and the heat maps of a position."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from missing_packages import run_without

from agents.tabular.q_learning import QLearningAgent
from gym_tictactoe import cli, game
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.evaluation import UniformPolicy, evaluate, policy_report
from gym_tictactoe.evaluation.policy_heatmap import policy_heatmap, policy_values, solver_values
from gym_tictactoe.evaluation.policy_report import (
    MAX_BLUNDER_BOARDS,
    MOVE_COLOUR,
    is_report,
    marked_board,
    write_report,
)

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def agent() -> QLearningAgent:
    """A weak Q agent (a few hundred seeded episodes): losing lines and blunders to draw."""
    trained = QLearningAgent(seed=0)
    trained.train(TicTacToeEnv(opponent="random"), 300, seed=0)
    return trained


@pytest.fixture(scope="module")
def model(agent, tmp_path_factory):
    return str(agent.save(tmp_path_factory.mktemp("model") / "q.npz"))


def pngs(folder) -> set[str]:
    return {path.name for path in folder.glob("*.png")}


def leftovers(parent) -> list[str]:
    return [path.name for path in parent.iterdir() if path.name.startswith(".")]


@pytest.mark.slow
def test_report_draws_summary_losing_lines_blunders_and_heat_maps(agent, tmp_path):
    report = evaluate(agent)
    index = write_report(agent, tmp_path / "report", report=report, title="q.npz")
    folder, page = index.parent, index.read_text(encoding="utf-8")
    assert "<h2>Summary</h2>" in page and "Optimal-move rate" in page
    assert f"{report.move_rate.rate:.2%} of 4,520 positions" in page
    for seat, response in report.best_response.items():
        assert response.result == "loss"  # a weak agent: both lines are drawn
        boards = {f"line-{seat.lower()}-{ply:02d}.png"
                  for ply in range(1, len(response.losing_line) + 1)}
        assert boards <= pngs(folder)
        assert any(name.startswith(f"line-{seat.lower()}-heat-") for name in pngs(folder))
    drawn = min(MAX_BLUNDER_BOARDS, report.move_rate.n_blunders)
    assert report.move_rate.n_blunders > drawn  # so the page must say how many were left out
    assert f"({report.move_rate.n_blunders - drawn:,} not drawn)" in page
    assert {f"blunder-{n:02d}.png" for n in range(1, drawn + 1)} <= pngs(folder)
    assert {f"blunder-{n:02d}-heat.png" for n in range(1, drawn + 1)} <= pngs(folder)
    assert "opening-heat.png" in pngs(folder)
    # Self-contained: every picture linked relatively and present, nothing fetched.
    assert set(re.findall(r'src="([^"]+)"', page)) == pngs(folder)
    assert "http" not in page and "<script" not in page
    assert json.loads((folder / "report.json").read_text())["board"] == "3x3x3"
    assert leftovers(tmp_path) == []


@pytest.mark.slow
def test_evaluate_report_writes_the_folder_whole(model, tmp_path, capsys):
    # About 5 s: two whole reports, the second over the first (the replacing path).
    target = tmp_path / "out" / "report"
    assert cli.main(["evaluate", model, "--games", "2", "--report", str(target)]) == 0
    out = capsys.readouterr().out
    assert "optimal-move rate" in out and f"report: {target / 'index.html'}" in out
    assert is_report(target) and leftovers(target.parent) == []
    # Again, onto the previous report: replaced, still one whole report.
    (target / "blunder-01.png").unlink()
    assert cli.main(["evaluate", model, "--games", "2", "--report", str(target)]) == 0
    assert (target / "blunder-01.png").exists() and leftovers(target.parent) == []


def test_a_failure_leaves_no_folder(agent, tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(policy_report, "policy_heatmap", broken)
    with pytest.raises(OSError, match="No space"):
        write_report(agent, tmp_path / "report")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_that_is_no_report_is_refused(model, tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert cli.main(["evaluate", model, "--games", "2", "--report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        f"gym-tictactoe evaluate: error: {tmp_path} exists and is not a report written by "
        "evaluate --report; give a new or empty folder (a previous report is replaced)"]
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    assert cli.main(["evaluate", model, "--report", str(tmp_path / "notes.txt")]) == 2
    assert "exists and is not a folder" in capsys.readouterr().err


def test_report_takes_one_model_on_a_solved_board(agent, model, tmp_path, capsys):
    assert cli.main(["evaluate", model, model, "--report", str(tmp_path / "r")]) == 2
    assert "--report takes one model; got 2" in capsys.readouterr().err

    def big(observation, mask):
        return int(np.flatnonzero(mask)[0])
    big.rules = game.rules(5, 5, 4)
    with pytest.raises(ValueError, match="a policy report needs a board of at most 16 cells"):
        write_report(big, tmp_path / "r")
    with pytest.raises(ValueError, match="max_blunders must be"):
        write_report(agent, tmp_path / "r", max_blunders=-1)
    assert not (tmp_path / "r").exists()


@pytest.mark.e2e
def test_report_without_matplotlib_is_one_line(model, tmp_path):
    done = run_without("matplotlib", "evaluate", model, "--report", str(tmp_path / "r"))
    assert done.returncode == cli.EXIT_MISSING_EXTRA
    assert done.stderr.strip().splitlines() == [
        "gym-tictactoe evaluate: error: --report needs matplotlib, which is not installed: "
        'pip install ".[plot]" in a clone of gym-tictactoe']
    assert not (tmp_path / "r").exists()


def test_report_on_a_first_player_win_board(tmp_path):
    """3x4x3 (X wins with perfect play) and a policy that offers only its moves."""
    def lowest(observation, mask):
        return int(np.flatnonzero(mask)[0])
    lowest.rules = game.rules(3, 4, 3)
    page = write_report(lowest, tmp_path / "r", max_blunders=2).read_text()
    assert "perfect play gets a win" in page and "perfect play gets a loss" in page
    assert "the first 2 drawn" in page


# --- the heat maps' parts ---------------------------------------------------------------------


def test_policy_values_use_what_the_policy_offers(agent):
    board = [1, 0, 0, 0, 2, 0, 0, 0, 0]  # X to move
    q = policy_values(agent, board)
    assert q.kind == "Q-value" and np.isnan(q.values[[0, 4]]).all()
    np.testing.assert_allclose(q.values[1:4], agent.q_values(np.array(board))[1:4])
    uniform = policy_values(UniformPolicy(), board)
    assert uniform.kind == "probability"
    np.testing.assert_allclose(uniform.values[~np.isnan(uniform.values)], 1 / 7)
    moves = policy_values(lambda observation, mask: 8, board)
    assert moves.kind == "move" and moves.move == 8 and moves.values[8] == 1.0


def test_solver_values_and_a_bad_board():
    # X to move with 0 and 1 taken, O on 3 and 4: X wins at once on 2.
    scores = solver_values([1, 1, 0, 2, 2, 0, 0, 0, 0], game.TICTACTOE)
    assert scores[2] == 9 and scores[0] == -128  # H - 1: a win in 1 ply; occupied
    with pytest.raises(ValueError, match="no position with a move to make"):
        solver_values([1, 1, 1, 2, 2, 0, 0, 0, 0], game.TICTACTOE)
    with pytest.raises(ValueError, match="a 3x3 board is a position code or 9 cells"):
        policy_heatmap(UniformPolicy(), [1, 2])


def test_heatmap_and_marked_board_are_pictures(agent):
    fig = policy_heatmap(agent, game.EMPTY_BOARD)
    fig.canvas.draw()
    image = np.asarray(fig.canvas.buffer_rgba())
    assert image.ndim == 3 and image.shape[1] > image.shape[0] > 100
    marked = marked_board([1, 0, 0, 0, 2, 0, 0, 0, 0], game.TICTACTOE, 1, (2, 3), 60)
    assert marked.dtype == np.uint8 and (marked == MOVE_COLOUR).all(axis=2).sum() > 100


def test_report_repr_is_one_short_line():
    text = repr(evaluate(UniformPolicy()))
    assert text.startswith("Report(X='loss', O='loss', optimal_move_rate=0.5757")
    assert len(text) < 200 and "\n" not in text
    assert len(str(evaluate(UniformPolicy()).move_rate)) < 120
