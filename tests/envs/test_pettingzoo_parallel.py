"""The two-agent game under PettingZoo's Parallel API (issue 19): PettingZoo's own
``parallel_api_test`` and ``parallel_seed_test``, the same games as the AEC env, whose turn it is,
and bad input."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from boards_helpers import board_kwargs, expected_end
from missing_packages import BLOCK_IMPORTS, REPO

pettingzoo = pytest.importorskip("pettingzoo", reason="the multiagent extra")
with warnings.catch_warnings():  # pettingzoo.test imports connect_four_v3 by its old path
    warnings.filterwarnings("ignore", "The old environment creation API", DeprecationWarning)
    from pettingzoo.test import parallel_api_test
    from pettingzoo.test.seed_test import parallel_seed_test

from gym_tictactoe import game  # noqa: E402
from gym_tictactoe.envs import pettingzoo as pz  # noqa: E402
from gym_tictactoe.envs import pettingzoo_parallel as pzp  # noqa: E402

P1, P2 = "player_1", "player_2"
BOARDS = [(3, 3, 3), (4, 4, 3), (6, 6, 4), (15, 15, 5), (1, 1, 1), (2, 2, 2)]
IDS = ["x".join(map(str, size)) for size in BOARDS]


@pytest.mark.parametrize("size", BOARDS, ids=IDS)
def test_parallel_api_test_and_parallel_seed_test_pass_without_warnings(size):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel_api_test(pz.parallel_env(**board_kwargs(size)), num_cycles=300)
        parallel_seed_test(lambda: pz.parallel_env(**board_kwargs(size)), num_cycles=300)
    assert [str(w.message) for w in caught] == []


def random_game(env, rng: np.random.Generator, junk: object = None) -> list:
    """A game of random legal moves; the agent not to move is given ``junk``, which it ignores.
    Returns the (board, active agent, cell) of each move and the last step's results."""
    observations, infos = env.reset()
    seen = []
    while env.agents:
        active = infos[P1]["active_agent"]
        assert infos[P2]["active_agent"] == active
        mask = observations[active]["action_mask"]
        other = P2 if active == P1 else P1
        assert mask.any() and not observations[other]["action_mask"].any()
        cell = int(rng.choice(np.flatnonzero(mask)))
        seen.append((env.state().copy(), active, cell))
        actions = {active: cell, other: junk}
        observations, rewards, terminations, truncations, infos = env.step(actions)
    return seen, (observations, rewards, terminations, truncations, infos)


@pytest.mark.parametrize("size", BOARDS, ids=IDS)
def test_random_games_alternate_and_end_as_the_independent_win_check_says(size):
    env, rng = pz.parallel_env(**board_kwargs(size)), np.random.default_rng(0)
    for junk in (None, 0, "anything"):
        seen, (observations, rewards, terminations, truncations, infos) = random_game(
            env, rng, junk)
        assert [active for _, active, _ in seen] == [(P1, P2)[n % 2] for n in range(len(seen))]
        cells = (env.state()[..., 0] + 2 * env.state()[..., 1]).ravel()
        over, winner = expected_end(cells, size)
        assert over and terminations == {P1: True, P2: True}
        assert truncations == {P1: False, P2: False}
        code = game.MARKS.get(winner, game.NO_WINNER)
        assert {agent: info["winner"] for agent, info in infos.items()} == {P1: code, P2: code}
        sign = {"X": 1.0, "O": -1.0, None: 0.0}[winner]
        assert rewards == {P1: sign, P2: -sign}
        assert set(observations) == {P1, P2} and env.agents == []


def test_same_moves_same_boards_and_rewards_as_the_aec_env():
    parallel, aec, rng = pz.parallel_env(), pz.env(), np.random.default_rng(1)
    for _ in range(30):
        seen, (_, rewards, *_) = random_game(parallel, rng)
        aec.reset()
        for board, active, cell in seen:
            assert aec.agent_selection == active and np.array_equal(aec.state(), board)
            aec.step(cell)
        assert np.array_equal(aec.state(), parallel.state()) and aec.rewards == rewards


def test_a_game_move_by_move_and_the_step_after_it():
    env = pz.parallel_env()
    observations, infos = env.reset(seed=0)
    playing = {"winner": game.NO_WINNER, "illegal_action": False, "active_agent": P1}
    assert infos == {P1: playing, P2: playing}
    handed_out = []
    for cell, mover in zip((0, 3, 1, 4), (P1, P2, P1, P2), strict=True):
        observations, rewards, terminations, _, infos = env.step({mover: cell})
        assert rewards == {P1: 0.0, P2: 0.0} and not any(terminations.values())
        handed_out.append(infos)
    # Each step's infos say who moves next, and later steps do not change them.
    assert [infos[P1]["active_agent"] for infos in handed_out] == [P2, P1, P2, P1]
    observations, rewards, terminations, _, infos = env.step({P1: 2, P2: 8})  # P2's 8: ignored
    assert rewards == {P1: 1.0, P2: -1.0} and terminations == {P1: True, P2: True}
    won = {"winner": game.X, "illegal_action": False, "active_agent": ""}
    assert infos == {P1: won, P2: won} and env.agents == []
    assert observations[P1]["observation"][0, :, 0].tolist() == [1, 1, 1]
    assert env.state()[2, 2].tolist() == [0, 0]
    with pytest.raises(RuntimeError, match=r"no game in progress .* call reset\(\)"):
        env.step({P1: 5})
    env.reset()
    assert env.agents == [P1, P2]


def test_an_illegal_move_under_each_rule():
    env = pz.parallel_env()
    env.reset()
    env.step({P1: 0})
    _, rewards, terminations, _, infos = env.step({P2: 0})
    assert rewards == {P1: 0.0, P2: -1.0} and all(terminations.values())
    assert infos[P2] == {"winner": game.X, "illegal_action": True, "active_agent": ""}
    assert env.agents == []
    env = pz.parallel_env(illegal_action="raise")
    env.reset()
    env.step({P1: 0})
    with pytest.raises(ValueError, match=r"illegal action 0 by player_2: legal moves are"):
        env.step({P2: 0})
    assert env.agents == [P1, P2]


@pytest.mark.parametrize(("actions", "error", "message"), [
    ({P2: 4}, ValueError, r"no entry for player_1, the agent to move .* \['player_2'\]"),
    ({}, ValueError, r"actions has no entry for player_1"),
    ([4, 0], TypeError, r"actions must be a dict of agent -> action; got list \[4, 0\]"),
    (4, TypeError, r"actions must be a dict of agent -> action; got int 4"),
])
def test_bad_actions_say_what_is_expected(actions, error, message):
    env = pz.parallel_env()
    env.reset()
    with pytest.raises(error, match=message):
        env.step(actions)
    assert not env.state().any() and env.agents == [P1, P2]


def test_step_before_reset_says_to_reset_and_bad_arguments_are_the_aec_envs():
    with pytest.raises(RuntimeError, match=r"call reset\(\)"):
        pz.parallel_env().step({P1: 0})
    with pytest.raises(ValueError, match="illegal_action"):
        pz.parallel_env(illegal_action="draw")
    with pytest.raises(ValueError, match="seed"):
        pz.parallel_env().reset(seed=-1)


def test_spaces_state_render_and_close_are_the_aec_envs():
    env = pz.parallel_env(rows=4, cols=5, win_length=3, render_mode="ansi")
    observations, _ = env.reset()
    assert env.possible_agents == [P1, P2]
    for agent in (P1, P2):
        assert env.observation_space(agent) is env.unwrapped.observation_space(agent)
        assert env.observation_space(agent).contains(observations[agent])
        assert env.action_space(agent).n == 20
    env.step({P1: 7})
    assert env.state()[1, 2].tolist() == [1, 0]
    assert isinstance(env.render(), str)
    env.close()


def test_pettingzoo_make_finds_it_by_the_aec_envs_id():
    env = pettingzoo.make("parallel", pz.ENV_ID, rows=6, cols=6, win_length=4)
    assert isinstance(env, pzp.TurnBasedParallelEnv) and pzp.ENV_ID == pz.ENV_ID
    assert env.reset()[0][P1]["observation"].shape == (6, 6, 2)
    assert env.unwrapped.rules.shape == (6, 6) and game.X == 1


@pytest.mark.e2e
def test_without_the_extra_the_import_error_names_it():
    code = BLOCK_IMPORTS + "import gym_tictactoe.envs.pettingzoo_parallel"
    out = subprocess.run([sys.executable, "-c", code, "pettingzoo"], cwd=REPO,
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert "MissingExtra: gym_tictactoe.envs.pettingzoo_parallel needs pettingzoo" in last
    assert 'pip install ".[multiagent]"' in last
