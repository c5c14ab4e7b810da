"""Tabular Q-learning: symmetry sharing, legal greedy moves, seeding, learning, and its files."""

from __future__ import annotations

import copy
import io
import json
import os
import re
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from zip_helpers import move_central_directory, set_version_needed

import gym_tictactoe  # noqa: F401  (registers TicTacToe-v0)
from agents.tabular.q_learning import (
    FORMAT,
    TRAINING_OPPONENT,
    QLearningAgent,
    symmetry_tables,
)
from gym_tictactoe import evaluation, game
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.game.positions import views
from gym_tictactoe.players.opponents import parse_opponent

T3 = game.TICTACTOE  # tic-tac-toe's rules, for lines that would not fit

PLAYING = T3.reachable[~T3.tables.terminal[T3.reachable]]
# Every position with a move to make, as its side to move sees it, and its legal cells.
OBSERVATIONS = views(T3)[T3.tables.to_move[PLAYING] - 1, PLAYING]
CODES = OBSERVATIONS.astype(np.int64) @ T3.pow3  # the agent's codes: 1 own mark, 2 the other's
MASKS = T3.tables.legal_mask[PLAYING]
T3_TABLE = (T3.n_codes, T3.n_cells)  # the shape of a 3x3 agent's tables


def training_env(opponent: str = TRAINING_OPPONENT) -> TicTacToeEnv:
    return TicTacToeEnv(parse_opponent(opponent), agent_mark="random")


def trained(episodes: int, seed: int = 0, **config) -> QLearningAgent:
    agent = QLearningAgent(seed=seed, **config)
    agent.train(training_env(), episodes)
    return agent


class OneMoveEnv(gym.Env):
    """Shows one fixed observation; any move ends the episode with reward 1."""

    def __init__(self, obs: np.ndarray) -> None:
        self.obs, self.moves = np.asarray(obs, dtype=np.int8), []

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.obs.copy(), {"action_mask": (self.obs == 0).astype(np.int8)}

    def step(self, action):
        self.moves.append(action)
        return self.obs.copy(), 1.0, True, False, {"action_mask": np.zeros(9, np.int8)}


# --- symmetry sharing ----------------------------------------------------------------------


@pytest.mark.parametrize("symmetric", [True, False])
def test_images_of_a_position_share_its_row_with_cells_mapped(symmetric):
    rows, columns = symmetry_tables(symmetric, T3)
    for s, perm in enumerate(T3.symmetries):
        images = T3.tables.cells[PLAYING][:, perm].astype(np.int64) @ T3.pow3
        same_row = rows[images] == rows[PLAYING]
        assert same_row.all() if symmetric else np.array_equal(same_row, images == PLAYING)
        if symmetric:  # cell a of the position is cell INVERSE[s][a] of its image
            moved = columns[images][:, T3.inverse_symmetries[s]]
            assert (moved == columns[PLAYING]).all()


def test_an_update_is_visible_on_every_symmetric_image():
    obs = np.array([1, 2, 0, 0, 0, 0, 0, 0, 0], dtype=np.int8)  # no symmetry of its own
    env = OneMoveEnv(obs)
    agent = QLearningAgent(seed=0)
    agent.train(env, 1)
    values = agent.q_values(obs)
    assert values[env.moves[0]] == 1.0 and np.count_nonzero(values) == 1
    for perm in T3.symmetries:  # image[j] = obs[perm[j]], so its values are values[perm]
        assert np.array_equal(agent.q_values(obs[perm]), values[perm])


def test_without_sharing_an_update_stays_on_its_own_position():
    obs = np.array([1, 2, 0, 0, 0, 0, 0, 0, 0], dtype=np.int8)
    agent = QLearningAgent(seed=0, symmetric=False)
    agent.train(OneMoveEnv(obs), 1)
    assert np.count_nonzero(agent.q_values(obs)) == 1
    for perm in T3.symmetries[1:]:
        assert not agent.q_values(obs[perm]).any()


def test_equivalent_cells_of_a_symmetric_position_share_one_value():
    agent = QLearningAgent(seed=0)
    agent.train(OneMoveEnv(np.zeros(9, dtype=np.int8)), 1)  # one move on the empty board
    values = agent.q_values(np.zeros(9, dtype=np.int8))
    groups = ([0, 2, 6, 8], [1, 3, 5, 7], [4])  # corners, edges, centre
    assert sorted(float(values[g[0]]) for g in groups) == [0.0, 0.0, 1.0]
    assert all(len(set(values[g].tolist())) == 1 for g in groups)


# --- acting --------------------------------------------------------------------------------


@pytest.mark.parametrize("symmetric", [True, False])
def test_act_is_always_legal_even_where_illegal_cells_look_best(symmetric):
    agent = QLearningAgent(seed=0, symmetric=symmetric)
    agent.q[:] = np.random.default_rng(1).normal(size=T3_TABLE)
    rows, columns = symmetry_tables(symmetric, T3)
    occupied = OBSERVATIONS != 0
    agent.q[np.repeat(rows[CODES], 9).reshape(-1, 9)[occupied], columns[CODES][occupied]] = 1e9
    batch = agent.act_batch(OBSERVATIONS, MASKS)
    assert MASKS[np.arange(len(batch)), batch].all()
    one_by_one = [agent(obs, mask) for obs, mask in zip(OBSERVATIONS, MASKS, strict=True)]
    assert np.array_equal(batch, one_by_one)


def test_ties_go_to_the_lowest_legal_cell():
    agent = QLearningAgent(seed=0)  # all values 0: every legal cell ties
    assert np.array_equal(agent.act_batch(OBSERVATIONS, MASKS), MASKS.argmax(axis=1))
    assert agent.act(np.array([1, 2, 1, 0, 0, 0, 0, 0, 0]), [0, 0, 0, 1, 1, 1, 1, 1, 1]) == 3


def test_bad_inputs_to_act_raise_clear_errors():
    agent = QLearningAgent(seed=0)
    with pytest.raises(ValueError, match="at least one legal"):
        agent.act(np.zeros(9, dtype=np.int8), np.zeros(9, dtype=np.int8))
    with pytest.raises(ValueError, match="9 cells"):
        agent.act(np.zeros(8, dtype=np.int8), np.ones(9, dtype=np.int8))
    with pytest.raises(ValueError, match=r"\(N, 9\)"):
        agent.act_batch(np.zeros((2, 9)), np.ones((3, 9)))


@pytest.mark.parametrize("bad", [{"alpha": 0}, {"gamma": 1.5}, {"epsilon_end": -0.1},
                                 {"epsilon_decay_episodes": 2.5}, {"symmetric": "yes"},
                                 {"seed": -1}, {"seed": 2**32}, {"learning_rate": 0.1}])
def test_bad_hyper_parameters_are_refused(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        QLearningAgent(**bad)


# --- training ------------------------------------------------------------------------------


def test_the_same_seed_trains_the_same_table():
    first, second, other = trained(300, seed=7), trained(300, seed=7), trained(300, seed=8)
    assert np.array_equal(first.q, second.q) and np.array_equal(first.visits, second.visits)
    assert not np.array_equal(first.q, other.q)


def test_a_short_training_beats_random_play_far_more_often_than_no_training():
    untrained, agent = QLearningAgent(seed=0), trained(3000, seed=0)
    before = evaluation.play_games(untrained, "random", 400, agent_mark="random", seed=0)
    after = evaluation.play_games(agent, "random", 400, agent_mark="random", seed=0)
    # Measured: before 253 wins, 131 losses (score 0.31); after 3,000 episodes 24 losses and a
    # score of 0.79 (seeds 0-4: 0.79-0.89, 8-24 losses; 2,000 episodes was too few to be safe).
    assert after.score > before.score + 0.3 and after.losses < before.losses / 3
    assert evaluation.optimal_move_rate(agent).rate > 0.75  # untrained: 0.59


def test_train_works_through_gym_make_and_counts_episodes_and_callbacks():
    env = gym.make("TicTacToe-v0", opponent=TRAINING_OPPONENT, agent_mark="random")
    agent, calls = QLearningAgent(seed=0), []
    stats = agent.train(env, 250, eval_every=100, on_eval=lambda a, n: calls.append(n))
    assert (stats.episodes, agent.episodes, calls, stats.stopped) == (250, 250, [100, 200, 250],
                                                                       False)
    assert stats.wins + stats.draws + stats.losses == 250 and stats.steps >= 2 * 250
    stats = agent.train(env, 1000, eval_every=100, on_eval=lambda a, n: n >= 450)
    assert (stats.episodes, agent.episodes, stats.stopped) == (200, 450, True)


def test_the_exploration_schedule_runs_linearly_then_stays():
    agent = QLearningAgent(epsilon_start=1.0, epsilon_end=0.5, epsilon_decay_episodes=100)
    rates = []
    for episodes in (0, 50, 100, 1000):
        agent.episodes = episodes
        rates.append(agent.epsilon())
    assert rates == [1.0, 0.75, 0.5, 0.5]


@pytest.mark.slow
def test_the_default_configuration_reaches_perfect_play():
    """Both seats draw against a best response and every one of the 4,520 moves keeps the
    game value. Seed 1 takes 22,000 episodes (about 1.5 s); seeds 0-19 take 22,000-68,000."""
    agent = QLearningAgent(seed=1)
    stats = agent.train(training_env(), 150_000, eval_every=1000,
                        on_eval=lambda a, n: evaluation.evaluate(a).perfect)
    report = evaluation.evaluate(agent)
    assert stats.stopped and report.perfect and report.move_rate.rate == 1.0
    assert {seat: r.result for seat, r in report.best_response.items()} == {"X": "draw",
                                                                             "O": "draw"}


# --- files ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def agent() -> QLearningAgent:
    return trained(500, seed=3)


@pytest.fixture()
def saved(agent, tmp_path) -> Path:
    return agent.save(tmp_path / "agent.npz")


def test_save_then_load_gives_back_the_same_agent(agent, saved):
    loaded = QLearningAgent.load(saved)
    assert np.array_equal(loaded.q, agent.q) and np.array_equal(loaded.visits, agent.visits)
    assert loaded.config == agent.config and loaded.episodes == agent.episodes == 500
    assert np.array_equal(loaded.act_batch(OBSERVATIONS, MASKS),
                          agent.act_batch(OBSERVATIONS, MASKS))
    assert loaded.rng.bit_generator.state == agent.rng.bit_generator.state


def test_a_loaded_agent_trains_on_exactly_as_the_original(agent, saved):
    original, loaded = copy.deepcopy(agent), QLearningAgent.load(saved)
    for player in (original, loaded):
        player.train(training_env(), 200)
    assert np.array_equal(original.q, loaded.q)


def test_saving_leaves_only_the_final_file(agent, tmp_path):
    agent.save(tmp_path / "agent.npz")
    agent.save(tmp_path / "agent.npz")  # overwriting too
    assert os.listdir(tmp_path) == ["agent.npz"]


def test_saving_into_a_missing_directory_fails_clearly_and_writes_nothing(agent, tmp_path):
    with pytest.raises(FileNotFoundError, match="no directory"):
        agent.save(tmp_path / "missing" / "agent.npz")
    assert os.listdir(tmp_path) == []


def test_a_failed_save_keeps_the_old_file_and_removes_the_temporary(agent, saved, monkeypatch):
    before = saved.read_bytes()

    def crash(file, **arrays):
        file.write(b"PK\x03\x04 half an archive")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", crash)
    with pytest.raises(OSError, match="disk full"):
        agent.save(saved)
    assert saved.read_bytes() == before and os.listdir(saved.parent) == [saved.name]


def arrays_of(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return dict(data)


def corrupt(saved: Path, case: str) -> Path:
    """A broken variant of a real saved file, written beside it."""
    target, arrays = saved.with_name(f"{case}.npz"), arrays_of(saved)
    if case == "truncated":
        target.write_bytes(saved.read_bytes()[: saved.stat().st_size // 2])
    elif case == "random bytes":
        target.write_bytes(np.random.default_rng(0).bytes(4096))
    elif case == "a single .npy":
        with open(target, "wb") as file:
            np.save(file, arrays["q"])
    else:
        changes = {"no marker": {"format": None}, "foreign marker": {"format": "sb3/1"},
                   "wrong shape": {"q": np.zeros((9, 9))},
                   "wrong dtype": {"q": np.zeros(T3_TABLE, dtype=np.int64)},
                   "bad config": {"config": '{"alpha": 7}'}}[case]
        arrays.update(changes)
        np.savez(target, **{k: np.asarray(v) for k, v in arrays.items() if v is not None})
    return target


@pytest.mark.parametrize("case, message", [
    ("truncated", "not a readable zip archive, perhaps truncated"),
    ("random bytes", "not a zip archive"),
    ("a single .npy", "not a zip archive"),
    ("no marker", r"missing entries \['format.npy'\]"),
    ("foreign marker", "its format is 'sb3/1'"),
    ("wrong shape", r"'q' must be float64 of shape \(19683, 9\), found float64 \(9, 9\)"),
    ("wrong dtype", r"'q' must be float64 of shape \(19683, 9\), found int64"),
    ("bad config", "bad hyper-parameters.*alpha must be a number in"),
])
def test_a_broken_or_foreign_file_is_refused_with_a_clear_error(saved, case, message):
    path = corrupt(saved, case)
    with pytest.raises(ValueError, match=message) as error:
        QLearningAgent.load(path)
    text = str(error.value)
    assert str(path) in text and "QLearningAgent.save" in text and FORMAT in text
    assert error.value.__cause__ is None and (error.value.__context__ is None
                                              or error.value.__suppress_context__)


class Trap:
    """Unpickling a Trap creates the file it names: proof that something was unpickled."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return Path.touch, (self.path,)


def test_a_file_holding_pickled_objects_is_refused_without_unpickling(saved, tmp_path):
    sprung = tmp_path / "sprung"
    arrays = {**arrays_of(saved), "q": np.array([Trap(sprung)], dtype=object)}
    path = tmp_path / "pickled.npz"
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match="object array, which would need unpickling"):
        QLearningAgent.load(path)
    assert not sprung.exists()


def rewrite(saved: Path, target: Path, **members: bytes) -> Path:
    """``saved`` with some members replaced or added as raw bytes (None drops one)."""
    with zipfile.ZipFile(saved) as source:
        entries = {name: source.read(name) for name in source.namelist()}
    entries.update({f"{key}.npy": data for key, data in members.items()})
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            if data is not None:
                archive.writestr(name, data)
    return target


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def npy_header(descr: str, shape: tuple[int, ...], data: bytes = b"") -> bytes:
    """An .npy whose header claims ``descr`` and ``shape``, followed by ``data`` only."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue() + data


def test_an_unknown_entry_is_refused_before_anything_is_read(saved, tmp_path):
    # 1.6 GB of zeros once unpacked, a few MB compressed: the old loader read it all.
    path = rewrite(saved, tmp_path / "extra.npz", junk=npy(np.zeros(2_000_000)))
    with pytest.raises(ValueError, match=r"unexpected entries \['junk.npy'\]"):
        QLearningAgent.load(path)


def test_a_header_claiming_a_huge_array_is_refused_from_the_header(saved, tmp_path):
    path = rewrite(saved, tmp_path / "huge.npz", q=npy_header("<f8", (10**6, 10**6), b"\0" * 64))
    with pytest.raises(ValueError, match=r"'q' must be float64 of shape \(19683, 9\), "
                                         r"found float64 \(1000000, 1000000\)"):
        QLearningAgent.load(path)


def test_an_oversized_entry_is_refused(saved, tmp_path):
    padded = '{"alpha": 0.05' + " " * 100_000 + "}"  # valid JSON, but no config is that big
    path = rewrite(saved, tmp_path / "padded.npz", config=npy(np.array(padded)))
    with pytest.raises(ValueError, match=r"entry 'config' holds 400,.* bytes, more than"):
        QLearningAgent.load(path)


@pytest.mark.parametrize(("visits", "message"), [
    (np.full(T3_TABLE, 2**64 - 1, dtype=np.uint64), r"'visits' must be int64 .* found uint64"),
    (np.full(T3_TABLE, -1, dtype=np.int64), "'visits' must be counts from 0"),
    (np.full(T3_TABLE, 2**63 - 1, dtype=np.int64), "'visits' must be counts from 0"),
])
def test_visit_counts_are_checked_before_any_cast(saved, tmp_path, visits, message):
    path = rewrite(saved, tmp_path / "visits.npz", visits=npy(visits))
    with pytest.raises(ValueError, match=message):
        QLearningAgent.load(path)


def test_a_truncated_entry_is_refused(saved, tmp_path):
    path = rewrite(saved, tmp_path / "short.npz", q=npy_header("<f8", T3_TABLE, b"\0" * 80))
    with pytest.raises(ValueError, match="entry 'q' is truncated"):
        QLearningAgent.load(path)


@pytest.mark.parametrize("descr", ["<U0", "|S0", "|V0"])
def test_a_dtype_of_zero_size_is_refused_naming_file_and_entry(saved, tmp_path, descr):
    """numpy's own "itemsize cannot be zero in type" named neither."""
    path = rewrite(saved, tmp_path / "zero.npz", config=npy_header(descr, ()))
    with pytest.raises(ValueError, match=rf"{path}.*entry 'config' has a dtype of zero size "
                                         rf"\('{re.escape(descr)}'\)") as error:
        QLearningAgent.load(path)
    assert "\n" not in str(error.value)


def test_non_finite_values_are_refused_naming_the_entry(saved, tmp_path):
    q = arrays_of(saved)["q"].copy()
    q[7, 2] = np.inf
    path = rewrite(saved, tmp_path / "inf.npz", q=npy(q))
    with pytest.raises(ValueError, match=rf"{path}.*entry 'q' holds values that are not finite "
                                         r"\(NaN or infinite\): 1 of 177,147, the first at "
                                         r"index 65\b"):
        QLearningAgent.load(path)


@pytest.mark.parametrize("damage", ["version needed 8.0", "central directory moved"])
def test_a_broken_zip_structure_is_one_clear_error(saved, damage):
    """zipfile's NotImplementedError and OSError were tracebacks from model_kind."""
    from agents.models import load_policy, model_kind

    loads = [load_policy, QLearningAgent.load]
    if damage == "version needed 8.0":
        set_version_needed(saved, 80)
        loads.insert(0, model_kind)
    else:  # the names still read: only reading a member fails
        move_central_directory(saved, 1000)
    for load in loads:
        with pytest.raises(ValueError, match="not a readable zip archive") as error:
            load(saved)
        assert "\n" not in str(error.value) and str(saved) in str(error.value)


def test_the_tables_are_checked_against_the_config_board_before_its_index(saved, tmp_path,
                                                                          monkeypatch):
    """A 3x3 file whose config says 4x4x4 built the 4x4x4 index (6.7 s, 626 MB) first."""
    from agents.tabular import tables as q_tables

    def refuse(*args, **kwargs):
        raise AssertionError("the board's index was built")

    config = json.loads(str(arrays_of(saved)["config"]))
    config.update(rows=4, cols=4, win_length=4)
    path = rewrite(saved, tmp_path / "4x4x4.npz", config=npy(np.array(json.dumps(config))))
    monkeypatch.setattr(q_tables, "index", refuse)
    with pytest.raises(ValueError, match=r"'q' must be float64 of shape \(rows, 16\) with rows "
                                         r"<= 43046721, found float64 \(19683, 9\)"):
        QLearningAgent.load(path)


def test_a_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="no Q-learning agent file"):
        QLearningAgent.load(tmp_path / "nothing.npz")


def test_progress_shows_a_bar(capsys):
    QLearningAgent(seed=0).train(training_env(), 20, progress=True)
    assert "20/20" in capsys.readouterr().err
