"""The AlphaZero-style agent: batched PUCT search, self-play, the symmetric replay buffer,
smoke-sized training, its files and its bad input (learning itself: benchmarks/alphazero.py)."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.alphazero import AlphaZeroPolicy, AlphaZeroSettings, PlaySettings, Trainer, files
from agents.alphazero.network import NetworkSettings, PolicyValueNet
from agents.alphazero.replay import ReplayBuffer
from agents.alphazero.search import search, tree_bytes
from agents.alphazero.self_play import choose, play_games
from gym_tictactoe import evaluation, game

SMALL = AlphaZeroSettings(play=PlaySettings(simulations=8), network=NetworkSettings(8, 1),
                          games_per_round=4, steps_per_round=2, batch_size=16)


def uniform(boards):
    """An evaluator knowing nothing: uniform priors over the empty cells, value 0."""
    legal = (boards == 0).astype(np.float32)
    return legal / legal.sum(axis=1, keepdims=True), np.zeros(len(boards), np.float32)


def board(rules, text):
    return np.array([".XO".index(c) for c in text], dtype=np.int8).reshape(1, rules.n_cells)


@pytest.mark.parametrize("size, text, win", [
    ((3, 3, 3), "XX.OO....", 2),                      # X to move wins at once
    ((3, 3, 3), "X..OO.X..", 5),                      # X must block O at 5
    ((4, 4, 3), "XX..OO..........", 2),               # on 4x4x3 too
])
def test_search_finds_the_forced_move(size, text, win):
    rules = game.rules(*size)
    visits = search(rules, uniform, board(rules, text), np.array([game.X], np.int8), 200).visits
    assert visits.sum() == 200
    assert visits[0].argmax() == win


def test_search_of_a_batch_is_the_search_of_each_tree():
    rules = game.TICTACTOE
    roots = np.concatenate([board(rules, "XX.OO...."), board(rules, "........."),
                            board(rules, "X...O...X")])
    movers = np.array([game.X, game.X, game.O], np.int8)
    together = search(rules, uniform, roots, movers, 50).visits
    apart = [search(rules, uniform, roots[i:i + 1], movers[i:i + 1], 50).visits[0]
             for i in range(3)]
    np.testing.assert_array_equal(together, np.stack(apart))
    assert (together[roots != 0] == 0).all()


def test_search_with_the_compiled_win_test_is_the_search_with_the_rules(monkeypatch):
    """The tree's terminal checks moved to the compiled core: the same visits and values as
    with ``Rules.wins_at``, on boards where the search meets finished games."""
    from agents.alphazero import search as search_module

    rules = game.rules(4, 4, 3)
    roots = np.concatenate([board(rules, "XX..OO.........."), board(rules, "X...O.X...O....."),
                            board(rules, "................")])
    movers = np.array([game.X, game.X, game.X], np.int8)
    compiled = search(rules, uniform, roots, movers, 120)
    monkeypatch.setattr(search_module, "_wins", lambda r, b, c, m: r.wins_at(b, c, m))
    interpreted = search(rules, uniform, roots, movers, 120)
    np.testing.assert_array_equal(compiled.visits, interpreted.visits)
    np.testing.assert_array_equal(compiled.q, interpreted.q)


def test_self_play_samples_are_consistent():
    rules = game.rules(4, 4, 3)
    # No exploring starts: enumerating 4x4x3's positions takes seconds.
    settings = PlaySettings(simulations=8, start_probability=0.0)
    samples = play_games(rules, uniform, 6, settings, np.random.default_rng(0))
    np.testing.assert_allclose(samples.policies.sum(axis=1), 1.0, rtol=1e-6)
    assert (samples.policies[samples.boards != 0] == 0).all()
    assert set(np.unique(samples.outcomes)) <= {-1.0, 0.0, 1.0}
    # Boards are seen by their mover: never more of its own marks than the other's.
    own, other = (samples.boards == 1).sum(1), (samples.boards == 2).sum(1)
    assert ((other - own >= 0) & (other - own <= 1)).all()


def test_choose_draws_only_cells_with_visits():
    policies = np.array([[0.0, 0.5, 0.0, 0.5], [0.0, 0.0, 0.0, 1.0]])
    rng = np.random.default_rng(0)
    drawn = np.concatenate([choose(policies, 1.0, rng) for _ in range(50)])
    assert set(drawn) == {1, 3}
    assert list(choose(policies, 0.0, rng)) == [1, 3]


def test_replay_samples_keep_board_and_policy_together():
    rules = game.TICTACTOE
    samples = play_games(rules, uniform, 8, PlaySettings(simulations=4), np.random.default_rng(1))
    buffer = ReplayBuffer(rules, 10)
    buffer.add(samples)
    assert len(buffer) == 10
    boards, policies, _ = buffer.sample(200, np.random.default_rng(2))
    assert (policies[boards != 0] == 0).all()
    assert len({b.tobytes() for b in boards}) > 10  # symmetric images, not only the ten stored


@pytest.mark.slow
def test_training_smoke_and_checkpoints():
    # Several seconds on a fresh cache: the exact evaluation solves 3x3 first.
    trainer = Trainer(game.TICTACTOE, SMALL, seed=0)
    seen = []
    stopped = trainer.train(8, 4, lambda policy, games: seen.append(games) or False)
    assert not stopped and seen == [4, 8] and trainer.games == 8
    report = evaluation.evaluate(trainer.policy)
    assert report.move_rate.rate > 0  # every position answered with a legal cell
    assert np.isfinite(trainer.step())


def test_network_serves_every_board_size():
    net = PolicyValueNet(NetworkSettings(4, 1))
    for size in ((3, 3, 3), (4, 4, 4), (6, 7, 4), (15, 15, 5)):
        rules = game.rules(*size)
        policy = AlphaZeroPolicy(net, rules, max_simulations=2)
        empty = np.zeros((2, rules.n_cells), np.int8)
        empty[1, 0] = 2
        cells = policy.act_batch(empty, empty == 0)
        assert ((cells >= 0) & (cells < rules.n_cells)).all() and cells[1] != 0


@pytest.mark.slow
def test_file_round_trip(tmp_path):
    trainer = Trainer(game.rules(3, 4, 3), SMALL, seed=1)
    trainer.train(4, 4)
    path = files.save(tmp_path / "model.npz", trainer.net, trainer.rules, trainer.games)
    model = files.load(path, game.rules(3, 4, 3))
    assert model.rules == game.rules(3, 4, 3) and model.games == 4
    boards = np.zeros((3, 12), np.int8)
    boards[1, 5], boards[2, [0, 1]] = 2, (2, 1)
    for sims in (None, 5):
        before = AlphaZeroPolicy(trainer.net, trainer.rules, sims).act_batch(boards, boards == 0)
        after = AlphaZeroPolicy(model.net, model.rules, sims).act_batch(boards, boards == 0)
        np.testing.assert_array_equal(before, after)
    with pytest.raises(ValueError, match="plays the 3x4x3 board, not 3x3x3"):
        files.load(path, game.TICTACTOE)


def rewrite(path, header=None, weights=None):
    """``path`` with its header changed by ``header(dict)`` (bytes: an .npy header of that
    dtype and no data) or its weights replaced (a function: of the weights)."""
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    if callable(header):
        arrays["alphazero"] = np.array(json.dumps(header(json.loads(str(arrays["alphazero"])))))
    if weights is not None:
        arrays["weights"] = weights(arrays["weights"]) if callable(weights) else weights
    np.savez(path, **arrays)
    if isinstance(header, bytes):
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("alphazero.npy", npy_header(header.decode(), ()))
            archive.writestr("weights.npy", npy(arrays["weights"]))


def npy(array):
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def npy_header(descr, shape):
    """An .npy of a header claiming ``descr`` and ``shape``, and no data."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


@pytest.mark.parametrize("change, message", [
    (dict(header=lambda h: {**h, "layers": [[n, [s[0] + 1, *s[1:]]] for n, s in h["layers"]]}),
     "layer 'stem.weight' does not match"),
    (dict(header=lambda h: {**h, "network": {"channels": 16, "blocks": 1}}),
     "does not match the network its header describes"),
    (dict(header=lambda h: {**h, "format": "gym_tictactoe.q_learning/1"}), "format is"),
    (dict(header=lambda h: {**h, "board": {"rows": 99, "cols": 3, "win_length": 3}}),
     "header is wrong"),
    (dict(weights=np.zeros(7, np.float32)), "'weights' must be float32 of shape"),
    (dict(weights=np.zeros(3, np.int64)), "'weights' must be float32"),
    # Evaluated as if real, they played 58.65% of the positions right.
    (dict(weights=lambda w: np.where(np.arange(w.size) == 5, np.nan, w)),
     r"entry 'weights' holds values that are not finite \(NaN or infinite\): 1 of .*, the "
     "first at index 5"),
    (dict(weights=lambda w: np.full_like(w, -np.inf)), "'weights' holds values that are not "
     "finite"),
    (dict(header=b"<U0"), r"entry 'alphazero' has a dtype of zero size \('<U0'\); 'alphazero' "
     "must be a string"),
])
def test_damaged_files_are_refused_in_one_line(tmp_path, change, message):
    path = files.save(tmp_path / "model.npz", PolicyValueNet(NetworkSettings(8, 1)),
                      game.TICTACTOE)
    rewrite(path, **change)
    with pytest.raises(ValueError, match=message) as error:
        files.load(path)
    assert "\n" not in str(error.value) and "not an AlphaZero model file" in str(error.value)


def test_another_algorithms_file_is_refused(tmp_path):
    from agents.tabular.q_learning import QLearningAgent

    path = QLearningAgent(seed=0).save(tmp_path / "q.npz")
    with pytest.raises(ValueError, match="not an AlphaZero model file: it holds"):
        files.load(path)
    with zipfile.ZipFile(tmp_path / "empty.zip", "w"):
        pass
    with pytest.raises(ValueError, match="not an AlphaZero model file"):
        files.load(tmp_path / "empty.zip")


@pytest.mark.parametrize("value", [0, -3, 10_001, 1.5, True, "8", None])
def test_max_simulations_must_be_a_positive_integer(value):
    with pytest.raises(ValueError, match="max_simulations must be an integer from 1"):
        AlphaZeroSettings(play=PlaySettings(simulations=value))
    if value is not None:  # None: the raw network
        with pytest.raises(ValueError, match="max_simulations must be an integer from 1"):
            AlphaZeroPolicy(PolicyValueNet(NetworkSettings(4, 0)), game.TICTACTOE, value)


@pytest.mark.parametrize("value", [-0.1, float("nan"), "1"])
def test_temperature_must_be_a_number_at_least_0(value):
    with pytest.raises(ValueError, match="temperature must be a number >= 0"):
        AlphaZeroSettings(play=PlaySettings(temperature=value))


@pytest.mark.slow
def test_train_py_trains_saves_and_load_policy_plays_it(tmp_path, capsys):
    import train
    from agents.models import load_policy

    assert train.main(["--algo", "alphazero", "--episodes", "8", "--eval-every", "8",
                       "--games", "1", "--no-progress", "--out", str(tmp_path)]) == 0
    model = tmp_path / "alphazero-seed0_1" / "model.npz"
    results = json.loads((model.parent / "results.json").read_text())
    assert results["config"]["games_played"] == 8 and results["learning_curve"][0]["episodes"] == 8
    assert results["learning_curve"][0]["samples"] == results["config"]["samples_played"] > 8
    config, settings = results["config"], results["config"]["hyperparameters"]
    # In one process a round is the settings' own, played with the latest weights.
    assert (config["round_games"], config["round_steps"], config["round_weights_behind"]) == (
        settings["games_per_round"], settings["steps_per_round"], 0)
    # train.py --device's default, and the file whose values the run used, flags marked
    assert results["config"]["device"] == "cpu"
    recorded = results["config"]["hyperparams"]
    assert recorded["file"] == "agents/hyperparams/alphazero.yml"
    assert recorded["values"]["simulations"] == 32 and recorded["values"]["episodes"] == 8
    assert recorded["from_flags"] == ["episodes", "eval_every"]
    raw, kind = load_policy(model)
    searching, _ = load_policy(model, max_simulations=3)
    assert kind == "alphazero" and raw.max_simulations is None and searching.max_simulations == 3
    boards = np.zeros((2, 9), np.int8)
    boards[1, [0, 4]] = (2, 1)
    assert set(searching.act_batch(boards, boards == 0)) <= set(range(1, 9)) | {0}
    with pytest.raises(ValueError, match="max_simulations must be an integer from 1"):
        load_policy(model, max_simulations=0)
    with pytest.raises(ValueError, match="AlphaZero model, which plays its greedy move"):
        load_policy(model, stochastic=True)


def test_train_py_refuses_an_opponent_for_alphazero(capsys):
    import train

    with pytest.raises(SystemExit) as stop:
        train.parse_args(["--algo", "alphazero", "--opponent", "minimax"])
    assert stop.value.code == 2
    assert "--opponent does not apply to --algo alphazero" in capsys.readouterr().err


def test_load_policy_refuses_search_for_other_models(tmp_path):
    from agents.models import load_policy
    from agents.tabular.q_learning import QLearningAgent

    path = QLearningAgent(seed=0).save(tmp_path / "q.npz")
    with pytest.raises(ValueError, match="q model, which has no search"):
        load_policy(path, max_simulations=10)


def test_improved_policy_follows_the_values_the_search_found():
    rules = game.TICTACTOE
    roots = board(rules, "XX.OO....")
    found = search(rules, uniform, roots, np.array([game.X], np.int8), 24)
    target = found.improved_policy(roots == 0)
    assert target[0].argmax() == 2 and target[0, 2] > 0.95
    assert target[0, 2] > found.visits[0, 2] / found.visits.sum()  # sharper than the visits
    assert (target[roots != 0] == 0).all() and target.sum() == pytest.approx(1.0)


def test_mutated_files_load_correctly_or_are_refused_in_one_line(tmp_path):
    import warnings

    from zip_helpers import mutate

    from agents.models import load_policy

    net = PolicyValueNet(NetworkSettings(4, 1))
    original = files.save(tmp_path / "model.npz", net, game.TICTACTOE)
    expected = files.load(original).net.state_dict()
    rng, data, refused = np.random.default_rng(0), original.read_bytes(), 0
    path = tmp_path / "mutated.npz"
    for _ in range(150):
        path.write_bytes(mutate(data, rng))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                policy, _ = load_policy(path)
        except (ValueError, FileNotFoundError) as error:
            assert "\n" not in str(error) and str(path) in str(error), str(error)
            refused += 1
            continue
        loaded = policy.net.state_dict()
        assert all(np.array_equal(loaded[k].numpy(), expected[k].numpy()) for k in expected)
    assert refused > 75  # most mutations do break the file


def test_search_answers_in_memory_bounded_batches_alike(monkeypatch):
    from agents.alphazero import policy as module

    policy = AlphaZeroPolicy(PolicyValueNet(NetworkSettings(4, 1)), game.TICTACTOE, 6)
    boards = np.zeros((5, 9), np.int8)
    boards[np.arange(5), np.arange(5)] = 1
    whole = policy.act_batch(boards, boards == 0)
    monkeypatch.setattr(module, "SEARCH_BYTES", 2 * tree_bytes(9, 6))  # two trees per batch
    np.testing.assert_array_equal(policy.act_batch(boards, boards == 0), whole)


def test_a_search_player_asked_one_position_at_a_time_searches_each_once(monkeypatch):
    from agents.alphazero import policy as policy_module

    policy = AlphaZeroPolicy(PolicyValueNet(NetworkSettings(4, 1)), game.TICTACTOE, 6)
    boards = np.zeros((3, 9), np.int8)
    boards[1, 4], boards[2, [0, 4]] = 2, (1, 2)
    expected = policy.act_batch(boards, boards == 0)
    searches = []
    choose = policy._choose
    monkeypatch.setattr(policy, "_choose", lambda b, m: searches.append(len(b)) or choose(b, m))
    for _ in range(2):
        assert [policy(b, b == 0) for b in boards] == expected.tolist()
    assert searches == [1, 1, 1]  # the second round came from the kept moves
    monkeypatch.setattr(policy_module, "CACHED_MOVES", 2)
    policy._moves.clear()
    for b in boards:
        policy(b, b == 0)
    assert len(policy._moves) <= 2  # bounded
