"""TicTacToeVectorEnv: agreement with TicTacToeEnv board by board, the vector API contract,
NEXT_STEP autoreset, seeding, and the vectorised opponents against their single-env tables."""

from __future__ import annotations

import tracemalloc
import warnings
from typing import Any

import boards_helpers
import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from hypothesis import given, settings
from hypothesis import strategies as st

import gym_tictactoe  # noqa: F401  (registers TicTacToe-v0)
from gym_tictactoe import game
from gym_tictactoe.envs import rendering
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.envs.vector import TicTacToeVectorEnv, memory_needed, vectorize_opponent
from gym_tictactoe.game import solver, starts
from gym_tictactoe.game.batch import new_batch
from gym_tictactoe.players import heuristic
from gym_tictactoe.players.opponents import (
    EpsilonOpponent,
    HeuristicOpponent,
    MinimaxOpponent,
    MixtureOpponent,
    PolicyOpponent,
    RandomOpponent,
    TableOpponent,
)

T3 = game.TICTACTOE  # tic-tac-toe's rules

PLAYING = T3.reachable[~T3.tables.terminal[T3.reachable]]
Step = tuple[Any, ...]


class Highest(TableOpponent):
    """Always the highest-numbered legal cell (RandomOpponent(deterministic=True) is the lowest)."""

    @property
    def table(self) -> np.ndarray:
        table = np.zeros((T3.n_codes, T3.n_cells), dtype=bool)
        highest = T3.n_cells - 1 - np.argmax(T3.tables.legal_mask[:, ::-1], axis=1)
        table[np.arange(T3.n_codes), highest] = T3.tables.legal_mask.any(axis=1)
        return table


def choose_actions(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """Mostly legal cells, some occupied cells and some actions outside 0..8."""
    legal = np.argmax(rng.random(masks.shape) + masks, axis=1)
    anything = rng.integers(-1, 11, size=len(masks))
    return np.where(rng.random(len(masks)) < 0.85, legal, anything)


def deterministic_opponents() -> dict[str, Any]:
    minimax = MinimaxOpponent(deterministic=True)
    return {
        "lowest": RandomOpponent(deterministic=True),  # loses, so the agent wins too
        "minimax": minimax,
        "heuristic": HeuristicOpponent(deterministic=True),
        "epsilon0": EpsilonOpponent(0.0, minimax),
        "mixture": MixtureOpponent([minimax, RandomOpponent()], weights=[1, 0]),
    }


def lockstep(name: str, agent_mark: str, n: int) -> boards_helpers.Lockstep:
    """A vector env and one single env per board on 3x3, stepped together and compared exactly."""
    return boards_helpers.Lockstep((3, 3, 3), name, agent_mark, n)


@pytest.mark.parametrize("agent_mark", ["X", "O"])
@pytest.mark.parametrize("name", sorted(deterministic_opponents()))
def test_agrees_with_single_envs_step_for_step_across_autoresets(name, agent_mark):
    pair, rng = lockstep(name, agent_mark, n=16), np.random.default_rng(7)
    for _ in range(60):
        pair.step(choose_actions(rng, pair.info["action_mask"]))
    assert pair.episodes > 2 * 16  # every board went through several autoresets


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(sorted(deterministic_opponents())),
    st.sampled_from(["X", "O"]),
    st.lists(st.lists(st.integers(-2**40, 2**40) | st.integers(-1, 9), min_size=3, max_size=3),
             max_size=25),
)
def test_any_actions_agree_with_single_envs(name, agent_mark, actions):
    pair = lockstep(name, agent_mark, n=3)
    for row in actions:
        pair.step(np.array(row, dtype=np.int64))


def test_non_integer_actions_are_illegal_moves_as_in_the_single_env():
    vec = TicTacToeVectorEnv(3)
    vec.reset(seed=0)
    _, rewards, terminated, _, info = vec.step(np.full(3, 4.0))
    single = TicTacToeEnv()
    single.reset(seed=0)
    assert single.step(4.0)[1:3] == (-1.0, True)  # type: ignore[arg-type]
    assert rewards.tolist() == [-1.0] * 3 and terminated.all() and info["illegal_action"].all()


def test_make_vec_uses_the_vector_entry_point_and_passes_kwargs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        envs = gym.make_vec("TicTacToe-v0", num_envs=5, vectorization_mode="vector_entry_point",
                            opponent="heuristic", agent_mark="O", illegal_action="raise")
        default = gym.make_vec("TicTacToe-v0", num_envs=2, opponent="random+minimax*2")
    assert isinstance(envs.unwrapped, TicTacToeVectorEnv)
    assert isinstance(default.unwrapped, TicTacToeVectorEnv)
    assert envs.num_envs == 5 and envs.unwrapped.illegal_action == "raise"
    obs, info = envs.reset(seed=0)
    assert (info["agent_mark"] == game.O).all() and (obs == 2).sum(axis=1).tolist() == [1] * 5
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert envs.spec.kwargs["opponent"] == "heuristic"


def test_spaces_match_the_single_env_and_gymnasium_batching():
    n = 7
    vec, single = TicTacToeVectorEnv(n), TicTacToeEnv()
    assert vec.single_observation_space == single.observation_space
    assert vec.single_action_space == single.action_space
    assert vec.observation_space == batch_space(single.observation_space, n)
    assert vec.observation_space.shape == (n, 9) and vec.observation_space.dtype == np.int8
    assert vec.action_space == spaces.MultiDiscrete([9] * n)


INFO_DTYPES = {"action_mask": np.int8, "agent_mark": np.int8, "board": np.int8,
               "opponent_action": np.int8, "winner": np.int8, "illegal_action": np.bool_}


def check_batch(vec: TicTacToeVectorEnv, obs: np.ndarray, info: dict[str, Any]) -> None:
    n = vec.num_envs
    assert obs in vec.observation_space and obs.dtype == np.int8
    assert set(info) == set(INFO_DTYPES) | {"_opponent_action", "_winner", "_illegal_action"}
    for key, dtype in INFO_DTYPES.items():
        assert info[key].dtype == dtype and info[key].shape[0] == n, key
    for key in ("opponent_action", "winner", "illegal_action"):
        assert info[f"_{key}"].dtype == np.bool_ and info[f"_{key}"].shape == (n,)


@pytest.mark.parametrize("opponent", ["random", "minimax", "epsilon:epsilon=0.5,inner=heuristic"])
def test_reset_and_step_return_batches_in_the_spaces(opponent):
    vec = TicTacToeVectorEnv(9, opponent=opponent, agent_mark="random")
    rng = np.random.default_rng(0)
    obs, info = vec.reset(seed=1)
    check_batch(vec, obs, info)
    for _ in range(20):
        result = vec.step(vec.action_space.sample())
        assert isinstance(result, tuple) and len(result) == 5
        obs, rewards, terminated, truncated, info = result
        check_batch(vec, obs, info)
        assert rewards.dtype == np.float32 and rewards.shape == (9,)
        assert set(np.unique(rewards)) <= {-1.0, 0.0, 1.0}
        assert terminated.dtype == truncated.dtype == np.bool_ and not truncated.any()
        assert terminated.shape == truncated.shape == (9,)
        vec.step(np.argmax(rng.random((9, 9)) + vec.action_masks(), axis=1))


def test_returned_arrays_are_not_reused_or_shared_with_the_env():
    vec = TicTacToeVectorEnv(4, opponent="minimax")
    obs, info = vec.reset(seed=0)
    before = (obs.copy(), {k: v.copy() for k, v in info.items()})
    step = vec.step(np.full(4, 4))
    assert data_equivalence((obs, info), before, exact=True)
    for array in (*step[:4], *step[4].values()):
        array[...] = 0
    assert (vec.action_masks().sum(axis=1) == 7).all() and (vec.codes != 0).all()


def rollout(vec: TicTacToeVectorEnv, seed: int, steps: int = 40) -> list[Step]:
    """A seeded trace with seeded masked-random actions and a reset (unseeded) halfway."""
    rng = np.random.default_rng(seed)
    trace: list[Step] = [vec.reset(seed=seed)]
    for t in range(steps):
        if t == steps // 2:
            trace.append(vec.reset())
        trace.append(vec.step(np.argmax(rng.random((vec.num_envs, 9)) + trace[-1][-1]
                                        ["action_mask"], axis=1)))
    return trace


@pytest.mark.parametrize("opponent", ["random", "minimax", "heuristic",
                                      "random+epsilon:epsilon=0.3+minimax*2"])
def test_same_seed_same_rollout_and_another_seed_another(opponent):
    make = lambda: TicTacToeVectorEnv(8, opponent=opponent, agent_mark="random")  # noqa: E731
    assert data_equivalence(rollout(make(), 3), rollout(make(), 3), exact=True)
    assert not data_equivalence(rollout(make(), 3), rollout(make(), 4), exact=True)


def test_a_finished_board_resets_at_the_next_step_ignoring_its_action():
    vec = TicTacToeVectorEnv(2, opponent=MinimaxOpponent(deterministic=True), agent_mark="O")
    obs, info = vec.reset(seed=0)
    assert info["opponent_action"].tolist() == [0, 0] and obs[:, 0].tolist() == [2, 2]
    obs, rewards, terminated, _, info = vec.step(np.array([0, 4]))  # board 0 plays on X's cell
    assert rewards.tolist() == [-1.0, 0.0] and terminated.tolist() == [True, False]
    assert info["illegal_action"].tolist() == [True, False] and info["_winner"][0]
    assert obs[0].tolist() == [2] + [0] * 8 and not info["action_mask"][0].any()
    assert vec.action_masks()[0].all()  # any action is accepted while waiting for the reset
    assert obs[1].tolist() == [2, 2, 0, 0, 1, 0, 0, 0, 0]
    obs, rewards, terminated, _, info = vec.step(np.array([99, 2]))  # 99 is ignored on board 0
    assert rewards[0] == 0.0 and not terminated[0] and not info["illegal_action"][0]
    assert obs[0].tolist() == [2] + [0] * 8 and info["opponent_action"][0] == 0
    assert info["action_mask"][0].tolist() == [0] + [1] * 8
    assert obs[1].tolist() == [2, 2, 1, 0, 1, 0, 2, 0, 0]


def test_illegal_action_raise_names_the_move_and_changes_nothing():
    vec = TicTacToeVectorEnv(3, opponent="minimax", agent_mark="O", illegal_action="raise")
    vec.reset(seed=0)
    codes, actions = vec.codes.copy(), vec.action_masks().argmax(axis=1)
    actions[1] = np.flatnonzero(vec.codes[1] // T3.pow3 % 3)[0]
    with pytest.raises(ValueError, match=r"illegal action \d on board 1 .*legal moves there"):
        vec.step(actions)
    assert (vec.codes == codes).all()


@pytest.mark.parametrize("actions", [np.zeros(4, dtype=int), np.zeros((2, 1), dtype=int), [0]])
def test_actions_of_the_wrong_shape_are_rejected(actions):
    vec = TicTacToeVectorEnv(2)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions must have shape \(2,\)"):
        vec.step(actions)


def test_step_before_reset_says_to_call_reset():
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        TicTacToeVectorEnv(2).step(np.zeros(2, dtype=int))


def test_reset_options_reset_mask_and_agent_mark():
    vec = TicTacToeVectorEnv(4, opponent="minimax")
    vec.reset(seed=0)
    vec.step(np.full(4, 4))
    obs, info = vec.reset(options={"reset_mask": np.array([True, False, True, False]),
                                   "agent_mark": "O"})
    assert info["agent_mark"].tolist() == [2, 1, 2, 1]
    assert ((obs != 0).sum(axis=1)).tolist() == [1, 2, 1, 2]
    with pytest.raises(ValueError, match="reset_mask"):
        vec.reset(options={"reset_mask": np.ones(3, dtype=bool)})
    with pytest.raises(ValueError, match="agent_mark must be one of"):
        vec.reset(options={"agent_mark": "Z"})


def test_random_seat_is_drawn_per_board_per_episode():
    vec = TicTacToeVectorEnv(2000, opponent="random", agent_mark="random")
    _, info = vec.reset(seed=0)
    first = info["agent_mark"]
    assert 0.45 < (first == game.O).mean() < 0.55
    vec.step(np.full(2000, -1))  # every board loses at once...
    _, _, _, _, info = vec.step(np.zeros(2000, dtype=int))  # ...and autoresets
    assert 0.4 < (info["agent_mark"] != first).mean() < 0.6


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_envs": 0}, "num_envs must be an integer from 1 to 16,777,216"),
        ({"num_envs": 2.5}, "num_envs must be an integer from 1 to 16,777,216"),
        ({"agent_mark": "Z"}, r"agent_mark must be one of \['X', 'O', 'random'\]"),
        ({"illegal_action": "ignore"}, r"illegal_action must be one of \['lose', 'raise'\]"),
        ({"render_mode": "human"}, r"render_mode must be one of \[None, 'ansi'\]"),
        ({"opponent": PolicyOpponent(lambda obs, mask: 0, rows=4, cols=4)}, "not on 3x3x3"),
        ({"rows": 16}, "rows must be an integer from 1 to 15"),
        ({"win_length": 4}, r"win_length must be an integer from 1 to 3"),
        ({"opponent": "minimax", "rows": 9, "cols": 9}, "use 'alphabeta'"),
        ({"opponent": "nobody"}, "unknown opponent 'nobody'"),
    ],
)
def test_bad_arguments_fail_at_construction(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TicTacToeVectorEnv(**{"num_envs": 2, **kwargs})


@pytest.mark.parametrize("opponent", ["montecarlo:playouts=3", "random+montecarlo:playouts=3"])
def test_other_opponents_reply_board_by_board_like_the_single_env(opponent):
    vec = TicTacToeVectorEnv(3, opponent=opponent, agent_mark="O")
    singles = [TicTacToeEnv(opponent, "O") for _ in range(3)]
    obs, _ = vec.reset(seed=5)
    assert (obs.sum(axis=1) == 2).all()  # every opponent opened with one mark
    for _ in range(6):
        _, _, _, _, info = vec.step(np.argmax(vec.action_masks(), axis=1))
        assert (info["board"][~vec.ended] != 0).sum(axis=1).max() <= 9
    assert all(s.observation_space == vec.single_observation_space for s in singles)


@pytest.mark.parametrize("answer", [np.array(4), np.array([4]), np.int8(4)])
def test_opponents_answers_are_cells_by_the_single_envs_rule(answer):
    """The single env takes 0-d and one-element arrays as cells from an opponent; so does the
    vector env, asking board by board or in one batch."""
    for policy in (lambda obs, mask: answer, _Batched(answer)):
        vec = TicTacToeVectorEnv(2, opponent=PolicyOpponent(policy), agent_mark="O")
        _, info = vec.reset(seed=0)
        assert (info["board"][:, 4] == game.X).all()
    single = TicTacToeEnv(opponent=PolicyOpponent(lambda obs, mask: answer), agent_mark="O")
    assert single.reset(seed=0)[1]["board"][4] == game.X


class _Batched:
    """A policy whose batched answer is one ``answer`` per board, in a list."""

    def __init__(self, answer) -> None:
        self.answer = answer

    def __call__(self, obs, mask):
        return self.answer

    def act_batch(self, observations, masks):
        return [self.answer] * len(observations)


def test_a_policy_opponent_answering_nonsense_is_named_in_the_vector_env():
    vec = TicTacToeVectorEnv(2, opponent=PolicyOpponent(lambda obs, mask: 4.5), agent_mark="O")
    with pytest.raises(RuntimeError, match=r"played 4\.5; legal moves"):
        vec.reset(seed=0)


class _Counted:
    """A deterministic policy (minimax's lowest value-keeping cell) that counts how it is asked."""

    def __init__(self, batched: bool) -> None:
        self.calls, self.boards = 0, 0
        if batched:
            self.act_batch = self._act_batch

    def __call__(self, obs, mask):
        return int(self._act_batch(np.asarray(obs)[None], np.asarray(mask)[None])[0])

    def _act_batch(self, observations, masks):
        self.calls, self.boards = self.calls + 1, self.boards + len(observations)
        codes = np.asarray(observations, dtype=np.int64) @ T3.pow3  # the policy's own view
        return solver.solve(game.TICTACTOE).best_of(codes, game.X).argmax(axis=1)


def test_a_batched_policy_opponent_is_asked_once_per_step_with_the_same_replies():
    runs = {}
    for batched in (False, True):
        policy = _Counted(batched)
        vec = TicTacToeVectorEnv(16, opponent=PolicyOpponent(policy), agent_mark="random")
        obs, _ = vec.reset(seed=3)
        boards, rng = [obs], np.random.default_rng(0)
        for _ in range(12):
            boards.append(vec.step(choose_actions(rng, vec.action_masks()))[0])
        runs[batched] = (np.stack(boards), policy.calls, policy.boards)
    np.testing.assert_array_equal(runs[True][0], runs[False][0])
    assert runs[True][2] == runs[False][2] > runs[True][1]  # same boards, fewer calls


def test_a_table_with_illegal_moves_is_rejected():
    class Cheater(TableOpponent):
        table = np.ones((T3.n_codes, T3.n_cells), dtype=bool)

    with pytest.raises(ValueError, match="legal moves only"):
        TicTacToeVectorEnv(2, opponent=Cheater())


def test_render_ansi_gives_one_text_board_per_env():
    vec = TicTacToeVectorEnv(3, opponent="minimax", agent_mark="O", render_mode="ansi")
    vec.reset(seed=0)
    assert vec.render() == tuple(rendering.ansi(int(code)) for code in vec.codes)
    with pytest.warns(UserWarning, match="render_mode=None"):
        assert TicTacToeVectorEnv(1).render() is None


def replies(opponent: Any, codes: np.ndarray, seed: int = 0) -> np.ndarray:
    player = vectorize_opponent(opponent, len(codes), T3)
    boards, rng = np.arange(len(codes)), np.random.default_rng(seed)
    player.reset(boards, rng)
    batch = new_batch(T3, len(codes), np.full(len(codes), game.X, dtype=np.int8))
    batch.place(boards, T3.cells_of(codes), codes.astype(np.int64))
    return player.reply(batch, boards, rng)


def test_minimax_replies_are_solver_best_and_break_ties_at_random():
    codes = np.repeat(PLAYING, 20)
    cells = replies("minimax", codes)
    assert solver.solve().best[codes, cells].all()
    assert set(replies("minimax", np.zeros(2000, dtype=np.int64)).tolist()) == set(range(9))
    deterministic = replies(MinimaxOpponent(deterministic=True), PLAYING)
    assert (deterministic == solver.solve().best[PLAYING].argmax(axis=1)).all()


def test_heuristic_replies_follow_its_table():
    codes = np.repeat(PLAYING, 10)
    assert heuristic.table(T3)[codes, replies("heuristic", codes)].all()


def test_random_replies_are_legal_cover_every_legal_cell_and_are_uniform():
    codes = np.repeat(PLAYING, 200)
    cells = replies("random", codes)
    assert T3.tables.legal_mask[codes, cells].all()
    played = np.zeros((T3.n_codes, 9), dtype=bool)
    played[codes, cells] = True
    assert (played[PLAYING] == T3.tables.legal_mask[PLAYING].astype(bool)).all()
    counts = np.bincount(replies("random", np.zeros(90_000, dtype=np.int64)), minlength=9)
    assert np.abs(counts - 10_000).max() < 500  # about 5 standard deviations


def test_epsilon_plays_a_random_move_at_the_right_rate():
    inner = MinimaxOpponent(deterministic=True)
    assert replies(inner, np.zeros(5, dtype=np.int64)).tolist() == [0] * 5
    cells = replies(EpsilonOpponent(0.3, inner), np.zeros(40_000, dtype=np.int64))
    assert abs((cells != 0).mean() - 0.3 * 8 / 9) < 0.012  # about 5 standard deviations
    assert (replies(EpsilonOpponent(0.0, inner), np.zeros(100, dtype=np.int64)) == 0).all()


def test_mixture_draws_one_player_per_board_per_episode():
    n = 2000
    mixture = MixtureOpponent([RandomOpponent(deterministic=True), Highest()], weights=[1, 3])
    vec = TicTacToeVectorEnv(n, opponent=mixture, agent_mark="O")
    _, info = vec.reset(seed=0)
    openings = [info["opponent_action"]]
    assert set(openings[0].tolist()) == {0, 8} and 0.7 < (openings[0] == 8).mean() < 0.8
    _, _, _, _, info = vec.step(np.full(n, 4))  # the same player answers within the episode
    assert (info["opponent_action"] == np.where(openings[0] == 0, 1, 7)).all()
    for _ in range(8):
        vec.step(np.full(n, -1))  # every board loses, then autoresets with a new draw
        openings.append(vec.step(np.zeros(n, dtype=int))[4]["opponent_action"])
    saw_both = (np.stack(openings) == 0).any(axis=0) & (np.stack(openings) == 8).any(axis=0)
    assert saw_both.mean() > 0.8


# --- inputs the single env handles, handled the same here --------------------------------------


def test_object_arrays_of_actions_are_judged_entry_by_entry():
    lose = TicTacToeVectorEnv(3, illegal_action="lose")
    lose.reset(seed=0)
    _, rewards, _, _, info = lose.step(np.array([0, 1, "x"], dtype=object))
    assert info["illegal_action"].tolist() == [False, False, True] and rewards[2] == -1.0
    strict = TicTacToeVectorEnv(2, illegal_action="raise")
    strict.reset(seed=0)
    strict.step(np.array([0, np.int64(1)], dtype=object))  # legal ints in an object array
    with pytest.raises(ValueError, match=r"illegal action 2\.5 on board 0"):
        strict.step(np.array([2.5, 2], dtype=object))


@pytest.mark.parametrize("options", [["O"], "O", 3])
def test_reset_options_must_be_a_dict(options):
    vec = TicTacToeVectorEnv(2)
    with pytest.raises(ValueError, match="options must be a dict such as"):
        vec.reset(seed=0, options=options)


@pytest.mark.parametrize("num_envs", [2**63, 2**40, 2**24 + 1])
def test_num_envs_has_a_limit(num_envs):
    with pytest.raises(ValueError, match=r"num_envs must be an integer from 1 to 16,777,216"):
        TicTacToeVectorEnv(num_envs)


@pytest.mark.parametrize(("size", "num_envs", "message"), [
    ((15, 15, 5), 2**24, r"num_envs=16,777,216 boards of 15x15x5 would take about 61\.5 GB "
                         r"\(3,664 bytes a board\); the limit is 4 GiB: at most 1,172,207"),
    ((6, 6, 4), 7_000_000, r"boards of 6x6x4 would take about 4\.5 GB"),
])
def test_num_envs_beyond_the_memory_budget_is_refused(size, num_envs, message):
    """Refused before anything is allocated (issue 16: 2**24 boards of 15x15 needed 45 GB)."""
    with pytest.raises(ValueError, match=message):
        rows, cols, k = size
        TicTacToeVectorEnv(num_envs, rows=rows, cols=cols, win_length=k)


def _stepping_peak(num_envs: int, size: tuple[int, int, int], opponent: str) -> int:
    rows, cols, k = size
    tracemalloc.start()
    try:
        env = TicTacToeVectorEnv(num_envs, opponent, start="random", start_probability=0.5,
                                 rows=rows, cols=cols, win_length=k)
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        for _ in range(3):
            masks = env.action_masks()
            env.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(("size", "opponent"), [((3, 3, 3), "minimax"),
                                                ((15, 15, 5), "random")])
def test_the_memory_estimate_covers_what_a_board_takes(size, opponent, monkeypatch):
    """What one more board adds to the peak of a reset and three steps (tracemalloc, fixed costs
    such as tables cancelling out) stays within ``memory_needed`` for one board. Random starts
    work in chunks of a fixed size (a fixed cost too): small ones here, so that both batches
    use several."""
    monkeypatch.setattr(starts, "START_CHUNK_BYTES", 2**20)
    _stepping_peak(64, size, opponent)  # tables and caches built once
    small, large = _stepping_peak(1024, size, opponent), _stepping_peak(4096, size, opponent)
    assert (large - small) / 3072 <= memory_needed(1, game.rules(*size))


# --- exploring starts ---------------------------------------------------------------------------


def relative(boards: np.ndarray, agents: np.ndarray) -> np.ndarray:
    return np.where(agents[:, None] == game.X, boards, game.SWAP[boards])


def check_random_starts(rules: game.Rules, obs, info, boards: np.ndarray) -> None:
    """``boards`` began episodes at unfinished positions, their agents to move there."""
    cells = info["board"][boards]
    marks = (cells != 0).sum(axis=1)
    assert (info["agent_mark"][boards] == np.where(marks % 2 == 0, game.X, game.O)).all()
    assert not info["_opponent_action"][boards].any()
    assert not any(rules.is_terminal(rules.encode(board)) for board in cells)
    assert np.array_equal(info["action_mask"][boards], (cells == 0).astype(np.int8))


@pytest.mark.parametrize("size", [(3, 3, 3), (1, 13, 3), (6, 6, 4)])
def test_random_starts_begin_every_episode_and_play_on_by_the_rules(size):
    rules = game.rules(*size)
    kwargs = dict(zip(("rows", "cols", "win_length"), size, strict=True))
    vec = TicTacToeVectorEnv(64, opponent="random", start="random", **kwargs)
    obs, info = vec.reset(seed=0)
    check_random_starts(rules, obs, info, np.arange(64))
    assert len({int((board != 0).sum()) for board in info["board"]}) > 3
    rng, ended, restarted = np.random.default_rng(1), np.zeros(64, bool), 0
    for _ in range(40):
        actions = np.argmax(rng.random(info["action_mask"].shape) + info["action_mask"], axis=1)
        obs, _, terminated, _, info = vec.step(actions)
        assert np.array_equal(obs, relative(info["board"], info["agent_mark"]))
        check_random_starts(rules, obs, info, np.flatnonzero(ended))
        for board in np.flatnonzero(terminated):
            winner = rules.winner(rules.encode(info["board"][board]))
            assert info["winner"][board] == winner
        restarted += ended.sum()
        ended = terminated
    assert restarted > 64  # boards went through autoresets, each to a random start


def test_vector_random_starts_are_uniform_over_the_unfinished_positions():
    rules = game.rules(1, 3, 2)  # ten unfinished positions
    vec = TicTacToeVectorEnv(5000, start="random", rows=1, cols=3, win_length=2)
    _, info = vec.reset(seed=0)
    counts = np.unique(info["board"] @ rules.pow3, return_counts=True)[1]
    assert counts.size == 10 and (np.abs(counts - 500) < 100).all()


def test_vector_start_probability_and_the_start_option():
    vec = TicTacToeVectorEnv(4000, start="random", start_probability=0.25, agent_mark="X")
    _, info = vec.reset(seed=0)
    assert 0.23 < info["board"].any(axis=1).mean() < 0.27  # sd 0.007
    made = gym.make_vec("TicTacToe-v0", num_envs=8, vectorization_mode="vector_entry_point",
                        start="random", start_probability=0.5)
    assert (made.start, made.start_probability) == ("random", 0.5)
    plain = TicTacToeVectorEnv(8, agent_mark="X")
    _, info = plain.reset(seed=0, options={"start": "random"})
    assert info["board"].any(axis=1).sum() >= 7
    mask = np.array([True, False] * 4)
    _, info = plain.reset(options={"start": "empty", "reset_mask": mask})
    assert not info["board"][mask].any() and info["board"][~mask].any(axis=1).sum() >= 3
    plain.step(np.argmax(info["action_mask"], axis=1))
    _, info = plain.reset(options={"reset_mask": ~mask})  # the env's own start again: empty
    assert not info["board"][~mask].any()


@pytest.mark.parametrize("agent_mark", ["X", "O", "random"])
def test_the_vector_default_start_draws_exactly_what_it_drew_before(agent_mark):
    make = lambda **kw: TicTacToeVectorEnv(  # noqa: E731
        8, opponent="random+epsilon:epsilon=0.3+minimax*2", agent_mark=agent_mark, **kw)
    expected = rollout(make(), 3)
    for kwargs in ({"start": "empty"}, {"start": "random", "start_probability": 0.0}):
        assert data_equivalence(rollout(make(**kwargs), 3), expected, exact=True)


def test_a_default_vector_reset_takes_nothing_from_the_seeded_generator():
    for kwargs in ({}, {"start": "empty"}, {"start": "random", "start_probability": 0.0}):
        vec = TicTacToeVectorEnv(4, opponent="heuristic", agent_mark="X", **kwargs)
        vec.reset(seed=5)
        fresh, _ = gym.utils.seeding.np_random(5)
        assert vec.np_random.bit_generator.state == fresh.bit_generator.state


def test_vector_random_starts_are_seeded():
    make = lambda: TicTacToeVectorEnv(8, start="random", start_probability=0.5)  # noqa: E731
    assert data_equivalence(rollout(make(), 3), rollout(make(), 3), exact=True)
    assert not data_equivalence(rollout(make(), 3), rollout(make(), 4), exact=True)


def test_weighted_starts_draw_in_proportion_and_follow_set_start_weights():
    rules = game.rules(1, 3, 2)  # ten unfinished positions, start_codes in a fixed order
    codes = starts.start_codes(rules)
    weights = np.zeros(codes.size)
    weights[[2, 7]] = [1.0, 3.0]
    vec = TicTacToeVectorEnv(4000, start="random", rows=1, cols=3, win_length=2,
                             start_weights=weights)
    _, info = vec.reset(seed=0)
    drawn, counts = np.unique(info["board"] @ rules.pow3, return_counts=True)
    assert set(drawn) == {codes[2], codes[7]}
    assert abs(counts[list(drawn).index(codes[7])] - 3000) < 100  # sd 27
    check_random_starts(rules, None, info, np.arange(4000))
    vec.set_start_weights([1.0], codes=[codes[4]])  # the following episodes only
    _, info = vec.reset(seed=1)
    assert (info["board"] @ rules.pow3 == codes[4]).all()
    vec.set_start_weights(None)  # uniform again
    _, info = vec.reset(seed=0)
    assert np.unique(info["board"] @ rules.pow3).size == 10


@pytest.mark.parametrize("scale", [1e308, 1e-320])
def test_weights_near_the_float_limits_draw_in_proportion(scale):
    """np.full(4520, 1e308) summed to inf: every board started from one position."""
    rules = game.rules(1, 3, 2)
    weights = np.full(starts.start_codes(rules).size, scale)
    weights[3] = 0.0
    drawn = starts.StartWeights(rules, weights).draw(np.random.default_rng(0), 9000)
    codes, counts = np.unique(drawn, return_counts=True)
    assert codes.size == 9 and starts.start_codes(rules)[3] not in codes
    assert counts.min() > 850  # 1,000 each, sd 30


def test_weighted_starts_are_drawn_by_autoresets_too():
    last = starts.start_codes(game.TICTACTOE)[-2:]  # one move left: each episode ends at once
    vec = TicTacToeVectorEnv(16, start="random", start_weights=starts.StartWeights(
        game.TICTACTOE, [1.0], [last[0]]))
    _, info = vec.reset(seed=0)
    assert (info["board"] @ game.TICTACTOE.pow3 == last[0]).all()
    vec.set_start_weights([1.0], codes=[last[1]])
    _, _, terminated, _, _ = vec.step(np.argmax(vec.action_masks(), axis=1))
    assert terminated.all()
    _, _, _, _, info = vec.step(np.zeros(16, dtype=np.int64))  # every board autoresets
    assert (info["board"] @ game.TICTACTOE.pow3 == last[1]).all()


FINISHED = 1 + 3 + 9 + 2 * 27 + 2 * 81  # XXX / OO. / ...: X has won


@pytest.mark.parametrize(
    ("weights", "codes", "error", "message"),
    [
        (np.ones(3), None, ValueError, r"start weights must have shape \(4520,\), one per "
                                       r"position of start_codes\(rules\), got shape \(3,\)"),
        (np.ones((2, 4520)), None, ValueError, r"must be a 1-D array; got shape \(2, 4520\)"),
        (-np.ones(4520), None, ValueError, r"finite numbers >= 0, not all 0; got -1.0"),
        (np.full(4520, np.nan), None, ValueError, r"finite numbers >= 0.*NaN: True"),
        (np.zeros(4520), None, ValueError, r"not all 0"),
        ([], np.zeros(0, np.int64), ValueError, r"not all 0; got 0.0 to 0.0"),
        (["a"] * 4520, None, TypeError, r"start weights must be an array of numbers"),
        ([1.0], [FINISHED], ValueError, rf"unfinished positions; code {FINISHED} .* finished"),
        ([1.0, 1.0], [1, 13], ValueError, r"reachable positions of 3x3x3; code 13"),
        ([1.0], [3**9], ValueError, r"reachable positions of 3x3x3; code 19683"),
        ([1.0], [0.5], TypeError, r"start codes must be an array of integers"),
        ([1.0, 2.0], [1], ValueError, r"must have shape \(1,\), one per position of codes"),
    ],
)
def test_bad_start_weights_say_what_is_allowed(weights, codes, error, message):
    vec = TicTacToeVectorEnv(2, start="random")
    with pytest.raises(error, match=message):
        vec.set_start_weights(weights, codes)
    with pytest.raises(error, match=message):
        TicTacToeVectorEnv(2, start="random", start_weights=starts.StartWeights(
            game.TICTACTOE, weights, codes))
    with pytest.raises(ValueError, match="start weights for 1x3x2 given to a vector env of 3x3x"):
        vec.set_start_weights(starts.StartWeights(game.rules(1, 3, 2), [1.0], [0]))
    with pytest.raises(ValueError, match=r"at most 16 cells, whose .*; 5x5x4 has 25: leave"):
        TicTacToeVectorEnv(2, rows=5, cols=5, win_length=4, start_weights=[1.0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"start": "anywhere"}, r"start must be one of \['empty', 'random'\]; got 'anywhere'"),
        ({"start_probability": 2}, r"start_probability must be a number in \[0, 1\]; got 2"),
        ({"start_probability": None}, r"in \[0, 1\]; got None"),
    ],
)
def test_bad_start_arguments_fail_at_vector_construction(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TicTacToeVectorEnv(2, **kwargs)
    vec = TicTacToeVectorEnv(2)
    with pytest.raises(ValueError, match=r"options\['start'\] must be one of"):
        vec.reset(seed=0, options={"start": kwargs.get("start", 0.5)})
