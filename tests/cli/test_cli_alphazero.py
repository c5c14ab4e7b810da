"""AlphaZero models on the command line, raw and with search: ``evaluate --simulations``,
``PATH:simulations=N`` as an arena player and play opponent, and their bad input."""

from __future__ import annotations

import io
import re
import zipfile

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.alphazero import files
from agents.alphazero.network import NetworkSettings, PolicyValueNet
from agents.models import load_policy
from gym_tictactoe import cli, evaluation, game
from gym_tictactoe.cli import models as cli_models


def alphazero_model(path, rules=game.TICTACTOE):
    """An untrained network (seeded): it plays badly, which is what the measures must show."""
    import torch

    torch.manual_seed(0)
    return files.save(path, PolicyValueNet(NetworkSettings(4, 1)), rules)


@pytest.fixture
def model(tmp_path):
    return alphazero_model(tmp_path / "az.npz")


def run(argv, capsys, monkeypatch, stdin=""):
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def seat_results(out):
    return dict(re.findall(r"best response, policy as (X|O): (\w+)", out))


def test_evaluate_with_simulations_scores_the_search_player_exactly(model, capsys, monkeypatch):
    code, out, _ = run(["evaluate", str(model), "--simulations", "6", "--games", "2"],
                       capsys, monkeypatch)
    assert code == 0
    assert "alphazero model, search of 6 simulations a move" in out and "evaluated in" in out
    searching, _ = load_policy(model, max_simulations=6)
    report = evaluation.evaluate(searching)
    assert seat_results(out) == {seat: r.result for seat, r in report.best_response.items()}
    assert f"optimal-move rate: {report.move_rate.rate:.2%} of 4,520 positions" in out
    raw = evaluation.evaluate(load_policy(model)[0])
    assert raw.move_rate.rate != report.move_rate.rate  # the search is what was measured


def test_a_spec_s_own_simulations_come_before_the_flag(model, capsys, monkeypatch):
    spec = f"{model}:simulations=6"
    code, out, _ = run(["evaluate", spec, "--simulations", "50", "--games", "1"], capsys,
                       monkeypatch)
    assert code == 0 and "search of 6 simulations a move" in out


def test_a_search_on_a_big_board_gets_the_best_response_alone(model, capsys, monkeypatch):
    """Where the board has more positions than a search can be asked about (4x4), evaluate
    asks only the positions reached against the player, and says so; here the limit is
    lowered so that 3x3 stands in for 4x4. The result per seat is the full evaluation's."""
    monkeypatch.setattr(cli_models, "FULL_SEARCH_POSITIONS", 100)
    code, out, _ = run(["evaluate", str(model), "--simulations", "6", "--games", "1"], capsys,
                       monkeypatch)
    assert code == 0
    assert "asking the player only at the positions reached against it" in out
    asked = int(re.search(r"asked at ([\d,]+) of 4,520 positions", out)[1].replace(",", ""))
    assert 0 < asked < 4520 and "optimal-move rate:" not in out
    full = evaluation.evaluate(load_policy(model, max_simulations=6)[0])
    assert seat_results(out) == {seat: r.result for seat, r in full.best_response.items()}
    code, _, err = run(["evaluate", str(model), "--simulations", "6", "--report",
                        str(model.parent / "report")], capsys, monkeypatch)
    assert code == 2 and "--report needs the model's move at every position" in err


def test_arena_takes_a_model_with_search_as_a_player_of_its_own(model, capsys, monkeypatch):
    players = f"{model}:simulations=4,{model},minimax"
    code, out, _ = run(["arena", "--players", players, "--games", "2"], capsys, monkeypatch)
    assert code == 0
    table = out[out.index("X player"): out.index("\n\n", out.index("X player"))]
    rows = [line for line in table.splitlines()[1:]]
    assert len(rows) == 9 and sum(line.startswith(f"{model}:simulations=4 ") for line in rows) == 3
    assert all(sum(map(int, line.split()[-3:])) == 2 for line in rows)


def test_play_against_a_model_with_search(model, capsys, monkeypatch):
    spec = f"{model}:simulations=4"
    code, out, _ = run(["play", "--opponent", spec], capsys, monkeypatch, stdin="4\nq\n")
    assert code == 0 and f"playing {spec}" in out and f"{spec} (O) played" in out


def test_a_model_of_another_board_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    big = alphazero_model(tmp_path / "big.npz", game.rules(4, 4, 4))
    code, _, err = run(["play", "--opponent", f"{big}:simulations=4"], capsys, monkeypatch)
    assert code == 2
    assert err.strip() == (f"gym-tictactoe play: error: {big} plays the 4x4x4 board; this play "
                           "is on 3x3x3 (choose it with --board 4x4x4)")
    code, _, err = run(["arena", "--players", f"{big},random"], capsys, monkeypatch)
    assert code == 2 and "this arena is on 3x3x3 (choose it with --board 4x4x4)" in err


@pytest.mark.parametrize("value", ["0", "-3", "1.5", "x", "10001", ""])
def test_simulations_must_be_an_integer_from_1_to_10000(model, capsys, value):
    for argv in (["evaluate", str(model), "--simulations", value],
                 ["arena", "--players", f"{model}:simulations={value}"],
                 ["play", "--opponent", f"{model}:simulations={value}"]):
        with pytest.raises(SystemExit) as stop:
            cli.main(argv)
        err = capsys.readouterr().err
        assert stop.value.code == 2 and "Traceback" not in err
        assert f"must be an integer from 1 to 10,000; got '{value}'" in err.splitlines()[-1]


@pytest.mark.parametrize("option", ["depth=3", "simulations", "simulations=4,c=1"])
def test_a_model_takes_no_other_option(model, capsys, option):
    with pytest.raises(SystemExit) as stop:
        cli.main(["arena", "--players", f"{model}:{option}"])
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert "bad model option" in err and "a model takes simulations=N" in err


def test_simulations_for_a_model_without_search_are_refused(tmp_path, capsys, monkeypatch):
    from agents.tabular.q_learning import QLearningAgent

    q = QLearningAgent(seed=0).save(tmp_path / "q.npz")
    sb3 = tmp_path / "sb3.zip"
    with zipfile.ZipFile(sb3, "w") as archive:  # what tells an SB3 model of ours apart
        archive.writestr("gym_tictactoe.json", "{}")
    for path, kind in ((q, "q"), (sb3, "sb3")):
        code, _, err = run(["evaluate", str(path), "--simulations", "5"], capsys, monkeypatch)
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert f"{path} is a {kind} model, which has no search" in err
        code, _, err = run(["arena", "--players", f"{path}:simulations=5"], capsys, monkeypatch)
        assert code == 2 and f"{kind} model, which has no search" in err


def test_a_network_whose_layers_do_not_match_its_header_is_refused(model, capsys, monkeypatch):
    import json

    with np.load(model) as data:
        arrays = {key: data[key] for key in data.files}
    header = json.loads(str(arrays["alphazero"]))
    header["layers"][0][1][0] += 1  # a layer's shape no longer the one its settings build
    arrays["alphazero"] = np.array(json.dumps(header))
    np.savez(model, **arrays)
    for argv in (["evaluate", str(model), "--simulations", "4"],
                 ["arena", "--players", f"{model}:simulations=4"]):
        code, _, err = run(argv, capsys, monkeypatch)
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert "is not an AlphaZero model file: its layer 'stem.weight' does not match" in err


def test_the_command_line_s_limit_is_the_policy_s():
    from agents.alphazero.policy import MAX_SIMULATIONS

    assert cli_models.MAX_SIMULATIONS == MAX_SIMULATIONS


@pytest.mark.parametrize(("spec", "path", "simulations"), [
    ("m.npz", "m.npz", None), ("runs/a.b/M.NPZ:simulations=7", "runs/a.b/M.NPZ", 7),
    ("C:/x.zip", "C:/x.zip", None), (" m.npz:simulations=3 ", "m.npz", 3),
])
def test_model_specs(spec, path, simulations):
    assert cli_models.is_model_path(spec)
    assert cli_models.model_spec(spec) == cli_models.ModelSpec(path, simulations)
    assert not cli_models.is_model_path("mcts:max_simulations=5")


def test_a_model_s_search_may_read_the_threats():
    assert cli_models.model_spec("m.npz:simulations=9,threats=on") == cli_models.ModelSpec(
        "m.npz", 9, threats=True)
    assert not cli_models.model_spec("m.npz:threats=off,simulations=9").threats
    with pytest.raises(ValueError, match="needs a search: add simulations=N"):
        cli_models.model_spec("m.npz:threats=on")
    with pytest.raises(ValueError, match="bad model option 'threats=yes'"):
        cli_models.model_spec("m.npz:simulations=9,threats=yes")


def test_arena_plays_a_model_whose_search_reads_the_threats(model, capsys, monkeypatch):
    spec = f"{model}:simulations=4,threats=on"
    code, out, err = run(["arena", "--players", f"{spec},alphabeta", "--games", "2"], capsys,
                         monkeypatch)
    assert code == 0 and err == "" and "threats=on" in out


def test_search_exact_measures_a_model_with_search_and_appends(model, tmp_path):
    import json

    from benchmarks import search_exact

    out = tmp_path / "search_exact.json"
    assert search_exact.main(["--boards", "3x3x3", "--players", "alphabeta",
                              "--out", str(out)]) == 0
    assert search_exact.main(["--boards", "3x3x3", "--players", f"{model}:simulations=6",
                              "--out", str(out), "--append"]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert [run["player"] for run in runs] == ["alphabeta", "az.npz:simulations=6"]
    searching, _ = load_policy(model, max_simulations=6)
    full = evaluation.evaluate(searching)
    assert runs[1]["best_response"] == {s: r.result for s, r in full.best_response.items()}
    assert 0 < runs[1]["asked"] < 4520 and "command" in runs[1] and "command" not in runs[0]


def test_search_exact_keeps_a_player_s_moves_to_resume(tmp_path):
    import json

    from benchmarks import search_exact

    player, cache = "mcts:max_simulations=50,seed=0", tmp_path / "moves"
    runs = []
    for _ in range(2):
        out = tmp_path / f"run{len(runs)}.json"
        assert search_exact.main(["--boards", "3x3x3", "--players", player, "--out", str(out),
                                  "--cache", str(cache)]) == 0
        runs.append(json.loads(out.read_text())["runs"][0])
    (kept,) = cache.iterdir()
    with np.load(kept) as data:
        assert len(data["moves"]) == runs[0]["asked"]  # every position asked, kept once
    assert runs[1]["best_response"] == runs[0]["best_response"]
    assert runs[1]["asked"] == runs[0]["asked"] and runs[1]["cpu_seconds"] >= runs[0]["cpu_seconds"]
    policy = search_exact.PlayerPolicy(player, game.TICTACTOE,
                                       search_exact.MoveCache(kept, f"{player} on 3x3x3", 9))
    policy.player = None  # a kept position is answered without the player
    board = np.zeros(9, np.int8)
    assert 0 <= policy(board, board == 0) < 9
    with pytest.raises(SystemExit, match="holds the moves of"):
        search_exact.MoveCache(kept, "alphabeta on 3x3x3", 9)


def test_evaluate_tells_a_model_by_its_contents_not_its_name(model, capsys, monkeypatch):
    import shutil

    plain = shutil.copy(model, model.parent / "az-model")  # no .npz: evaluate loads it all the same
    code, out, _ = run(["evaluate", str(plain), "--simulations", "4", "--games", "1"], capsys,
                       monkeypatch)
    assert code == 0 and "alphazero model, search of 4 simulations a move" in out


def test_load_policy_reads_threats_only_for_a_search(model):
    from agents.models import load_policy

    with pytest.raises(ValueError, match=r"threats is for a search: give .* max_simulations"):
        load_policy(model, threats=True)
    policy, kind = load_policy(model, max_simulations=3, threats=True)
    assert kind == "alphazero" and policy.threats and policy.max_simulations == 3
