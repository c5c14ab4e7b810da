"""Settings that scale memory are refused up front, on the command line and when read from a
checkpoint, in one line naming the setting, the board and the limit (``agents.limits``,
docs/limits.md); none of these tests allocates what it refuses."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest

pytest.importorskip("torch")

from train_helpers import usage_error

import train
from agents import limits
from agents.alphazero import AlphaZeroSettings, PlaySettings, Trainer, workers
from agents.alphazero import state as state_module
from agents.alphazero.network import NetworkSettings
from agents.alphazero.replay import ReplayBuffer
from agents.alphazero.state import STATE_FILE, load_state, save_state
from gym_tictactoe import game

BIG = game.rules(15, 15, 5)


def forbid_allocation(monkeypatch):
    """From now on, building a replay buffer or a trainer fails the test: the refusal must
    come first."""
    def allocated(*args, **kwargs):
        raise AssertionError("allocated before refusing")

    monkeypatch.setattr(ReplayBuffer, "__init__", allocated)
    monkeypatch.setattr(state_module, "Trainer", allocated)


@pytest.fixture
def no_allocation(monkeypatch):
    forbid_allocation(monkeypatch)


MEMORY_FLAGS = [
    (["--buffer-size", "10000000"], r"buffer_size 10,000,000 on 15x15x5 needs 10.5 GiB for the "
     r"replay buffer's samples \(1,129 bytes each\), more than the limit of 1 GiB: give at most "
     r"951,055$"),
    (["--games-per-round", "100000", "--simulations", "10000"], r"games_per_round 100,000 at "
     r"10,000 simulations on 15x15x5 needs [\d,]+ GiB for the games searched at once \(.* each\)"
     r", more than the limit of 4 GiB: give at most \d+$"),
    (["--batch-size", "100000"], r"batch_size 100,000 on 15x15x5 needs .* GiB for a gradient "
     r"step of a network of 32 channels and 2 blocks .* limit of 4 GiB: give at most [\d,]+$"),
]


@pytest.mark.parametrize("flags, message", MEMORY_FLAGS)
def test_alphazero_settings_past_their_memory_are_refused_on_the_command_line(
        capsys, no_allocation, flags, message):
    line = usage_error(capsys, ["--algo", "alphazero", "--board", "15x15x5", *flags])
    assert re.search(message, line), line


def test_the_same_settings_fit_a_smaller_board_or_a_smaller_count(capsys, no_allocation):
    """The limits are the bytes on the board, not fixed counts."""
    train.parse_args(["--algo", "alphazero", "--buffer-size", "10000000"])  # 49 bytes each
    train.parse_args(["--algo", "alphazero", "--board", "15x15x5", "--buffer-size", "951055"])
    assert "give at most 951,055" in usage_error(capsys, [
        "--algo", "alphazero", "--board", "15x15x5", "--buffer-size", "951056"])


def test_a_trainer_refuses_before_allocating(no_allocation):
    settings = AlphaZeroSettings(play=PlaySettings(simulations=10_000), games_per_round=100_000)
    with pytest.raises(ValueError, match=r"games_per_round 100,000 at 10,000 simulations on "
                                         r"15x15x5 needs"):
        Trainer(BIG, settings)


def checkpoint_saying(tmp_path, **settings):
    """A run folder whose checkpoint.npz, written by a small 3x3 run, says in its header that
    it trains 15x15x5 with ``settings``: the arrays stay small, only the header asks."""
    small = AlphaZeroSettings(play=PlaySettings(simulations=2), network=NetworkSettings(4, 1),
                              games_per_round=2, steps_per_round=1, batch_size=4,
                              buffer_size=8)
    folder = tmp_path / "alphazero-15x15x5-seed0_1"
    folder.mkdir()
    trainer = Trainer(game.TICTACTOE, small)
    path = save_state(folder / STATE_FILE, trainer, {"seed": 0}, 0.0, [])
    with np.load(path) as arrays:
        members = {key: arrays[key] for key in arrays.files}
    header = json.loads(str(members["state"]))
    header["board"] = BIG.kwargs
    header["settings"].update(settings)
    members["state"] = np.array(json.dumps(header))
    buffer = io.BytesIO()
    np.savez(buffer, **members)
    path.write_bytes(buffer.getvalue())
    return folder


@pytest.mark.parametrize("settings, message", [
    ({"buffer_size": 10_000_000}, "buffer_size 10,000,000 on 15x15x5 needs 10.5 GiB"),
    ({"games_per_round": 100_000}, "games_per_round 100,000 at 2 simulations on 15x15x5"),
])
def test_a_checkpoint_whose_header_asks_too_much_is_refused_before_allocating(
        tmp_path, capsys, monkeypatch, settings, message):
    folder = checkpoint_saying(tmp_path, **settings)
    forbid_allocation(monkeypatch)
    with pytest.raises(ValueError, match=message) as error:
        load_state(folder / STATE_FILE)
    assert str(folder / STATE_FILE) in str(error.value) and "\n" not in str(error.value)
    line = usage_error(capsys, ["--resume", str(folder)])
    assert message in line and "more than the limit of" in line


@pytest.mark.parametrize("flags, message", [
    (["--learning-rate", "1e308"], "learning_rate must be a number in (0, 1]; got 1e+308"),
    (["--learning-rate", "1.5"], "learning_rate must be a number in (0, 1]; got 1.5"),
    (["--weight-decay", "1e308"], "weight_decay must be a number in [0, 1]; got 1e+308"),
])
def test_optimiser_settings_that_overflow_adamw_are_refused(capsys, flags, message):
    """--learning-rate 1e308 ended in AdamW's "value cannot be converted to type float"."""
    assert message in usage_error(capsys, ["--algo", "alphazero", *flags])
    train.parse_args(["--algo", "alphazero", "--learning-rate", "1", "--weight-decay", "1"])


def test_sb3_n_envs_has_the_model_loaders_limit(capsys):
    from agents.sb3 import files as sb3_files

    assert sb3_files.MAX_N_ENVS is limits.MAX_N_ENVS == 65_536
    assert sb3_files.MAX_BUFFER_BYTES is limits.MAX_BUFFER_BYTES
    for algo in ("ppo", "dqn"):
        assert ("--n-envs must be an integer from 1 to 65,536 (SB3's envs stepped together); "
                "got 1000000") in usage_error(capsys, ["--algo", algo, "--n-envs", "1000000"])
    assert train.parse_args(["--algo", "ppo", "--n-envs", "65536"]).n_envs == 65_536


def test_sb3_n_envs_is_bounded_by_the_rollout_buffer_on_big_boards(capsys):
    pytest.importorskip("stable_baselines3")
    line = usage_error(capsys, ["--algo", "maskable-ppo", "--board", "15x15x5", "--n-envs",
                                "60000"])
    assert re.search(r"--n-envs 60,000 on 15x15x5 needs 10.7 GiB for the rollout buffer of 64 "
                     r"transitions an env \(187 KiB each\), more than the limit of 1 GiB: give "
                     r"at most 5,612$", line), line


def test_workers_on_a_local_ray_are_at_most_the_cpus(capsys, monkeypatch):
    """--workers 12 on a 2-CPU machine started 12 actors at once."""
    monkeypatch.setattr(workers, "local_cpus", lambda: 2)
    line = usage_error(capsys, ["--algo", "alphazero", "--workers", "12"])
    assert "--workers 12: a local Ray runs one actor per CPU, and this machine has 2 CPUs to " \
           "run on: give at most 2 (more on a Ray cluster, with --ray-address)" in line
    assert train.parse_args(["--algo", "alphazero", "--workers", "2"]).workers == 2

    class NoRay:  # what connect() would start: it must not be started
        @staticmethod
        def is_initialized():
            return False

        @staticmethod
        def init(**kwargs):
            raise AssertionError("Ray started")

    monkeypatch.setattr(workers, "require", lambda *args: NoRay)
    with pytest.raises(ValueError, match="--workers 3: a local Ray runs one actor per CPU"):
        workers.connect(None, 3)
