"""AlphaZero's self-play in Ray actors (``train.py --workers N``): a local Ray with 2 CPUs and two
workers playing a few games, whole training rounds (scaled with the workers, learning
overlapping the next round's self-play), and the flags' bad input. The Ray tests take about
80 s on 2 busy cores (load average 5), most of it Ray starting (once per module) and each of
the 12 actors importing torch; the rest take under 5 s together. train.py's refusals of these
flags, run as a process, are in tests/e2e/test_workers_processes.py."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.alphazero import PlaySettings
from agents.alphazero.network import NetworkSettings, PolicyValueNet, infer
from agents.alphazero.self_play import play_games
from agents.alphazero.workers import check_address, shares, worker_rng
from gym_tictactoe import game

PLAY = PlaySettings(simulations=4, start_probability=0.0)
NETWORK = NetworkSettings(channels=8, blocks=1)


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def ray_player(seed: int, workers: int = 2):
    from agents.alphazero.workers import RayPlayer

    return RayPlayer(game.TICTACTOE, PLAY, NETWORK, seed, workers)


def network() -> PolicyValueNet:
    import torch

    torch.manual_seed(0)
    return PolicyValueNet(NETWORK)


@pytest.mark.slow
def test_two_workers_play_their_share_of_games_reproducibly(local_ray):
    from agents.sb3 import torch_threads

    net, runs = network(), []
    for _ in range(2):
        player = ray_player(seed=7)
        runs.append(player(net, 5))
        assert player.counts()[0] > 0
        player.close()
    first, again = runs
    cells = game.TICTACTOE.n_cells
    assert first.boards.shape[1] == cells and first.boards.dtype == np.int8
    assert len(first.boards) == len(first.policies) == len(first.outcomes) >= 5 * 5
    assert np.allclose(first.policies.sum(axis=1), 1.0)
    assert not first.policies[first.boards != 0].any()  # no weight on an occupied cell
    assert set(np.unique(first.outcomes)) <= {-1.0, 0.0, 1.0}
    for name in ("boards", "policies", "outcomes"):  # same seed and worker count: same samples
        assert np.array_equal(getattr(first, name), getattr(again, name))
    # Worker i played shares(5, 2)[i] games on stream i with the driver's weights, in order.
    with torch_threads(1):
        local = [play_games(game.TICTACTOE, lambda b: infer(net, b, (3, 3)), share, PLAY,
                            worker_rng(7, index)) for index, share in enumerate(shares(5, 2))]
    assert np.array_equal(first.boards, np.concatenate([s.boards for s in local]))
    assert np.allclose(first.policies, np.concatenate([s.policies for s in local]))


class Recording:
    """A RayPlayer's calls: the network's weights when called, the games asked and sent ahead,
    and the samples returned."""

    def __init__(self, player) -> None:
        self.player, self.workers, self.calls = player, player.workers, []

    def __call__(self, net, games, upcoming, aim):
        samples = self.player(net, games, upcoming, aim)
        weights = {name: value.clone() for name, value in net.state_dict().items()}
        self.calls.append((weights, games, upcoming, samples))
        return samples


def train_recording(overlap: bool) -> tuple[Recording, object]:
    from agents.alphazero import AlphaZeroSettings, Trainer
    from agents.alphazero.workers import RayPlayer

    settings = AlphaZeroSettings(play=PLAY, network=NETWORK, games_per_round=2,
                                 steps_per_round=2, batch_size=8)
    player = RayPlayer(game.TICTACTOE, PLAY, NETWORK, 7, 2, overlap=overlap)
    recording = Recording(player)
    trainer = Trainer(game.TICTACTOE, settings, seed=3, player=recording)
    try:
        trainer.train(10, None)
    finally:
        player.close()
    assert player.pending is None  # the last round sent nothing ahead
    return recording, trainer


@pytest.mark.slow
@pytest.mark.parametrize("overlap", [True, False])
def test_rounds_scale_with_the_workers_and_overlap_one_round_behind(local_ray, overlap):
    from agents.sb3 import torch_threads

    recording, trainer = train_recording(overlap)
    # Rounds of 2 games per worker, the last one what is left of the budget of 10.
    assert [call[1:3] for call in recording.calls] == [(4, 4), (4, 2), (2, 0)]
    assert trainer.games == 10 and trainer.workers == 2
    again, retrained = train_recording(overlap)
    for (*_, samples), (*_, same) in zip(recording.calls, again.calls, strict=True):
        assert np.array_equal(samples.boards, same.boards)
        assert np.array_equal(samples.policies, same.policies)
    for name, value in trainer.net.state_dict().items():
        assert torch_equal(value, retrained.net.state_dict()[name])
    # Replayed here: worker i's stream plays its share of each round in turn, with the weights
    # of the call before (overlap: sent ahead then) or of the round's own call.
    rngs, net = [worker_rng(7, index) for index in range(2)], network()
    for number, (_, games, _, samples) in enumerate(recording.calls):
        net.load_state_dict(recording.calls[max(number - overlap, 0)][0])
        with torch_threads(1):
            local = [play_games(game.TICTACTOE, lambda b: infer(net, b, (3, 3)), share, PLAY,
                                rngs[index]) for index, share in enumerate(shares(games, 2))]
        assert np.array_equal(samples.boards, np.concatenate([s.boards for s in local]))
        assert np.allclose(samples.policies, np.concatenate([s.policies for s in local]))
        assert (~samples.boards.any(axis=1)).sum() == games  # one empty board a game


def torch_equal(first, second) -> bool:
    import torch

    return bool(torch.equal(first, second))


@pytest.mark.slow
def test_a_round_sent_ahead_for_other_games_is_dropped(local_ray):
    player, net = ray_player(seed=7), network()
    try:
        first = player(net, 4, upcoming=4)
        assert player.pending is not None and player.pending[0] == 4
        other = player(net, 3)
    finally:
        player.close()
    assert (~first.boards.any(axis=1)).sum() == 4 and (~other.boards.any(axis=1)).sum() == 3
    assert player.pending is None


@pytest.mark.slow
def test_the_aim_reaches_the_actors_from_the_rounds_sent_after_it(local_ray):
    from agents.alphazero.workers import RayPlayer
    from agents.sb3 import torch_threads
    from gym_tictactoe.game.starts import StartWeights, start_codes

    rules, starts = game.TICTACTOE, dataclasses.replace(PLAY, start_probability=1.0)
    codes = start_codes(rules)
    two = int(np.flatnonzero((rules.cells_of(codes) != 0).sum(axis=1) == 2)[0])
    aim = StartWeights(rules, np.eye(codes.size)[two])  # every start: that position
    player, net = RayPlayer(rules, starts, NETWORK, 7, 2), network()
    try:
        first = player(net, 4, upcoming=4, aim=aim)
        second = player(net, 4, aim=None)  # sent ahead with the aim: played with it
    finally:
        player.close()
    rngs = [worker_rng(7, index) for index in range(2)]
    for samples in (first, second):
        with torch_threads(1):
            local = [play_games(rules, lambda b: infer(net, b, (3, 3)), share, starts,
                                rngs[index], aim) for index, share in enumerate(shares(4, 2))]
        assert np.array_equal(samples.boards, np.concatenate([s.boards for s in local]))
        assert samples.boards.any(axis=1).all()  # no game from the empty board
        assert (np.count_nonzero(samples.boards, axis=1) == 2).sum() == 4  # one start a game


@pytest.mark.slow
def test_train_py_runs_with_workers(local_ray, tmp_path):
    import train

    assert train.main(["--algo", "alphazero", "--workers", "2", "--episodes", "8",
                       "--eval-every", "8", "--games", "2", "--no-progress",
                       "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "alphazero-seed0_1" / "results.json").read_text())
    config = results["config"]
    assert config["workers"] == 2 and config["games_played"] == 8
    # A round is the settings' games and steps per worker, its games one round behind.
    settings = config["hyperparameters"]
    assert (config["round_games"], config["round_steps"], config["round_weights_behind"]) == (
        2 * settings["games_per_round"], 2 * settings["steps_per_round"], 1)
    assert local_ray.is_initialized()  # a Ray the caller started is left running


@pytest.mark.slow
def test_more_workers_than_the_cluster_has_cpus_is_one_line(local_ray):
    with pytest.raises(ValueError, match=r"^--workers 3 needs 3 CPUs \(one per actor\); the "
                                         r"Ray cluster has 2$"):
        ray_player(seed=0, workers=3)


def test_games_are_shared_evenly_in_worker_order():
    assert shares(5, 2) == [3, 2] and shares(1, 3) == [1, 0, 0] and sum(shares(64, 7)) == 64


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("ray://10.0.0.5:10001", "--ray-address ray://10.0.0.5:10001: Ray Client addresses "
                                 "(ray://) are not supported"),
        ("10.0.0.5", "--ray-address must be HOST:PORT (the Ray head's GCS port, e.g. "
                     "10.0.0.5:6379) or auto; got '10.0.0.5'"),
        ("10.0.0.5:99999", "--ray-address must be HOST:PORT"),
        (":6379", "--ray-address must be HOST:PORT"),
    ],
)
def test_an_address_of_another_form_is_refused(address, message):
    def probe(*_args, **_kwargs):
        raise AssertionError("probed an address of the wrong form")

    with pytest.raises(ValueError, match="^" + re.escape(message)):
        check_address(address, probe=probe)


def test_a_probe_that_times_out_says_so():
    def probe(*_args, **_kwargs):
        raise TimeoutError("timed out")

    with pytest.raises(ConnectionError, match=r"nothing answers there \(timed out\)"):
        check_address("10.255.255.1:6379", probe=probe)


def test_an_address_where_ray_cannot_join_says_so_in_one_line():
    from types import SimpleNamespace

    from agents.alphazero.workers import _init_at

    def init(**_kwargs):  # what ray.init raises after its bounded retries
        raise ConnectionError("Failed to connect to Ray cluster at 10.0.0.5:6379")

    with pytest.raises(ConnectionError, match=r"^--ray-address 10.0.0.5:6379: could not join a "
                                              r"Ray cluster there \(Failed to connect"):
        _init_at(SimpleNamespace(init=init), "10.0.0.5:6379")
