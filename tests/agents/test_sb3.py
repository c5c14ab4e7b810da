"""Tests of agents.sb3: envs, models, the Policy adapter, exact evaluation in training, files.

Smoke-sized: each model learns a few hundred timesteps; nothing here asserts that it plays well.
"""

from __future__ import annotations

import io
import json
import pickle
import tempfile
import tracemalloc
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")  # the [sb3] extra is optional: skip, not fail, without it

import cloudpickle
import torch
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.monitor import Monitor
from zip_helpers import move_central_directory, set_version_needed

from agents import sb3
from agents.sb3 import files as sb3_files
from agents.sb3 import policy as sb3_policy
from gym_tictactoe import evaluation, game
from gym_tictactoe.envs.wrappers import OneHotObservation

T3 = game.TICTACTOE  # tic-tac-toe's rules

# A few updates within a few hundred timesteps on 2 envs.
_PPO_SMALL = {"n_steps": 64, "batch_size": 64, "n_epochs": 2}
SMALL = {"maskable-ppo": _PPO_SMALL, "ppo": _PPO_SMALL,
         "dqn": {"learning_starts": 64, "batch_size": 32, "buffer_size": 1_000}}


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    with sb3.torch_threads(1):  # several times faster for these tiny networks
        yield


def _model(algo: str, seed: int = 0):
    return sb3.build_model(algo, sb3.make_vec_env(algo, n_envs=2, seed=seed), seed=seed,
                           **SMALL[algo])


def _learn(algo: str, timesteps: int = 256, callback=None):
    model = _model(algo)
    model.learn(timesteps, callback=callback)
    return model


@pytest.fixture(scope="module")
def trained():
    """One smoke-trained model per algorithm, shared by the tests that only read them."""
    return {algo: _learn(algo) for algo in sb3.ALGOS}


def _positions() -> tuple[np.ndarray, np.ndarray]:
    """Every position with a move to make, seen by the side to move, and its mask."""
    codes = T3.reachable[~T3.tables.terminal[T3.reachable]]
    o_to_move = (T3.tables.to_move[codes] == game.O)[:, None]
    boards = np.where(o_to_move, game.SWAP[T3.tables.cells[codes]], T3.tables.cells[codes])
    return boards.astype(np.int8), T3.tables.legal_mask[codes]


def _report(result: str, rate: float) -> evaluation.Report:
    seats = {seat: evaluation.SeatResponse(seat, result, None) for seat in ("X", "O")}
    return evaluation.Report(seats, evaluation.MoveRate(rate, 4520, ()))


# --- environments and models ----------------------------------------------------------------

def test_unknown_algo_lists_the_known_ones():
    env = sb3.make_vec_env("ppo", n_envs=1)
    for call in (lambda: sb3.build_model("a2c", env), lambda: sb3.make_vec_env("a2c"),
                 lambda: sb3.ExactEvalCallback("a2c")):
        with pytest.raises(ValueError, match=r"algo must be one of .*dqn.*; got 'a2c'"):
            call()


def test_build_model_refuses_the_wrong_encoding():
    with pytest.raises(ValueError, match="dqn needs observation space Box"):
        sb3.build_model("dqn", sb3.make_vec_env("maskable-ppo", n_envs=1))


@pytest.mark.parametrize("one_hot", [False, True])
def test_make_env_builds_a_monitored_env(one_hot):
    env = sb3.make_env(agent_mark="O", one_hot=one_hot, seed=3)()
    obs, _ = env.reset(seed=3)
    algo = "dqn" if one_hot else "maskable-ppo"
    assert env.observation_space == sb3.observation_space(algo, T3.n_cells)
    assert obs in env.observation_space
    assert isinstance(env.env if one_hot else env, Monitor)
    # The opponent (X) has moved: the mask reaches through the wrappers.
    assert env.get_wrapper_attr("action_masks")().sum() == 8


def test_one_hot_matches_the_wrapper():
    boards, _ = _positions()
    wrapper = OneHotObservation(sb3.make_env()())
    expected = np.stack([wrapper.observation(board) for board in boards[::50]])
    np.testing.assert_array_equal(sb3.one_hot(boards[::50], T3.n_cells), expected)


def test_make_vec_env_lets_maskable_ppo_find_the_masks():
    vec = sb3.make_vec_env("maskable-ppo", n_envs=3, agent_mark="O", seed=0)
    obs = vec.reset()
    assert is_masking_supported(vec)
    np.testing.assert_array_equal(get_action_masks(vec), obs == 0)


@pytest.mark.slow
def test_maskable_ppo_learns_with_the_env_masks(trained):
    buffer = trained["maskable-ppo"].rollout_buffer
    # Every stored mask is the empty cells of its observation, and every action obeys it.
    masks = buffer.action_masks.reshape(-1, T3.n_cells).astype(bool)
    boards = buffer.observations.reshape(-1, T3.n_cells)
    np.testing.assert_array_equal(masks, boards == 0)
    actions = buffer.actions.reshape(-1).astype(int)
    assert masks[np.arange(actions.size), actions].all()


@pytest.mark.slow
@pytest.mark.parametrize("algo", sb3.ALGOS)
def test_each_algorithm_learns(trained, algo):
    model = trained[algo]
    assert model.num_timesteps >= 256
    assert model._n_updates > 0


# --- the Policy adapter ---------------------------------------------------------------------

@pytest.mark.parametrize("algo", sb3.ALGOS)
def test_predictions_are_legal_in_every_position(trained, algo):
    boards, masks = _positions()
    moves = sb3.ModelPolicy(trained[algo], algo).act_batch(boards, masks)
    assert moves.shape == (len(boards),)
    assert masks[np.arange(len(boards)), moves].all()


@pytest.mark.parametrize("algo", sb3.ALGOS)
def test_single_and_batch_predictions_agree(trained, algo):
    boards, masks = _positions()
    policy = sb3.ModelPolicy(trained[algo])
    batch = policy.act_batch(boards, masks)
    picks = range(0, len(boards), 23)
    assert [policy(boards[i], masks[i]) for i in picks] == batch[list(picks)].tolist()


def test_model_policy_checks_its_arguments(trained):
    with pytest.raises(ValueError, match="needs a PPO"):
        sb3.ModelPolicy(trained["dqn"], "ppo")
    with pytest.raises(ValueError, match="legal move"):
        sb3.ModelPolicy(trained["ppo"]).act_batch(np.zeros((1, 9)), np.zeros((1, 9)))


def test_stochastic_maskable_ppo_offers_its_own_masked_distribution(trained):
    boards, masks = _positions()
    model = trained["maskable-ppo"]
    probs = sb3.ModelPolicy(model, stochastic=True).action_probabilities_batch(boards, masks)
    with torch.no_grad():
        dist = model.policy.get_distribution(torch.as_tensor(boards), action_masks=masks)
        expected = dist.distribution.probs.numpy()
    np.testing.assert_allclose(probs, expected, atol=1e-6)
    assert (probs[masks == 0] == 0).all()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)


def test_stochastic_ppo_is_renormalised_over_the_legal_cells(trained):
    boards, masks = _positions()
    policy = sb3.ModelPolicy(trained["ppo"], stochastic=True)
    with torch.no_grad():
        full = trained["ppo"].policy.get_distribution(
            torch.as_tensor(sb3.one_hot(boards, T3.n_cells))).distribution.probs.numpy()
    legal = np.where(masks, full, 0.0)
    np.testing.assert_allclose(policy.action_probabilities_batch(boards, masks),
                               legal / legal.sum(axis=1, keepdims=True), atol=1e-6)


def test_stochastic_policy_draws_legal_seeded_moves_and_is_measured_exactly(trained):
    boards, masks = _positions()
    draws = [sb3.ModelPolicy(trained["maskable-ppo"], stochastic=True, seed=7).act_batch(
        boards, masks) for _ in range(2)]
    np.testing.assert_array_equal(draws[0], draws[1])
    assert masks[np.arange(len(boards)), draws[0]].all()
    policy = sb3.ModelPolicy(trained["maskable-ppo"], stochastic=True)
    found = evaluation.best_response(policy)
    # A smoke-trained softmax policy: strictly between perfect (0) and always losing (2).
    assert 0 < evaluation.exploitability(policy) < 2
    assert evaluation.exploitability(policy) == -(found["X"].expected + found["O"].expected)
    deterministic = evaluation.best_response(sb3.ModelPolicy(trained["maskable-ppo"]))
    assert deterministic["X"].expected in (-1, 0, 1)


def test_a_canonical_stochastic_policy_maps_its_distribution_back(trained):
    from gym_tictactoe.game.symmetry import canonicalize, untransform_cells

    boards, masks = _positions()
    model = trained["maskable-ppo"]
    canonical = sb3.ModelPolicy(model, canonical=True, stochastic=True)
    plain = sb3.ModelPolicy(model, stochastic=True)
    images, symmetry = canonicalize(game.TICTACTOE, boards)
    image_masks = (images == 0).astype(np.int8)
    expected = untransform_cells(game.TICTACTOE,
                                 plain.action_probabilities_batch(images, image_masks), symmetry)
    np.testing.assert_allclose(canonical.action_probabilities_batch(boards, masks), expected)


def test_dqn_has_no_distribution(trained):
    with pytest.raises(ValueError, match="dqn plays its greedy move"):
        sb3.ModelPolicy(trained["dqn"], stochastic=True)
    assert not hasattr(sb3.ModelPolicy(trained["ppo"]), "action_probabilities_batch")


# --- exact evaluation during training -------------------------------------------------------

def test_callback_records_history_at_the_right_timesteps():
    callback = sb3.ExactEvalCallback("maskable-ppo", eval_every=100, stop_when_perfect=False)
    model = _learn("maskable-ppo", 256, callback)
    # Steps of 2 timesteps reach 100 and 200 exactly; the end of training adds 256.
    assert [entry["timesteps"] for entry in callback.history] == [100, 200, 256]
    for entry in callback.history:
        assert set(entry) == {"timesteps", "seconds", "rate", "X", "O", "perfect"}
        assert 0.0 <= entry["rate"] <= 1.0 and {entry["X"], entry["O"]} <= {"win", "draw", "loss"}
    logged = model.logger.name_to_value  # the last evaluation is not dumped yet
    assert logged["exact/optimal_move_rate"] == callback.history[-1]["rate"]
    assert logged["exact/best_response_X"] in (-1, 0, 1) and "exact/perfect" in logged


@pytest.mark.slow
@pytest.mark.parametrize("algo", sb3.ALGOS)
def test_callback_stops_training_once_perfect(monkeypatch, algo):
    reports = iter([_report("loss", 0.5), _report("draw", 0.99), _report("draw", 1.0)])
    monkeypatch.setattr(evaluation, "evaluate", lambda policy: next(reports))
    callback = sb3.ExactEvalCallback(algo, eval_every=100)
    model = _learn(algo, 100_000, callback)
    assert model.num_timesteps == 300  # stopped at the third evaluation, not at 100,000
    assert [entry["perfect"] for entry in callback.history] == [False, False, True]
    assert (callback.draws_at, callback.perfect_at) == (200, 300)


def test_train_returns_the_model_and_its_callback(monkeypatch):
    monkeypatch.setattr(evaluation, "evaluate", lambda policy: _report("draw", 1.0))
    model, callback = sb3.train("dqn", 10_000, n_envs=2, eval_every=50, progress_bar=False,
                                **SMALL["dqn"])
    assert model.num_timesteps == 50 and callback.perfect_at == 50


# --- files ------------------------------------------------------------------------------------

@pytest.mark.parametrize("algo", sb3.ALGOS)
def test_save_and_load_give_identical_predictions(trained, tmp_path, algo):
    path = sb3_files.save_model(trained[algo], tmp_path / "model.zip")
    loaded = sb3_files.load_model(path, algo)
    boards, masks = _positions()
    before, after = sb3.ModelPolicy(trained[algo]), sb3.ModelPolicy(loaded)
    np.testing.assert_array_equal(after.preferences(boards), before.preferences(boards))
    np.testing.assert_array_equal(after.act_batch(boards, masks), before.act_batch(boards, masks))
    assert loaded.num_timesteps == trained[algo].num_timesteps
    assert [p.name for p in tmp_path.iterdir()] == ["model.zip"]  # no temporary file left


@pytest.mark.parametrize("algo", sb3.ALGOS)
def test_loading_never_unpickles(trained, tmp_path, monkeypatch, algo):
    path = sb3_files.save_model(trained[algo], tmp_path / "model.zip")

    def refuse(*args, **kwargs):
        raise AssertionError("unpickling attempted")

    for module in (pickle, cloudpickle):
        monkeypatch.setattr(module, "loads", refuse)
        monkeypatch.setattr(module, "load", refuse)
    with pytest.raises(AssertionError, match="unpickling"):  # SB3's plain load does unpickle
        sb3.ALGO_CLASSES[algo].load(path)
    assert type(sb3_files.load_model(path)) is sb3.ALGO_CLASSES[algo]


@pytest.mark.parametrize("algo", sb3.ALGOS)
def test_a_loaded_model_trains_on(trained, tmp_path, algo):
    path = sb3_files.save_model(trained[algo], tmp_path / "model.zip")
    model = sb3_files.load_model(path, env=sb3.make_vec_env(algo, n_envs=2, seed=1))
    model.learn(128, reset_num_timesteps=False)
    assert model.num_timesteps >= trained[algo].num_timesteps + 128


def test_load_refuses_other_files(trained, tmp_path):
    good = sb3_files.save_model(trained["ppo"], tmp_path / "good.zip")
    with pytest.raises(FileNotFoundError, match="no model file"):
        sb3_files.load_model(tmp_path / "missing.zip")
    content = good.read_bytes()
    # Cut anywhere: before the first header, mid-way (where torch's own inner zip of the weights
    # can pass for a whole archive), or just short of the end.
    files = {"noise.zip": np.random.default_rng(0).bytes(5_000),
             **{f"cut{n}.zip": content[:n] for n in (100, len(content) // 2, len(content) - 1)}}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ValueError, match=r"(not a readable zip|lacks).*save_model"):
            sb3_files.load_model(tmp_path / name)
    with pytest.raises(ValueError, match="holds a ppo model, not dqn"):
        sb3_files.load_model(good, "dqn")


def test_load_refuses_a_plain_sb3_zip(trained, tmp_path):
    trained["dqn"].save(tmp_path / "plain.zip")
    with pytest.raises(ValueError, match=r"lacks \['gym_tictactoe.json'\].*save_model"):
        sb3_files.load_model(tmp_path / "plain.zip")


def test_load_refuses_a_damaged_member(trained, tmp_path):
    path = sb3_files.save_model(trained["maskable-ppo"], tmp_path / "model.zip")
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("policy.pth")
    data = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)  # after the header
    data[start + info.compress_size // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"damaged.*policy\.pth"):
        sb3_files.load_model(path)


def test_load_refuses_a_foreign_marker(trained, tmp_path):
    path = sb3_files.save_model(trained["ppo"], tmp_path / "model.zip")
    _rewrite_member(path, sb3_files.MARKER, b'{"format": "something else", "algo": "ppo"}')
    with pytest.raises(ValueError, match=r"unknown gym_tictactoe\.json"):
        sb3_files.load_model(path)


def test_a_failed_save_leaves_the_old_file(trained, tmp_path, monkeypatch):
    path = sb3_files.save_model(trained["ppo"], tmp_path / "model.zip")
    before = path.read_bytes()

    def broken_save(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(trained["dqn"], "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        sb3_files.save_model(trained["dqn"], path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["model.zip"]


def _rewrite_member(path: Path, name: str, content: bytes) -> None:
    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    members[name] = content
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)


def test_load_model_refuses_weights_that_do_not_fit_the_marker(tmp_path):
    """Our marker, another network's weights: a clear ValueError, not torch's traceback."""
    env = sb3.make_vec_env("maskable-ppo", n_envs=1, seed=0)
    small = sb3.build_model("maskable-ppo", env, seed=0, policy_kwargs={"net_arch": [8]})
    sb3_files.save_model(sb3.build_model("maskable-ppo", env, seed=0), tmp_path / "a.zip")
    sb3_files.save_model(small, tmp_path / "b.zip")
    with zipfile.ZipFile(tmp_path / "a.zip") as a, zipfile.ZipFile(tmp_path / "b.zip") as b, \
            zipfile.ZipFile(tmp_path / "mixed.zip", "w") as mixed:
        for name in a.namelist():
            mixed.writestr(name, (b if name == "policy.pth" else a).read(name))
    with pytest.raises(ValueError, match="is not a model file we wrote"):
        sb3_files.load_model(tmp_path / "mixed.zip")


class Payload:
    """Unpickling a Payload creates the file it names: proof that code ran on loading."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return Path.touch, (self.path,)


def _weights(content: object) -> bytes:
    buffer = io.BytesIO()
    torch.save(content, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("kind", ["malicious", "garbage", "empty"])
def test_weights_that_are_no_weights_are_not_a_model_file_we_wrote(trained, tmp_path, kind):
    path = sb3_files.save_model(trained["ppo"], tmp_path / "model.zip")
    sprung = tmp_path / "sprung"
    content = {"malicious": _weights({"x": Payload(sprung)}), "garbage": b"garbage" * 100,
               "empty": b""}[kind]
    _rewrite_member(path, "policy.pth", content)
    with pytest.raises(ValueError) as error:
        sb3_files.load_model(path)
    assert str(error.value).startswith(f"{path} is not a model file we wrote:")
    assert "weights_only" not in str(error.value) and not sprung.exists()
    assert error.value.__suppress_context__


@pytest.mark.parametrize(("algo", "member", "change", "message"), [
    ("ppo", "data", [1, 2], "SB3's 'data' member must be a JSON object, found list"),
    ("ppo", sb3_files.MARKER, {"clip_range": "abc"},
     "clip_range must be a positive number, found 'abc'"),
    ("maskable-ppo", sb3_files.MARKER, {"clip_range": None},
     "clip_range must be a positive number, found None"),
    ("dqn", sb3_files.MARKER, {"train_freq": "x"},
     r"train_freq must be \[a positive integer, 'step' or 'episode'\], found 'x'"),
    ("dqn", sb3_files.MARKER, {"train_freq": [4, "hour"]}, "train_freq must be"),
    ("dqn", "data", {"exploration_fraction": "most"},
     "exploration_fraction must be a number in"),
    ("ppo", "data", {"_stats_window_size": "x"}, "_stats_window_size must be a positive"),
])
def test_bad_settings_say_what_is_wrong(trained, tmp_path, algo, member, change, message):
    path = sb3_files.save_model(trained[algo], tmp_path / "model.zip")
    with zipfile.ZipFile(path) as archive:
        content = json.loads(archive.read(member))
    content = change if isinstance(change, list) else {**content, **change}
    _rewrite_member(path, member, json.dumps(content).encode())
    with pytest.raises(ValueError, match=message):
        sb3_files.load_model(path)


def test_a_folder_or_a_device_is_named_for_what_it_is(tmp_path):
    with pytest.raises(ValueError, match="is a folder, not a model file"):
        sb3_files.load_model(tmp_path)
    if Path("/dev/null").exists():
        with pytest.raises(ValueError, match="is not a regular file"):
            sb3_files.load_model("/dev/null")


def test_an_oversized_member_is_refused_before_it_is_read(trained, tmp_path, monkeypatch):
    path = sb3_files.save_model(trained["ppo"], tmp_path / "model.zip")
    _rewrite_member(path, "system_info.txt", bytes(sb3_files.MEMBER_BYTES["system_info.txt"] + 1))
    monkeypatch.setattr(zipfile.ZipFile, "read", _refuse)
    with pytest.raises(ValueError, match=r"members \['system_info.txt'\] are larger"):
        sb3_files.load_model(path)


def _refuse(*args, **kwargs):
    raise AssertionError("a member was read")


def _with_data(path: Path, **changes: object) -> Path:
    """The model file at ``path`` with entries of SB3's data JSON changed."""
    with zipfile.ZipFile(path) as archive:
        data = json.loads(archive.read("data"))
    _rewrite_member(path, "data", json.dumps({**data, **changes}).encode())
    return path


@pytest.fixture()
def nothing_built(monkeypatch):
    """Building a network layer, a buffer or an algorithm fails the test."""
    from stable_baselines3.common.base_class import BaseAlgorithm
    from stable_baselines3.common.buffers import BaseBuffer

    def refuse(self, *args, **kwargs):
        raise AssertionError(f"{type(self).__name__} built")

    for cls in (torch.nn.Linear, BaseBuffer, BaseAlgorithm):
        monkeypatch.setattr(cls, "__init__", refuse)


@pytest.mark.parametrize(("algo", "changes", "message"), [
    ("dqn", {"policy_kwargs": {"net_arch": [10**8, 10**8]}},
     r"makes a network of 20,000,007,600,000,018 parameters, more than the 4,194,304"),
    ("maskable-ppo", {"policy_kwargs": {"net_arch": [12000, 12000]}},
     "makes a network of 288,816,010 parameters"),
    ("dqn", {"buffer_size": 10**9}, "buffer_size 1,000,000,000 with 2 envs needs a buffer of"),
    ("ppo", {"n_envs": 10**9}, "n_envs must be an integer from 1 to 65,536"),
    ("dqn", {"n_envs": 0}, "n_envs must be an integer from 1 to 65,536"),
    ("ppo", {"policy_kwargs": {"net_arch": [8]}}, r"members \['policy.optimizer.pth', "
     r"'policy.pth'\] are larger than they can be in a file of its board and network"),
    ("ppo", {"policy_kwargs": {"net_arch": [256, 256]}},
     r"the weights' records \(18\) are not the 12 float32 tensors \(593,960 bytes\)"),
    ("dqn", {"policy_kwargs": {"net_arch": [128], "activation_fn": "Tanh"}},
     "policy_kwargs may hold net_arch and the booleans"),
])
def test_settings_are_checked_against_the_weights_before_anything_is_built(
        trained, tmp_path, nothing_built, algo, changes, message):
    """They reached 11 GB (DQN), over 180 s (MaskablePPO), a 101 GiB buffer or a
    ZeroDivisionError before an error."""
    from agents.models import load_policy

    path = _with_data(sb3_files.save_model(trained[algo], tmp_path / "model.zip"), **changes)
    tracemalloc.start()
    try:
        for load in (load_policy, sb3_files.load_model):
            with pytest.raises(ValueError, match=message) as error:
                load(path)
            assert "\n" not in str(error.value)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20  # the file's own members, a few hundred KB


def test_a_tensor_of_another_shape_is_refused_from_its_header(trained, tmp_path, nothing_built):
    path = sb3_files.save_model(trained["dqn"], tmp_path / "model.zip")
    weights = trained["dqn"].policy.state_dict()
    weights["q_net.q_net.0.weight"] = weights["q_net.q_net.0.weight"].reshape(27, 128)
    _rewrite_member(path, "policy.pth", _weights(weights))
    with pytest.raises(ValueError, match=r"the weights' tensors \{'q_net.q_net.0.weight': "
                                         r"\(27, 128\).* are not those of the network"):
        sb3_files.load_model(path)


@pytest.mark.parametrize("algo", sb3.ALGOS)
def test_playing_builds_the_policy_alone_from_one_reading(trained, tmp_path, monkeypatch, algo):
    """No algorithm, buffer or env: a legal DQN buffer_size of 2,000,000 is never allocated;
    of the archive only the settings and the policy's weights are inflated, once each."""
    from stable_baselines3.common.base_class import BaseAlgorithm
    from stable_baselines3.common.buffers import BaseBuffer

    from agents.models import load_policy

    path = sb3_files.save_model(trained[algo], tmp_path / "model.zip")
    if algo == "dqn":
        _with_data(path, buffer_size=2_000_000)
    opened, original = [], zipfile.ZipFile.open

    def spy(self, name, *args, **kwargs):  # torch reads its own zip of the weights itself
        opened.append(getattr(name, "filename", name))
        return original(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", spy)
    for cls in (BaseBuffer, BaseAlgorithm):
        monkeypatch.setattr(cls, "__init__", _refuse)
    policy, kind = load_policy(path)
    assert kind == algo and sorted(opened) == sorted(["data", sb3_files.MARKER, "policy.pth"])
    boards, masks = _positions()
    np.testing.assert_array_equal(policy.preferences(boards),
                                  sb3.ModelPolicy(trained[algo]).preferences(boards))
    assert masks[np.arange(len(boards)), policy.act_batch(boards, masks)].all()


@pytest.mark.parametrize(("extra", "message"), [
    (20, r"its zip directory lists 26 entries in [\d,]+ bytes; ours hold at most 16"),
    (3, r"holds unknown members \['zeros0.bin', 'zeros1.bin', 'zeros2.bin'\]"),
])
def test_unknown_members_are_refused_before_any_is_read(trained, tmp_path, monkeypatch, extra,
                                                        message):
    """100 members of 64 MB of zeros were accepted after 76 s (each inflated by testzip): now
    too many members are refused from the zip's end record, unknown ones by their names."""
    from agents.models import load_policy

    path = sb3_files.save_model(trained["ppo"], tmp_path / "model.zip")
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    del members["system_info.txt"]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in {**members, **{f"zeros{i}.bin": bytes(2**20)
                                            for i in range(extra)}}.items():
            archive.writestr(name, content)
    monkeypatch.setattr(zipfile.ZipFile, "open", _refuse)
    for load in (load_policy, sb3_files.load_model, sb3_files.model_board):
        with pytest.raises(ValueError, match=message):
            load(path)


@pytest.mark.parametrize("damage", ["version needed 8.0", "central directory moved"])
def test_a_broken_zip_structure_is_one_clear_error(trained, tmp_path, damage):
    """zipfile's NotImplementedError (from model_kind) and OSError (from the member checks)
    were tracebacks."""
    from agents.models import load_policy

    path = sb3_files.save_model(trained["dqn"], tmp_path / "model.zip")
    if damage == "version needed 8.0":
        set_version_needed(path, 80)
    else:
        move_central_directory(path, 1000)
    for load in (load_policy, sb3_files.load_model, sb3_files.model_board):
        with pytest.raises(ValueError, match="not a readable zip archive") as error:
            load(path)
        assert "\n" not in str(error.value) and str(path) in str(error.value)


def test_a_repeated_member_name_is_refused(trained, tmp_path):
    """zipfile reads the last of two members of one name; the size checks must see both."""
    path = sb3_files.save_model(trained["ppo"], tmp_path / "model.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile's "Duplicate name"
        with zipfile.ZipFile(path, "a") as archive:
            archive.writestr("data", "{}")
    with pytest.raises(ValueError, match=r"more than one member named \['data'\]"):
        sb3_files.load_model(path)


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["maskable-ppo", "dqn"])
def test_other_boards_train_save_load_and_evaluate_on_their_own_board(tmp_path, algo):
    rules = game.rules(3, 4, 3)
    env = sb3.make_training_env(algo, n_envs=8, opponent="random", seed=0, rules=rules)
    assert env.action_space.n == 12 and env.action_masks().shape == (8, 12)
    model = sb3.build_model(algo, env, seed=0)
    model.learn(256)
    path = sb3_files.save_model(model, tmp_path / "model.zip", rules)
    assert sb3_files.model_board(path) is rules
    with pytest.raises(ValueError, match="trained on the 3x4x3 board, not on 3x3x3"):
        sb3_files.load_model(path, rules=game.TICTACTOE)
    with pytest.raises(ValueError, match="pass its board as rules="):
        sb3_files.save_model(model, tmp_path / "other.zip")
    policy = sb3.ModelPolicy(sb3_files.load_model(path, rules=rules), rules=rules)
    rate = evaluation.optimal_move_rate(policy)  # the policy's own board, 79,563 positions
    assert rate.positions == 79_563 and 0.0 < rate.rate < 1.0
    with pytest.raises(ValueError, match="only 9 cells means 3x3x3"):
        sb3.ModelPolicy(model)


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["dqn", "ppo"])
def test_the_callbacks_last_entry_describes_the_trained_model(algo):
    # The last evaluation falls while the last rollout is collected; a gradient update follows.
    model = _model(algo)
    callback = sb3.ExactEvalCallback(algo, eval_every=256, stop_when_perfect=False)
    model.learn(512, callback=callback)
    final = evaluation.evaluate(sb3.ModelPolicy(model, algo))
    assert callback.history[-1]["rate"] == final.move_rate.rate
    assert callback.history[-1]["timesteps"] == model.num_timesteps
    assert len({entry["timesteps"] for entry in callback.history}) == len(callback.history)


def test_a_canonical_model_is_evaluated_and_reloaded_through_canonical_boards(tmp_path):
    from agents.models import load_policy

    model, callback = sb3.train("maskable-ppo", 512, opponent="random", n_envs=8, eval_every=256,
                                progress_bar=False, env_options={"canonical": True},
                                **SMALL["maskable-ppo"])
    policy = sb3.ModelPolicy(model, canonical=True)
    assert callback.history[-1]["rate"] == evaluation.optimal_move_rate(policy).rate
    path = sb3_files.save_model(model, tmp_path / "model.zip", canonical=True)
    loaded, _ = load_policy(path)
    assert loaded.canonical is True
    boards, masks = _positions()
    assert (loaded.act_batch(boards, masks) == policy.act_batch(boards, masks)).all()
    legal = masks.astype(bool)[np.arange(len(masks)), policy.act_batch(boards, masks)]
    assert legal.all()
    # Its own distribution, from the file: what evaluation measures as a stochastic policy.
    spread, _ = load_policy(path, stochastic=True)
    expected = sb3.ModelPolicy(model, canonical=True, stochastic=True).probabilities(boards, masks)
    assert np.allclose(spread.action_probabilities_batch(boards, masks), expected)
    assert 0 < evaluation.exploitability(spread) <= 2


def test_load_policy_refuses_stochastic_where_there_is_no_distribution(trained, tmp_path):
    from agents.models import load_policy
    from agents.tabular.q_learning import QLearningAgent

    table = QLearningAgent(seed=0).save(tmp_path / "q.npz")
    with pytest.raises(ValueError, match="Q-table, which plays its greedy move"):
        load_policy(table, stochastic=True)
    dqn = sb3_files.save_model(trained["dqn"], tmp_path / "dqn.zip")
    with pytest.raises(ValueError, match="dqn plays its greedy move"):
        load_policy(dqn, stochastic=True)


# --- self-play --------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("algo", ["maskable-ppo", "dqn"])
def test_sb3_self_play_refreshes_its_pool_with_frozen_copies(algo):
    from agents.self_play import SnapshotPool, snapshot_callback

    pool = SnapshotPool(size=2)
    refresh = snapshot_callback(pool, 128, algo, canonical=True)
    model, callback = sb3.train(algo, 512, opponent=pool.opponent(), n_envs=8, eval_every=256,
                                progress_bar=False, callbacks=[refresh], **SMALL[algo])
    assert pool.added == 4 and len(callback.history) == 2
    boards, masks = _positions()
    for slot in pool.slots:
        assert slot.policy.network is not model.policy  # a copy, frozen
        assert masks[np.arange(len(boards)), slot.act_batch(boards, masks)].all()
    latest = pool.slots[(pool.added - 1) % pool.size].policy
    before = latest.preferences(boards)
    model.learn(256, reset_num_timesteps=False)  # training on does not move a snapshot
    np.testing.assert_array_equal(latest.preferences(boards), before)
    assert not np.array_equal(sb3.ModelPolicy(model).preferences(boards), before)
    with pytest.raises(ValueError, match=r"every must be an integer >= 1 \(timesteps\); got 0"):
        snapshot_callback(pool, 0, algo, canonical=True)


def test_learning_leaves_no_empty_logger_folders(monkeypatch, tmp_path):
    # SB3's default logger makes /tmp/SB3-<date> on every learn() of a quiet model.
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    _learn("dqn", timesteps=64)
    assert list(tmp_path.glob("SB3-*")) == []


@pytest.mark.parametrize("algo", ["dqn", "maskable-ppo"])
def test_preferences_ask_the_network_in_chunks(trained, algo, monkeypatch):
    # One forward pass over a whole 4x4x4 layer held gigabytes of activations.
    policy = sb3.ModelPolicy(trained[algo])
    boards = np.random.default_rng(0).integers(0, 3, (100, 9)).astype(np.int8)
    whole = policy.preferences(boards)
    sizes = []
    net = trained[algo].policy.q_net if algo == "dqn" else trained[algo].policy.action_net
    monkeypatch.setattr(sb3_policy, "PREFERENCE_CHUNK", 7)
    handle = net.register_forward_pre_hook(lambda module, args: sizes.append(len(args[0])))
    try:
        chunked = policy.preferences(boards)
    finally:
        handle.remove()
    assert max(sizes) == 7 and sum(sizes) == 100
    np.testing.assert_allclose(chunked, whole, rtol=1e-6, atol=1e-6)
