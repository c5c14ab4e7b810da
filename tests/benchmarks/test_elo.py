"""``python -m benchmarks elo``: the key pairs (the learner, alphabeta, OpenSpiel's MCTSBot)
play ``--key-games`` games, the others ``--games``, each pairing's cost is recorded, MCTSBot
plays on our cell numbering and reproduces, and a missing OpenSpiel leaves it out in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from bench_helpers import benchmark_module

from gym_tictactoe import game
from gym_tictactoe.game.positions import from_board

pytest.importorskip("torch")
pytest.importorskip("choix")


@pytest.fixture
def model(tmp_path):
    """An untrained network (seeded) on 3x3: the smoke test rates players, not learning."""
    import torch

    from agents.alphazero import files
    from agents.alphazero.network import NetworkSettings, PolicyValueNet

    torch.manual_seed(0)
    return files.save(tmp_path / "az.npz", PolicyValueNet(NetworkSettings(4, 1)), game.TICTACTOE)


def rate(model, tmp_path, monkeypatch, *flags):
    elo = benchmark_module("elo")
    monkeypatch.setattr(elo, "BUILT_IN", ("random", "alphabeta"))  # the smoke test's few
    out = tmp_path / "elo.json"
    assert elo.main(["--board", "3x3x3", "--model", str(model), "--simulations", "4",
                     "--games", "1", "--key-games", "4", "--opening", "1", "--out",
                     str(out), *flags]) == 0
    return json.loads(out.read_text())


def test_the_learner_may_read_the_threats(model, tmp_path, monkeypatch):
    monkeypatch.setattr(benchmark_module("openspiel_bot"), "installed", lambda: False)
    data = rate(model, tmp_path, monkeypatch, "--threats")
    assert data["key_players"] == [f"{model}:simulations=4,threats=on", "alphabeta"]
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "elo_6x6x4.json").write_text(json.dumps(data))
    tables = benchmark_module("elo_tables")
    assert "a search of 4 simulations, reading threats" in tables.elo(tmp_path / "results")
    assert "(search of 4, reading threats) against `alphabeta`" in tables.elo_pairs(
        tmp_path / "results")


def test_the_key_pairs_play_key_games_and_the_others_games(model, tmp_path, monkeypatch):
    pytest.importorskip("pyspiel")
    data = rate(model, tmp_path, monkeypatch)
    learner = f"{model}:simulations=4"
    assert data["key_players"] == [learner, "alphabeta", "MCTSBot"]
    assert "MCTSBot" in data["players"] and data["mctsbot"]["simulations"] == 1000
    assert data["alphabeta_max_nodes"] == 25_000
    games = {(c["x"], c["o"]): c["games"] for c in data["costs"]}
    assert len(games) == len(data["pairings"]) == 5 * 4  # every ordered pairing, no self-play
    for (x, o), count in games.items():
        assert count == (2 if {x, o} <= set(data["key_players"]) else 1), (x, o)
    for (x, o, tally), cost in zip(data["pairings"], data["costs"], strict=True):
        assert [x, o] == [cost["x"], cost["o"]] and sum(tally.values()) == cost["games"]
    assert [pair["games"] for pair in data["key_pairs"]] == [4, 4, 4]
    gap = data["learner_vs_alphabeta"]
    assert gap["players"] == [learner, "alphabeta"] and "elo" in gap and "interval" in gap
    assert data["cost"]["cpus"] and len(data["cost"]["load_average_at_start"]) == 3
    assert {rating["name"] for rating in data["ratings"]} == set(data["players"])
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "elo_6x6x4.json").write_text(json.dumps(data))
    tables = benchmark_module("elo_tables")
    pairs = tables.elo_pairs(tmp_path / "results")
    assert "| 6x6x4 | AlphaZero (search of 4) against `MCTSBot` | " in pairs
    assert "not recorded" not in pairs and "| the whole table | 26 games |" in pairs
    assert "OpenSpiel's `MCTSBot` (1,000 simulations)" in tables.elo(tmp_path / "results")
    assert "(4 games head to head) on 6x6x4" in tables.elo_rows(tmp_path / "results")[0][1]


def test_without_openspiel_mctsbot_is_left_out_in_one_line(model, tmp_path, monkeypatch,
                                                            capsys):
    monkeypatch.setattr(benchmark_module("openspiel_bot"), "installed", lambda: False)
    data = rate(model, tmp_path, monkeypatch)
    assert "MCTSBot" not in data["players"] and "left_out" in data["mctsbot"]
    assert [pair["games"] for pair in data["key_pairs"]] == [4]
    assert "elo.py: OpenSpiel is not installed" in capsys.readouterr().err


def test_mctsbot_takes_the_win_on_our_numbering_of_a_board_wider_than_high():
    pytest.importorskip("pyspiel")
    bot = benchmark_module("openspiel_bot").MCTSBotPlayer(game.rules(3, 4, 3))
    board = np.zeros(12, np.int8)
    board[[5, 6]] = game.X  # row 1, columns 1 and 2: X wins at column 0 or 3 of row 1
    board[[0, 11]] = game.O
    position = from_board(game.rules(3, 4, 3), board, game.X)
    assert bot.move(position, np.random.default_rng(0)) in (4, 7)


def test_mctsbot_is_seeded_per_game():
    pytest.importorskip("pyspiel")
    rules = game.rules(4, 4, 4)
    bot = benchmark_module("openspiel_bot").MCTSBotPlayer(rules, simulations=50)

    def moves(seed):
        bot.reset(np.random.default_rng(seed))
        return [bot.move(from_board(rules, np.zeros(16, np.int8), game.X), None)
                for _ in range(3)]

    assert moves(1) == moves(1)
