"""AlphaZero's steering: random starts aimed at the positions an exact checkpoint finds played
wrong (``--focus-share``, ``--back-share``) and the learning rate annealed over the budget
(``--learning-rate-end``). Whether they help is measured by benchmarks/alphazero.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.alphazero import AlphaZeroSettings, PlaySettings, Trainer
from agents.alphazero.network import NetworkSettings
from agents.alphazero.self_play import opening_boards
from agents.alphazero.training import Schedule
from gym_tictactoe import game
from gym_tictactoe.game.starts import StartWeights, start_codes

SMALL = AlphaZeroSettings(play=PlaySettings(simulations=8), network=NetworkSettings(8, 1),
                          games_per_round=4, steps_per_round=2, batch_size=16)


def test_aimed_random_starts_come_from_the_aim_and_the_rest_stay_empty():
    rules = game.TICTACTOE
    one = start_codes(rules)[1234]
    aim = StartWeights(rules, [1.0], codes=[one])
    boards = opening_boards(rules, 200, 0.5, np.random.default_rng(0), aim)
    started = (boards != game.EMPTY).any(axis=1)
    assert 60 < started.sum() < 140
    assert (boards[started] == rules.cells_of(np.array([one]))).all()


def test_without_an_aim_the_starts_are_drawn_as_before():
    rules = game.TICTACTOE
    first = opening_boards(rules, 64, 0.75, np.random.default_rng(3))
    again = opening_boards(rules, 64, 0.75, np.random.default_rng(3), None)
    assert (first == again).all() and (first != game.EMPTY).any()


@pytest.mark.parametrize("games, seconds, spent", [
    (0, 0.0, 0.0), (50, 0.0, 0.5), (50, 90.0, 0.75), (200, 0.0, 1.0)])
def test_the_budget_spent_is_the_larger_share_of_games_and_minutes(games, seconds, spent):
    assert Schedule(games=100, minutes=2.0).spent(games, seconds) == spent


def test_the_learning_rate_falls_geometrically_to_its_end_over_the_budget():
    settings = AlphaZeroSettings(**{**SMALL.__dict__, "learning_rate": 1e-2,
                                    "learning_rate_end": 1e-4})
    trainer = Trainer(game.TICTACTOE, settings, seed=0)
    schedule = Schedule(games=100)
    trainer.games = 50
    trainer.anneal(schedule)
    assert trainer.learning_rate == pytest.approx(1e-3)  # halfway: the geometric mean
    trainer.games = 100
    trainer.anneal(schedule)
    assert trainer.learning_rate == pytest.approx(1e-4)
    assert trainer.settings.learning_rate == 1e-2  # the schedule's start is kept


def test_a_finished_run_continued_to_a_larger_budget_stays_at_the_end_rate(tmp_path):
    from agents.alphazero.state import load_state, save_state
    from agents.sb3 import torch_threads

    settings = AlphaZeroSettings(**{**SMALL.__dict__, "learning_rate": 1e-2,
                                    "learning_rate_end": 1e-4})
    trainer = Trainer(game.TICTACTOE, settings, seed=0)
    with torch_threads(1):
        trainer.train(8, None)  # rounds of 4 games: the last one starts halfway, at 1e-3
    assert trainer.learning_rate == pytest.approx(1e-3)
    save_state(tmp_path / "state.npz", trainer, {"seed": 0}, 1.0, [])
    resumed = load_state(tmp_path / "state.npz").trainer
    with torch_threads(1):
        resumed.train(16, None)  # annealed over the first budget of 8 games, not over 16
    assert resumed.learning_rate == pytest.approx(1e-4)
    resumed.set_learning_rate(5e-3)  # a new rate for the continuation: fixed from then on
    with torch_threads(1):
        resumed.train(20, None)
    assert resumed.learning_rate == 5e-3 and resumed.settings.learning_rate_end is None


def test_a_fixed_rate_is_left_alone():
    trainer = Trainer(game.TICTACTOE, SMALL, seed=0)
    trainer.games = 3
    trainer.anneal(Schedule(games=4))
    assert trainer.learning_rate == SMALL.learning_rate


@pytest.mark.parametrize("value", [0.0, -1e-3, 2.0])
def test_learning_rate_end_must_be_in_0_1(value):
    with pytest.raises(ValueError, match="learning_rate_end"):
        AlphaZeroSettings(learning_rate_end=value)


def test_train_py_aims_each_checkpoint_and_records_the_rate(tmp_path):
    from train import main

    code = main(["--algo", "alphazero", "--episodes", "16", "--eval-every", "8",
                 "--focus-share", "0.5", "--back-share", "0.2", "--learning-rate-end", "0.0002",
                 "--games-per-round", "4", "--steps-per-round", "2", "--batch-size", "16",
                 "--simulations", "8", "--channels", "8", "--blocks", "1", "--no-progress",
                 "--out", str(tmp_path), "--name", "aimed"])
    assert code == 0
    (folder,) = tmp_path.glob("aimed*")
    results = json.loads((folder / "results.json").read_text())
    curve = results["learning_curve"]
    assert [entry["episodes"] for entry in curve] == [8, 16]
    assert all(entry["wrong"] > 0 for entry in curve)  # a tiny net still plays some wrong
    assert curve[0]["learning_rate"] > curve[1]["learning_rate"] >= 0.0002
    assert results["config"]["focus"]["share"] == 0.5
    assert results["config"]["hyperparameters"]["learning_rate_end"] == 0.0002


@pytest.mark.parametrize("argv, message", [
    (["--board", "5x5x4", "--focus-share", "0.5"], "boards of at most 16 cells"),
    (["--forget"], "--forget applies to --algo q only"),
    (["--learning-rate-end", "0"], "--learning-rate-end"),
])
def test_train_py_refuses_aims_it_cannot_apply(argv, message, capsys, tmp_path):
    from train import main

    with pytest.raises(SystemExit) as stop:
        main(["--algo", "alphazero", *argv, "--out", str(tmp_path)])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_a_resumed_run_keeps_its_aim_and_refuses_another(tmp_path):
    from train import main, parse_args

    code = main(["--algo", "alphazero", "--episodes", "8", "--eval-every", "8",
                 "--focus-share", "0.5", "--back-share", "0.2", "--games-per-round", "4",
                 "--steps-per-round", "1", "--batch-size", "16", "--simulations", "4",
                 "--channels", "8", "--blocks", "1", "--no-progress", "--out", str(tmp_path),
                 "--name", "aimed"])
    assert code == 0
    (folder,) = tmp_path.glob("aimed*")
    config = parse_args(["--resume", str(folder), "--episodes", "16"])
    assert config.focus is not None
    assert (config.focus.share, config.focus.back_share) == (0.5, 0.2)
    with pytest.raises(SystemExit):
        parse_args(["--resume", str(folder), "--episodes", "16", "--focus-share", "0.3"])
