"""TicTacToe-v0 against its contract (DESIGN.md): checkers, seeding, rewards, bad input."""

import subprocess
import sys
import warnings
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence
from hypothesis import given, settings
from hypothesis import strategies as st

import gym_tictactoe  # noqa: F401  (registers TicTacToe-v0)
from gym_tictactoe import game
from gym_tictactoe.envs.env import TicTacToeEnv


class Scripted:
    """An opponent that plays a fixed list of cells."""

    def __init__(self, moves):
        self.moves = list(moves)

    def reset(self, rng):
        self.left = iter(self.moves)

    def act(self, board, mark, rng):
        return next(self.left)


# The documented info: every key on every reset and step, each of one type, never None.
INFO_TYPES = {"action_mask": np.ndarray, "agent_mark": str, "board": np.ndarray,
              "opponent_action": int, "winner": str, "illegal_action": bool}


@pytest.mark.parametrize("agent_mark", ["X", "O", "random"])
def test_gymnasium_and_sb3_checkers_pass_without_warnings(agent_mark):
    pytest.importorskip("stable_baselines3")  # the [sb3] extra
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gym.make("TicTacToe-v0", agent_mark=agent_mark, opponent="minimax")
        check_env(env.unwrapped)
        sb3_check_env(TicTacToeEnv(agent_mark=agent_mark, opponent="heuristic"))


@pytest.mark.e2e
def test_registered_id_works_without_importing_the_package_first():
    code = "import gymnasium; print(gymnasium.make('gym_tictactoe:TicTacToe-v0').reset()[0])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[0 0 0 0 0 0 0 0 0]"
    assert gym.spec("TicTacToe-v0").entry_point == "gym_tictactoe.envs.env:TicTacToeEnv"


def rollout(env, seed, n_episodes=6):
    """Observations, rewards, flags and infos of seeded episodes with seeded random legal moves."""
    rng = np.random.default_rng(seed)
    trace = [env.reset(seed=seed)]
    for _ in range(n_episodes):
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(trace[-1][-1]["action_mask"])))
            step = env.step(action)
            trace.append(step)
            done = step[2] or step[3]
        trace.append(env.reset())
    return trace


@pytest.mark.parametrize("opponent", ["random", "minimax", "montecarlo", "epsilon",
                                      "mcts:max_simulations=100"])
def test_same_seed_same_episodes(opponent):
    make = lambda: gym.make("TicTacToe-v0", opponent=opponent, agent_mark="random")  # noqa: E731
    first, second = rollout(make(), seed=3), rollout(make(), seed=3)
    assert data_equivalence(first, second, exact=True)
    assert not data_equivalence(first, rollout(make(), seed=4), exact=True)


def test_step_returns_python_types_and_the_documented_info():
    env = TicTacToeEnv(opponent="random")
    obs, info = env.reset(seed=0)
    assert obs.dtype == np.int8 and obs.tolist() == [0] * 9
    assert set(info) == INFO_TYPES.keys()
    assert info["action_mask"].dtype == np.int8 and info["agent_mark"] == "X"
    assert (info["opponent_action"], info["winner"], info["illegal_action"]) == (-1, "", False)
    obs, reward, terminated, truncated, info = env.step(4)
    assert type(reward) is float and type(terminated) is bool and type(truncated) is bool
    assert obs[4] == 1 and (obs == 2).sum() == 1 and info["board"][4] == game.X
    assert obs[info["opponent_action"]] == 2 and info["action_mask"].sum() == 7


def test_observation_is_relative_to_the_agent():
    env = TicTacToeEnv(opponent=Scripted([0, 1, 2]), agent_mark="O")
    obs, info = env.reset(seed=0)
    assert obs.tolist() == [2, 0, 0, 0, 0, 0, 0, 0, 0]
    assert info["board"].tolist() == [1, 0, 0, 0, 0, 0, 0, 0, 0] and info["agent_mark"] == "O"
    obs, *_ = env.step(4)
    assert obs.tolist() == [2, 2, 0, 0, 1, 0, 0, 0, 0]


def test_opponent_win_on_its_reply_ends_the_same_step_with_minus_one():
    env = TicTacToeEnv(opponent=Scripted([3, 4, 5]), agent_mark="X")
    env.reset(seed=0)
    assert env.step(0)[1:3] == (0.0, False)
    assert env.step(1)[1:3] == (0.0, False)
    _, reward, terminated, truncated, info = env.step(8)
    assert (reward, terminated, truncated, info["winner"]) == (-1.0, True, False, "O")
    assert info["action_mask"].sum() == 0 and not env.action_masks().any()


def test_opponent_filling_the_board_ends_the_same_step_in_a_draw():
    env = TicTacToeEnv(opponent=Scripted([0, 8, 7, 2, 3]), agent_mark="O")
    env.reset(seed=0)
    for action in (4, 1, 6):
        assert env.step(action)[1:3] == (0.0, False)
    obs, reward, terminated, _, info = env.step(5)
    assert (reward, terminated, info["winner"]) == (0.0, True, "")
    assert (obs != 0).all()


def test_agent_win_gives_plus_one():
    env = TicTacToeEnv(opponent=Scripted([3, 4]), agent_mark="X")
    env.reset(seed=0)
    env.step(0), env.step(1)
    _, reward, terminated, _, info = env.step(2)
    assert (reward, terminated, info["winner"]) == (1.0, True, "X")
    assert info["opponent_action"] == -1 and info["illegal_action"] is False


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"opponent": "perfect"},
         r"unknown opponent 'perfect'; choose one of \['alphabeta', 'epsilon', "),
        ({"opponent": 3}, "object with act"),
        ({"agent_mark": "x"}, r"agent_mark must be one of \['X', 'O', 'random'\]; got 'x'"),
        ({"agent_mark": np.array(["X", "O"])}, r"agent_mark must be one of .*; got array"),
        ({"illegal_action": ["lose"]}, r"illegal_action must be one of .*; got \['lose'\]"),
        ({"illegal_action": "ignore"}, r"illegal_action must be one of \['lose', 'raise'\]"),
        ({"render_mode": "rgb"}, r"render_mode must be one of \[None, 'human', 'ansi', "),
    ],
)
def test_bad_arguments_fail_at_construction_listing_the_choices(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TicTacToeEnv(**kwargs)
    with pytest.raises(ValueError, match=message), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gym.make's own warning about an unknown render_mode
        gym.make("TicTacToe-v0", **kwargs)


@pytest.mark.parametrize("action", [9, -1, 2.0, "4", None, True, np.array([1, 2])])
def test_malformed_actions_under_raise(action):
    env = TicTacToeEnv(illegal_action="raise")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"illegal action .*: legal moves are \[0, 1, 2, 3, 4, 5"):
        env.step(action)


def test_occupied_cell_under_raise_names_the_move_and_the_legal_ones():
    env = TicTacToeEnv(opponent=Scripted([0, 2]), illegal_action="raise")
    env.reset(seed=0)
    env.step(4)
    with pytest.raises(ValueError, match=r"illegal action 0: legal moves are \[1, 2, 3, 5, 6, 7"):
        env.step(0)
    assert env.step(np.int64(1))[2] is False  # the env is still usable after the error


@pytest.mark.parametrize("action", [9, 2.0, 4])
def test_illegal_actions_under_lose_end_the_episode(action):
    env = TicTacToeEnv(opponent=Scripted([0]), agent_mark="O")
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(0 if action == 4 else action)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    assert info["winner"] == "X"
    assert obs.tolist() == [2] + [0] * 8 and not info["action_mask"].any()


def test_accepted_action_types():
    for action in (4, np.int64(4), np.array(4), np.array([4])):
        env = TicTacToeEnv()
        env.reset(seed=0)
        assert env.step(action)[0][4] == 1


def test_step_after_the_end_or_before_reset_says_to_call_reset():
    env = TicTacToeEnv(opponent=Scripted([0]), agent_mark="O")
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step(0)
    env.reset(seed=0)
    env.step(0)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step(1)


def test_an_opponent_that_plays_illegally_is_named():
    env = TicTacToeEnv(opponent=Scripted([4, 4]))
    env.reset(seed=0)
    with pytest.raises(RuntimeError, match=r"opponent .*Scripted.* played 4; legal moves"):
        env.step(4)


def test_set_opponent_and_reset_options():
    env = TicTacToeEnv(opponent="random")
    env.set_opponent(Scripted([8]))
    _, info = env.reset(seed=0, options={"agent_mark": "O"})
    assert info["agent_mark"] == "O" and info["board"][8] == game.X
    with pytest.raises(ValueError, match="agent_mark must be one of"):
        env.reset(options={"agent_mark": "Z"})


def test_random_seat_is_drawn_each_episode_from_the_seed():
    env = TicTacToeEnv(agent_mark="random")
    seats = [env.reset(seed=s)[1]["agent_mark"] for s in range(40)]
    assert set(seats) == {"X", "O"}
    assert seats == [env.reset(seed=s)[1]["agent_mark"] for s in range(40)]


def test_perfect_opponent_is_never_beaten_by_a_random_agent():
    env = gym.make("TicTacToe-v0", opponent="minimax", agent_mark="random")
    rewards = [r[1] for r in rollout(env, seed=0, n_episodes=300) if len(r) == 5 and (r[2] or r[3])]
    assert len(rewards) == 300 and max(rewards) <= 0.0 and min(rewards) == -1.0


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    agent_mark=st.sampled_from(["X", "O"]),
    opponent=st.sampled_from(["random", "minimax", "heuristic"]),
    actions=st.lists(st.integers(-1, 9), min_size=1, max_size=12),
)
def test_any_action_sequence_keeps_the_invariants(seed, agent_mark, opponent, actions):
    env = TicTacToeEnv(opponent=opponent, agent_mark=agent_mark)
    obs, info = env.reset(seed=seed)
    previous = info["board"]
    for action in actions:
        if env.done:
            with pytest.raises(RuntimeError):
                env.step(action)
            break
        obs, reward, terminated, truncated, info = env.step(action)
        board = info["board"]
        n_x, n_o = int((board == 1).sum()), int((board == 2).sum())
        assert n_x - n_o in (0, 1)  # marks alternate, X first
        assert ((previous != 0) <= (board == previous)).all()  # marks never change or vanish
        assert reward == 0.0 or terminated  # rewards only at the end
        assert not truncated
        if not terminated:
            assert (info["action_mask"] == (board == 0)).all()
            assert info["winner"] == ""
        assert (obs == (board if agent_mark == "X" else game.SWAP[board])).all()
        previous = board


@pytest.mark.parametrize("render_mode", [0, 1.5, b"ansi", ["ansi"]])
def test_a_render_mode_that_is_no_string_gets_our_message_through_make_too(render_mode):
    message = r"render_mode must be one of \[None, 'human', 'ansi', 'rgb_array'\]; got "
    with pytest.raises(ValueError, match=message):
        TicTacToeEnv(render_mode=render_mode)
    with pytest.raises(ValueError, match=message):  # Gymnasium's make used to fail inside
        gym.make("TicTacToe-v0", render_mode=render_mode)


def test_gymnasium_render_mode_conveniences_still_work():
    env = gym.make("TicTacToe-v0", render_mode="rgb_array_list")  # RenderCollection
    env.reset(seed=0)
    assert len(env.render()) == 1


# --- exploring starts ---------------------------------------------------------------------------


def start_pool(rules):
    """Every reachable unfinished position, found by playing out every game (independent of
    gym_tictactoe.game.starts); only for small boards."""
    seen, frontier = set(), [0]
    while frontier:
        code = frontier.pop()
        if code in seen or rules.is_terminal(code):
            continue
        seen.add(code)
        frontier += [rules.play(code, cell) for cell in rules.legal_moves(code)]
    return seen


def start_of(info, rules):
    """The code of the board at a reset, and the side to move there by counting marks."""
    board = info["board"]
    return rules.encode(board), "X" if (board != 0).sum() % 2 == 0 else "O"


@pytest.mark.parametrize("size", [(3, 3, 3), (1, 13, 3), (6, 6, 4)])
def test_random_start_env_passes_the_checkers(size):
    pytest.importorskip("stable_baselines3")  # the [sb3] extra
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    kwargs = dict(zip(("rows", "cols", "win_length"), size, strict=True), start="random")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make("TicTacToe-v0", opponent="random", **kwargs).unwrapped)
        sb3_check_env(TicTacToeEnv(opponent="heuristic", start_probability=0.5, **kwargs))


def test_random_starts_are_uniform_over_the_unfinished_positions():
    rules = game.rules(1, 3, 2)  # ten unfinished positions: easy to count by hand
    env = TicTacToeEnv(start="random", agent_mark="O", rows=1, cols=3, win_length=2)
    pool = start_pool(rules)
    assert len(pool) == 10
    env.reset(seed=0)
    counts = Counter()
    for _ in range(5000):
        obs, info = env.reset()
        code, mover = start_of(info, rules)
        assert info["agent_mark"] == env.agent_mark == mover  # not the "O" asked for
        assert info["opponent_action"] == -1
        assert np.array_equal(obs, info["board"] if mover == "X" else game.SWAP[info["board"]])
        counts[code] += 1
    assert set(counts) == pool
    assert all(abs(count - 500) < 100 for count in counts.values())  # sd ~21


def test_random_starts_on_3x3_are_reachable_positions_and_the_game_goes_on():
    rules, env = game.TICTACTOE, TicTacToeEnv(start="random", opponent="minimax")
    pool, codes = start_pool(rules), set()
    for seed in range(300):
        _, info = env.reset(seed=seed)
        code, mover = start_of(info, rules)
        assert code in pool and info["agent_mark"] == mover
        assert np.array_equal(info["action_mask"], (info["board"] == 0).astype(np.int8))
        codes.add(code)
        _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        assert info["agent_mark"] == mover
    assert len(codes) > 250  # 300 draws from 4,520 positions rarely repeat


@pytest.mark.parametrize("size", [(1, 13, 3), (6, 6, 4), (15, 15, 5)])
def test_random_starts_on_big_boards_are_unfinished_and_seeded(size):
    kwargs = dict(zip(("rows", "cols", "win_length"), size, strict=True))
    rules, env = game.rules(*size), TicTacToeEnv(start="random", opponent="random", **kwargs)
    marks = set()
    for seed in range(30):
        _, info = env.reset(seed=seed)
        code, mover = start_of(info, rules)
        assert not rules.is_terminal(code) and info["agent_mark"] == mover
        assert np.array_equal(env.reset(seed=seed)[1]["board"], info["board"])
        marks.add(int((info["board"] != 0).sum()))
        done = False
        while not done:  # the game goes on from there under the usual rules
            board = info["board"]
            _, reward, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        winner = info["winner"]
        assert reward == (0 if winner == "" else 1 if winner == info["agent_mark"] else -1)
        assert (winner == "") == (rules.winner(rules.encode(info["board"])) == game.NO_WINNER)
        assert (board != 0).sum() < (info["board"] != 0).sum()
    assert len(marks) > 5  # starts of many lengths


def test_start_probability_mixes_random_and_empty_starts():
    env = TicTacToeEnv(start="random", start_probability=0.3, agent_mark="X")
    env.reset(seed=1)
    started = [env.reset()[1]["board"].any() for _ in range(4000)]
    assert 0.27 < np.mean(started) < 0.33  # sd 0.007; the empty board is 1 in 4,520 starts
    env = TicTacToeEnv(start="random", start_probability=0.0)
    assert not any(env.reset(seed=s)[1]["board"].any() for s in range(50))


def test_the_start_option_overrides_for_one_reset():
    env = TicTacToeEnv(agent_mark="X")
    boards = [env.reset(seed=s, options={"start": "random"})[1]["board"] for s in range(20)]
    assert sum(board.any() for board in boards) >= 19
    assert not env.reset(seed=0)[1]["board"].any()  # the next reset is the env's own start
    env = TicTacToeEnv(start="random", agent_mark="X")
    assert not any(env.reset(seed=s, options={"start": "empty"})[1]["board"].any()
                   for s in range(20))


@pytest.mark.parametrize("opponent", ["random", "minimax", "montecarlo", "random+minimax"])
@pytest.mark.parametrize("agent_mark", ["X", "O", "random"])
def test_the_default_start_draws_exactly_what_it_drew_before(opponent, agent_mark):
    """start="empty" (and start="random" with probability 0) take nothing more from the seeded
    generator: the episodes equal the default env's (whose 3x3 games tests/data pins)."""
    make = lambda **kw: TicTacToeEnv(opponent, agent_mark, **kw)  # noqa: E731
    expected = rollout(make(), seed=5, n_episodes=8)
    for kwargs in ({"start": "empty"}, {"start": "random", "start_probability": 0.0},
                   {"start": "empty", "start_probability": 0.5}):
        assert data_equivalence(rollout(make(**kwargs), seed=5, n_episodes=8), expected,
                                exact=True)


def test_a_default_reset_takes_nothing_from_the_seeded_generator():
    """Seat X against a heuristic opponent draws nothing at reset: neither may the start."""
    for kwargs in ({}, {"start": "empty"}, {"start": "random", "start_probability": 0.0}):
        env = TicTacToeEnv(opponent="heuristic", agent_mark="X", **kwargs)
        env.reset(seed=5)
        fresh, _ = gym.utils.seeding.np_random(5)
        assert env.np_random.bit_generator.state == fresh.bit_generator.state
    env = TicTacToeEnv(opponent="heuristic", agent_mark="X", start="random")
    env.reset(seed=5)
    assert env.np_random.bit_generator.state != fresh.bit_generator.state


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"start": "middle"}, r"start must be one of \['empty', 'random'\]; got 'middle'"),
        ({"start": None}, r"start must be one of \['empty', 'random'\]; got None"),
        ({"start_probability": 1.5}, r"start_probability must be a number in \[0, 1\]; got 1.5"),
        ({"start_probability": -0.1}, r"in \[0, 1\]; got -0.1"),
        ({"start_probability": float("nan")}, r"in \[0, 1\]; got nan"),
        ({"start_probability": "0.5"}, r"in \[0, 1\]; got '0.5'"),
        ({"start_probability": True}, r"in \[0, 1\]; got True"),
    ],
)
def test_bad_start_arguments_fail_at_construction(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TicTacToeEnv(**kwargs)
    with pytest.raises(ValueError, match=message):
        gym.make("TicTacToe-v0", **kwargs)


@pytest.mark.parametrize("start", ["Random", 1, None])
def test_a_bad_start_option_names_the_allowed_ones(start):
    env = TicTacToeEnv()
    with pytest.raises(ValueError, match=r"options\['start'\] must be one of \['empty', "):
        env.reset(seed=0, options={"start": start})


@pytest.mark.parametrize("size", [(3, 3, 3), (6, 6, 4)])
@pytest.mark.parametrize("start", ["empty", "random"])
def test_every_info_has_every_key_with_one_type_on_every_step(size, start):
    kwargs = dict(zip(("rows", "cols", "win_length"), size, strict=True))
    env = TicTacToeEnv(agent_mark="random", start=start, start_probability=0.5, **kwargs)
    rng = np.random.default_rng(0)
    seen = Counter()
    for seed in range(40):
        obs, info = env.reset(seed=seed)
        done = False
        while True:
            assert {key: type(value) for key, value in info.items()} == INFO_TYPES
            seen[info["winner"], info["illegal_action"], info["opponent_action"] >= 0] += 1
            if done:
                break
            legal = np.flatnonzero(info["action_mask"])
            action = int(rng.choice(legal)) if rng.random() < 0.9 else int(obs.argmax())
            obs, _, done, _, info = env.step(action)
    assert {"", "X", "O"} <= {winner for winner, _, _ in seen}  # both sides win sometimes
    assert any(illegal for _, illegal, _ in seen) and len({moved for *_, moved in seen}) == 2


def test_action_masks_through_gym_make_wrappers_as_documented():
    env = gym.make("TicTacToe-v0", opponent=Scripted([0]), agent_mark="O")
    _, info = env.reset(seed=0)
    with pytest.raises(AttributeError):
        env.action_masks()  # Gymnasium 1.x wrappers forward no attributes: the docs say so
    masks = env.get_wrapper_attr("action_masks")()
    assert masks.dtype == bool and masks.tolist() == [False] + [True] * 8
    assert np.array_equal(env.unwrapped.action_masks(), info["action_mask"].view(bool))
