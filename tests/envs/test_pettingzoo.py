"""The two-agent AEC environment (issue 11): PettingZoo's own test suite, games move by move,
illegal moves under each rule, the order of play, bad input, and agreement with PettingZoo's
``tictactoe_v3`` and with a win check written independently (boards_helpers)."""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings
from functools import partial

import numpy as np
import pytest
from boards_helpers import board_kwargs, expected_end
from gymnasium.utils.env_checker import data_equivalence
from missing_packages import BLOCK_IMPORTS, REPO

pettingzoo = pytest.importorskip("pettingzoo", reason="the multiagent extra")
from pettingzoo.classic.tictactoe import tictactoe as tictactoe_v3  # noqa: E402

with warnings.catch_warnings():  # api_test imports connect_four_v3 by PettingZoo's old path
    warnings.filterwarnings("ignore", "The old environment creation API", DeprecationWarning)
    from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils.env_logger import EnvLogger  # noqa: E402
from pettingzoo.utils.wrappers import OrderEnforcingWrapper  # noqa: E402

from gym_tictactoe import game  # noqa: E402
from gym_tictactoe.envs import pettingzoo as pz  # noqa: E402
from gym_tictactoe.envs import picture  # noqa: E402

P1, P2 = "player_1", "player_2"
BOARDS = [(3, 3, 3), (4, 4, 3), (3, 5, 4), (6, 6, 4), (15, 15, 5), (1, 1, 1), (2, 2, 2)]
# api_test exempts PettingZoo's own classic envs from these by name (its lists of envs with dict
# observations); for any other env with tictactoe_v3's observation they are expected.
NAME_KEYED_WARNINGS = {
    "Observation is not a NumPy array",
    "Observation numpy array is all zeros.",
    "Observation space for each agent probably should be gymnasium.spaces.box or "
    "gymnasium.spaces.discrete",
}


def random_game(env, rng: np.random.Generator) -> list:
    """Play one game of uniformly random legal moves: what ``last()`` gave at every turn."""
    env.reset()
    trace = []
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        trace.append((agent, obs, reward, terminated, truncated, info))
        legal = np.flatnonzero(obs["action_mask"])
        env.step(None if terminated or truncated else int(rng.choice(legal)))
    return trace


def grid(text: str) -> np.ndarray:
    """Absolute cells from rows of X, O and '.', e.g. "X.O/.X./..."."""
    return np.array([".XO".index(c) for c in text.replace("/", "")], dtype=np.int8)


@pytest.fixture
def fast_window(monkeypatch):
    """The human window without its frame-rate pause (4 frames a second by default)."""
    monkeypatch.setitem(pz.raw_env.metadata, "render_fps", 10_000)


# --- PettingZoo's own tests ------------------------------------------------------------------

@pytest.mark.parametrize("make", [pz.env, pz.raw_env], ids=["env", "raw_env"])
@pytest.mark.parametrize("size", BOARDS, ids=lambda s: "x".join(map(str, s)))
def test_pettingzoo_api_test_passes_with_only_name_keyed_warnings(make, size):
    cycles = 20 if size == (15, 15, 5) else 200
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(make(**board_kwargs(size)), num_cycles=cycles)
    assert {str(w.message) for w in caught} <= NAME_KEYED_WARNINGS


@pytest.mark.parametrize("size", BOARDS, ids=lambda s: "x".join(map(str, s)))
def test_pettingzoo_seed_test_and_render_test_pass(size, fast_window):
    seed_test(partial(pz.env, **board_kwargs(size)), num_cycles=50)
    render_test(partial(pz.env, **board_kwargs(size)))


def test_max_cycles_test_does_not_apply_games_end_by_themselves():
    # max_cycles_test needs a parallel_env(max_cycles=...): a game needs no cap on its length,
    # which is at most rows * cols moves. Its parallel_env is turn-based (pettingzoo_parallel):
    # the AEC env is not "parallelizable" in aec_to_parallel's sense, all agents at once.
    assert not pz.raw_env.metadata["is_parallelizable"]
    rng = np.random.default_rng(0)
    for size in BOARDS:
        env = pz.env(**board_kwargs(size))
        for _ in range(3 if size == (15, 15, 5) else 20):
            trace = random_game(env, rng)
            assert len(trace) - 2 <= size[0] * size[1] and env.agents == []


# --- games move by move ----------------------------------------------------------------------

GAMES = [  # board, moves, the board after each move, final rewards of player_1 and player_2
    ((3, 3, 3), [0, 3, 1, 4, 2],
     ["X../.../...", "X../O../...", "XX./O../...", "XX./OO./...", "XXX/OO./..."], (1, -1)),
    ((3, 3, 3), [0, 4, 1, 2, 8, 6],
     ["X../.../...", "X../.O./...", "XX./.O./...", "XXO/.O./...", "XXO/.O./..X",
      "XXO/.O./O.X"], (-1, 1)),
    ((3, 3, 3), [4, 0, 8, 2, 1, 7, 6, 3, 5],
     [".../.X./...", "O../.X./...", "O../.X./..X", "O.O/.X./..X", "OXO/.X./..X", "OXO/.X./.OX",
      "OXO/.X./XOX", "OXO/OX./XOX", "OXO/OXX/XOX"], (0, 0)),
    ((2, 3, 2), [1, 0, 4], [".X./...", "OX./...", "OX./.X."], (1, -1)),
    ((4, 4, 3), [5, 6, 9, 13, 1],
     ["..../.X../..../....", "..../.XO./..../....", "..../.XO./.X../....",
      "..../.XO./.X../.O..", ".X../.XO./.X../.O.."], (1, -1)),
    ((1, 1, 1), [0], ["X"], (1, -1)),
]


@pytest.mark.parametrize(("size", "moves", "boards", "rewards"), GAMES)
def test_games_move_by_move(size, moves, boards, rewards):
    env = pz.env(**board_kwargs(size))
    env.reset()
    rows, cols, _ = size
    for n, (cell, board) in enumerate(zip(moves, boards, strict=True)):
        mover = env.agent_selection
        assert mover == (P1, P2)[n % 2]
        assert env.observe(mover)["action_mask"][cell] == 1
        env.step(cell)
        cells = grid(board)
        planes = np.stack([cells == game.X, cells == game.O], axis=-1).reshape(rows, cols, 2)
        assert np.array_equal(env.state(), planes)
        assert np.array_equal(env.observe(P1)["observation"], planes)
        assert np.array_equal(env.observe(P2)["observation"], planes[..., ::-1])
        assert not env.observe(mover)["action_mask"].any()  # not its turn now
        over = n == len(moves) - 1
        assert env.terminations == {P1: over, P2: over} and not any(env.truncations.values())
        if not over:
            assert np.array_equal(env.observe(env.agent_selection)["action_mask"],
                                  (cells == game.EMPTY).astype(np.int8))
    assert (env.rewards[P1], env.rewards[P2]) == rewards
    info = {"winner": {1: game.X, -1: game.O, 0: game.NO_WINNER}[rewards[0]],
            "illegal_action": False}
    assert env.infos == {P1: info, P2: info}


def test_both_agents_step_none_after_the_end_and_get_their_rewards():
    env = pz.env()
    env.reset()
    for cell in (0, 3, 1, 4, 2):
        env.step(cell)
    seen = []
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        assert terminated and not truncated and not obs["action_mask"].any()
        seen.append((agent, reward))
        env.step(None)
    assert seen == [(P2, -1.0), (P1, 1.0)] and env.agents == []


# --- illegal moves ---------------------------------------------------------------------------

BAD_ACTIONS = [0, 9, -1, 1.5, "4", None, True, np.array([1, 2])]


@pytest.mark.parametrize("action", BAD_ACTIONS, ids=repr)
def test_an_illegal_move_under_lose_costs_the_mover_only(action):
    env = pz.env()
    env.reset()
    env.step(0)  # X takes cell 0, so 0 is occupied for O
    env.step(action)
    assert env.rewards == {P1: 0.0, P2: -1.0}  # as PettingZoo's TerminateIllegalWrapper
    assert env.terminations == {P1: True, P2: True} and env.truncations == {P1: False, P2: False}
    assert env.infos[P2] == {"winner": game.X, "illegal_action": True}
    assert env.infos[P1] == {"winner": game.X, "illegal_action": False}
    assert not env.observe(P1)["action_mask"].any() and not env.observe(P2)["action_mask"].any()
    rewards = {}
    for agent in env.agent_iter():
        rewards[agent] = env.last()[1]
        env.step(None)
    assert rewards == {P1: 0.0, P2: -1.0}


@pytest.mark.parametrize("action", BAD_ACTIONS, ids=repr)
def test_an_illegal_move_under_raise_names_it_and_changes_nothing(action):
    env = pz.env(illegal_action="raise")
    env.reset()
    env.step(0)
    before = env.state()
    with pytest.raises(ValueError, match=r"illegal action .* by player_2: legal moves are "
                                         r"\[1, 2, 3, 4, 5, 6, 7, 8\]"):
        env.step(action)
    assert env.agent_selection == P2 and np.array_equal(env.state(), before)
    env.step(4)
    assert env.state()[1, 1, 1] == 1


def test_an_illegal_move_on_a_big_board_ends_the_game_too():
    env = pz.env(rows=15, cols=15, win_length=5)
    env.reset()
    env.step(112)
    env.step(112)
    assert env.rewards == {P1: 0.0, P2: -1.0} and all(env.terminations.values())


@pytest.mark.parametrize("action", [np.int64(4), np.int32(4), np.array(4), np.array([4])],
                         ids=repr)
def test_numpy_integers_are_moves(action):
    env = pz.env()
    env.reset()
    env.step(action)
    assert env.state()[1, 1, 0] == 1 and env.agent_selection == P2


# --- order of play, the end of the game, and bad input ---------------------------------------

def test_only_the_agent_to_move_sees_legal_moves_and_unknown_agents_are_refused():
    env = pz.env()
    env.reset()
    assert env.observe(P1)["action_mask"].all() and not env.observe(P2)["action_mask"].any()
    for call in (env.observe, env.observation_space, env.action_space):
        with pytest.raises(ValueError, match=r"agent must be one of \['player_1', 'player_2'\]"):
            call("X")


def errors_before_reset(env) -> list[str]:
    """The error (type and message) of every call that needs a reset first."""
    found = []
    for call in (lambda: env.step(0), lambda: env.observe(P1), env.render, env.last,
                 env.agent_iter, lambda: env.agent_selection, lambda: env.agents,
                 lambda: env.rewards, lambda: env.infos, lambda: env.num_agents):
        with pytest.raises((AssertionError, AttributeError)) as error:
            call()
        found.append(f"{error.type.__name__}: {error.value}")
    return found


def test_order_enforcement_is_pettingzoos_own():
    ours, theirs = pz.env(render_mode="ansi"), OrderEnforcingWrapper(pz.raw_env(render_mode="ansi"))
    assert isinstance(ours, OrderEnforcingWrapper)
    assert errors_before_reset(ours) == errors_before_reset(theirs)
    assert errors_before_reset(ours)[0] == "AssertionError: reset() needs to be called before step."
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    for _ in range(10):
        assert data_equivalence(random_game(ours, rng_a), random_game(theirs, rng_b))
    ours.reset()
    iterator = iter(ours.agent_iter())
    next(iterator)
    with pytest.raises(AssertionError, match="need to call step"):  # a turn without a move
        next(iterator)


def test_acting_after_the_end_is_an_error_or_pettingzoos_warning():
    env = pz.env()
    env.reset()
    for cell in (0, 3, 1, 4, 2):
        env.step(cell)
    with pytest.raises(ValueError, match=r"the game is over: player_2 is terminated and its "
                                         r"only action is None.*got 5"):
        env.step(5)
    env.step(None)
    env.step(None)
    EnvLogger.flush()
    env.step(None)  # every agent has left: the wrapper warns, as for any PettingZoo env
    assert any("step() called after all agents" in m for m in EnvLogger.mqueue)
    raw = env.unwrapped
    with pytest.raises(RuntimeError, match=r"no game in progress.*call reset\(\)"):
        raw.step(None)
    with pytest.raises(RuntimeError, match=r"call reset\(\)"):
        pz.raw_env().step(0)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"rows": 0}, r"rows must be an integer from 1 to 15; got 0"),
    ({"cols": 16}, r"cols must be an integer from 1 to 15"),
    ({"win_length": 4}, r"win_length must be an integer from 1 to 3"),
    ({"rows": 3.0}, r"rows must be an integer from 1 to 15; got 3.0"),
    ({"illegal_action": "ignore"}, r"illegal_action must be one of \['lose', 'raise'\]"),
    ({"render_mode": "video"}, r"render_mode must be one of \[None, 'human', 'ansi'"),
])
def test_bad_arguments_say_what_is_allowed(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pz.env(**kwargs)


def test_bad_seed_or_options_say_what_is_allowed():
    env = pz.env()
    with pytest.raises(ValueError, match=r"seed must be None or an integer"):
        env.reset(seed=-1)
    with pytest.raises(ValueError, match=r"options must be None or a dict"):
        env.reset(options="fast")


# --- agreement with independent rules and with PettingZoo's tictactoe ------------------------

@pytest.mark.slow
@pytest.mark.parametrize("size", [(3, 3, 3), (4, 4, 3), (3, 5, 4), (4, 4, 4), (6, 6, 4),
                                  (15, 15, 5), (7, 3, 3)], ids=lambda s: "x".join(map(str, s)))
def test_random_games_end_as_the_independent_win_check_says(size):
    env, rng = pz.env(**board_kwargs(size)), np.random.default_rng(1)
    for _ in range(5 if size[0] * size[1] > 100 else 40):
        trace = random_game(env, rng)
        board = env.unwrapped.state()
        cells = board[..., 0].ravel() + 2 * board[..., 1].ravel()
        over, winner = expected_end(cells, size)
        assert over
        rewards = {agent: reward for agent, _, reward, *_ in trace[-2:]}
        expected = {"X": {P1: 1.0, P2: -1.0}, "O": {P1: -1.0, P2: 1.0}, None: {P1: 0.0, P2: 0.0}}
        assert rewards == expected[winner]
        for _, obs, _, terminated, _, _ in trace[:-2]:  # no position before the end was over
            own, other = obs["observation"][..., 0].ravel(), obs["observation"][..., 1].ravel()
            assert not expected_end(own + 2 * other, size)[0] and not terminated


def test_same_games_as_pettingzoos_tictactoe_with_cells_transposed():
    # tictactoe_v3 numbers cells column by column and lays its planes out (col, row).
    ours, theirs = pz.env(), tictactoe_v3.env()
    rng = np.random.default_rng(2)
    for _ in range(100):
        ours.reset()
        theirs.reset()
        for agent, other in zip(ours.agent_iter(), theirs.agent_iter(), strict=True):
            mine, reward, done, _, _ = ours.last()
            yours, their_reward, their_done, _, _ = theirs.last()
            assert agent == other and reward == their_reward and done == their_done
            assert np.array_equal(mine["observation"], yours["observation"].transpose(1, 0, 2))
            cell = None
            if not done:
                assert np.array_equal(mine["action_mask"].reshape(3, 3).T.ravel(),
                                      yours["action_mask"])
                cell = int(rng.choice(np.flatnonzero(mine["action_mask"])))
            ours.step(cell)
            theirs.step(None if cell is None else cell % 3 * 3 + cell // 3)


# --- the rest of the contract ----------------------------------------------------------------

def test_observations_are_fresh_int8_arrays_in_their_spaces():
    env = pz.env(rows=4, cols=5, win_length=3)
    env.reset()
    env.step(7)
    obs = env.observe(P2)
    assert obs["observation"].shape == (4, 5, 2) and obs["observation"].dtype == np.int8
    assert obs["action_mask"].shape == (20,) and obs["action_mask"].dtype == np.int8
    assert env.observation_space(P2).contains(obs)
    obs["observation"][:] = 1
    obs["action_mask"][:] = 0
    again = env.observe(P2)
    assert again["observation"].sum() == 1 and again["action_mask"].sum() == 19


@pytest.mark.parametrize("size", [(3, 3, 3), (2, 5, 2)])
def test_render_modes(size, fast_window):
    rows, cols, _ = size
    text = pz.env(render_mode="ansi", **board_kwargs(size))
    text.reset()
    text.step(1)
    assert text.render().splitlines()[0].split("|")[1].strip() == "(X)"  # the last move
    image = pz.env(render_mode="rgb_array", **board_kwargs(size))
    image.reset()
    empty = image.render()
    image.step(1)
    frame = image.render()
    assert frame.dtype == np.uint8 and frame.shape[2] == 3 and not np.array_equal(frame, empty)
    layout = picture.layout((rows, cols), picture.default_cell_size((rows, cols)))
    assert frame.shape[:2] == (layout.height, layout.width)  # cells square, in a frame
    window = pz.env(render_mode="human", **board_kwargs(size))
    window.reset()
    assert window.render() is None and window.unwrapped._screen.window is not None
    window.close()
    assert window.unwrapped._screen.window is None
    with pytest.warns(UserWarning, match="render_mode=None"):
        quiet = pz.env()
        quiet.reset()
        assert quiet.render() is None


@pytest.mark.skipif(not hasattr(pettingzoo, "make"), reason="PettingZoo's registry: 1.27+")
def test_pettingzoo_make_finds_it_by_id():
    env = pettingzoo.make("aec", pz.ENV_ID, rows=4, cols=4, win_length=3)
    assert isinstance(env, pz.OrderEnforcing) and env.unwrapped.rules.size == (4, 4, 3)


def test_raw_env_pickles_with_its_arguments():
    env = pickle.loads(pickle.dumps(pz.raw_env(rows=4, cols=4, win_length=3,
                                               illegal_action="raise")))
    assert env.rules.size == (4, 4, 3) and env.illegal_action == "raise"


@pytest.mark.e2e
def test_the_core_never_imports_pettingzoo():
    code = ("import sys, pkgutil, importlib, gym_tictactoe\n"
            "for m in pkgutil.iter_modules(gym_tictactoe.__path__):\n"
            "    if not m.name.startswith('pettingzoo') and m.name != '__main__':\n"
            "        try: importlib.import_module('gym_tictactoe.' + m.name)\n"
            "        except ImportError: pass\n"
            "print('pettingzoo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "False"


@pytest.mark.e2e
def test_without_the_extra_the_import_error_names_it():
    code = BLOCK_IMPORTS + "import gym_tictactoe.envs.pettingzoo"
    out = subprocess.run([sys.executable, "-c", code, "pettingzoo"], cwd=REPO,
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert "MissingExtra: gym_tictactoe.envs.pettingzoo needs pettingzoo" in last
    assert 'pip install ".[multiagent]"' in last


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
def test_the_multiagent_extra_brings_pettingzoo_and_all_includes_it():
    import tomllib

    with open(REPO / "pyproject.toml", "rb") as file:
        extras = tomllib.load(file)["project"]["optional-dependencies"]
    assert extras["multiagent"] == ["pettingzoo>=1.24"]
    assert "multiagent" in extras["all"][0].partition("[")[2]


def test_the_speed_benchmark_counts_every_move_of_a_game():
    from benchmarks import pettingzoo_speed

    sizes = {pettingzoo_speed.OURS: (3, 3, 3), pettingzoo_speed.PEER: (3, 3, 3),
             **{f"gym-tictactoe AEC {label}": size for label, size in pettingzoo_speed.BIG.items()}}
    for contenders in pettingzoo_speed.groups().values():
        for name, factory in contenders.items():
            play = factory()
            rows, cols, k = sizes[name]
            for _ in range(3):  # a game has at least 2k - 1 moves (X's k and O's k - 1)
                assert 2 * k - 1 <= play() <= rows * cols
    assert all(target[1] in pettingzoo_speed.groups() for target in pettingzoo_speed.TARGETS)
