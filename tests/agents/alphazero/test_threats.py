"""AlphaZero's search reading the immediate threats (``threats=True``): the compiled
``wide.tactics`` against a brute force over every 3x3 and sampled 6x6x4 position, and what the
search does with them: the win played at once, the one threat blocked, won and lost positions
finished without asking the network."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.alphazero import AlphaZeroPolicy
from agents.alphazero.network import NetworkSettings, PolicyValueNet
from agents.alphazero.search import _tactics, search
from gym_tictactoe import game
from gym_tictactoe.game.starts import draw_starts, side_to_move, start_codes


def uniform(boards):
    legal = (boards == 0).astype(np.float32)
    return legal / legal.sum(axis=1, keepdims=True), np.zeros(len(boards), np.float32)


def board(text):
    return np.array([".XO".index(c) for c in text], dtype=np.int8)[None]


def padded(boards):
    """``boards`` with the -1 column ``Rules.wins_at`` reads past the last cell."""
    return np.concatenate([boards, np.full((len(boards), 1), -1, np.int8)], axis=1)


def brute_force(rules, cells, mover):
    """(kind, cells it may name) as ``wide.tactics`` defines them, from ``Rules.wins_at``."""
    empty = np.flatnonzero(cells == game.EMPTY)

    def completing(mark):
        placed = np.repeat(padded(cells[None]), empty.size, axis=0)
        placed[np.arange(empty.size), empty] = mark
        return set(empty[rules.wins_at(placed, empty, np.full(empty.size, mark, np.int8))])

    own, other = completing(mover), completing(game.SWAP[mover])
    if own:
        return 1, own
    if len(other) == 1:
        return 2, other
    return (3, {-1}) if other else (0, {-1})


@pytest.mark.parametrize("size, count", [((3, 3, 3), None), ((6, 6, 4), 400)])
def test_tactics_are_the_brute_force_answer(size, count):
    rules = game.rules(*size)
    if count is None:  # every unfinished 3x3 position
        boards = rules.cells_of(start_codes(rules)).astype(np.int8)
    else:
        boards = draw_starts(rules, np.random.default_rng(0), count)[0].astype(np.int8)
    movers = side_to_move(boards).astype(np.int8)
    kinds, cells = _tactics(rules, boards, movers)
    found = [brute_force(rules, b, m) for b, m in zip(boards, movers, strict=True)]
    assert [k for k, _ in found] == kinds.tolist()
    assert all(c in named for (_, named), c in zip(found, cells, strict=True))
    assert len(set(kinds.tolist())) == 4  # every kind met


@pytest.mark.parametrize("text, cell", [
    ("XX.OO....", 2),   # X wins at once
    ("X..OO.X..", 5),   # X must block at 5
])
def test_the_search_spends_every_simulation_on_the_win_or_the_block(text, cell):
    rules = game.TICTACTOE
    found = search(rules, uniform, board(text), np.array([game.X], np.int8), 50, threats=True)
    assert found.visits[0, cell] == 50
    without = search(rules, uniform, board(text), np.array([game.X], np.int8), 50)
    assert without.visits[0, cell] < 50  # a network knowing nothing spreads them


def test_won_and_lost_positions_are_finished_without_the_network():
    rules = game.TICTACTOE
    asked = []

    def counting(boards):
        asked.append(len(boards))
        return uniform(boards)

    # O to move after X's move: every X reply below either wins at once or leaves O a double
    # threat or a single one, so many new nodes are solved and never reach the network.
    root = board("X.O.X....")
    search(rules, counting, root, np.array([game.O], np.int8), 60)
    plain = sum(asked)
    asked.clear()
    result = search(rules, counting, root, np.array([game.O], np.int8), 60, threats=True)
    assert sum(asked) < plain
    assert result.visits[0].argmax() == 8  # O must block X's diagonal


def test_the_policy_with_threat_checks_never_misses_a_win_or_a_block():
    import torch

    rules = game.rules(5, 5, 4)
    torch.manual_seed(0)
    net = PolicyValueNet(NetworkSettings(8, 1))
    policy = AlphaZeroPolicy(net, rules).with_search(8, threats=True)
    assert "threat checks" in repr(policy)
    boards = draw_starts(rules, np.random.default_rng(1), 300)[0].astype(np.int8)
    movers = side_to_move(boards).astype(np.int8)
    kinds, cells = _tactics(rules, boards, movers)
    seen = np.where(boards == 0, 0, np.where(boards == movers[:, None], 1, 2))
    moves = policy.act_batch(seen, boards == 0)
    sure = (kinds == 1) | (kinds == 2)
    assert sure.sum() > 20
    wins = kinds == 1
    placed = padded(boards[wins])
    placed[np.arange(wins.sum()), moves[wins]] = movers[wins]
    assert rules.wins_at(placed, moves[wins], movers[wins]).all()
    assert (moves[kinds == 2] == cells[kinds == 2]).all()


def test_a_forced_root_s_target_is_its_move_alone():
    rules = game.TICTACTOE
    roots = np.concatenate([board("X..OO.X.."), board("X........")])
    found = search(rules, uniform, roots, np.array([game.X, game.O], np.int8), 20, threats=True)
    assert found.forced.tolist() == [5, -1]
    target = found.improved_policy(roots == 0)
    assert target[0, 5] == 1.0 and target[0].sum() == 1.0
    assert (target[1][roots[1] == 0] > 0).all()  # the free root keeps a spread target


def test_self_play_with_threats_trains_from_train_py(tmp_path):
    import json

    from train import main

    code = main(["--algo", "alphazero", "--episodes", "8", "--eval-every", "8", "--threats",
                 "--games-per-round", "4", "--steps-per-round", "1", "--batch-size", "16",
                 "--simulations", "4", "--channels", "8", "--blocks", "1", "--no-progress",
                 "--out", str(tmp_path), "--name", "threats"])
    assert code == 0
    (folder,) = tmp_path.glob("threats*")
    config = json.loads((folder / "results.json").read_text())["config"]
    assert config["hyperparameters"]["play"]["threats"] is True
    assert "threats" in config["hyperparams"]["from_flags"]  # the file's false, overridden


def test_threats_must_be_a_flag():
    from agents.alphazero import AlphaZeroSettings, PlaySettings

    with pytest.raises(ValueError, match="threats must be True or False"):
        AlphaZeroSettings(play=PlaySettings(threats=1))
