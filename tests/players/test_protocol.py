"""One player protocol: every built-in player and every agent answers it, declares its optional
capabilities, and is asked by evaluation, pictures and the command line through them alone; an
outside object with ``act(board, mark, rng)`` is adapted once; saved models load through the
loader registry, never by the library importing ``agents``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from gym_tictactoe import evaluation, game
from gym_tictactoe.evaluation import SolverPolicy, UniformPolicy
from gym_tictactoe.evaluation.policy_heatmap import policy_values
from gym_tictactoe.players import ActPlayer, Player, as_player, capabilities, cost_of
from gym_tictactoe.players.opponents import OPPONENTS, MinimaxOpponent, parse_opponent
from gym_tictactoe.players.search import AlphaBetaPlayer
from gym_tictactoe.players.symmetrized import SymmetrizedPolicy
from gym_tictactoe.players.table_players import PolicyOpponent, RandomOpponent

ROOT = Path(__file__).resolve().parents[2]
T3 = game.TICTACTOE
SPECS = {"random": "random", "minimax": "minimax", "alphabeta": "alphabeta",
         "epsilon": "epsilon:epsilon=0.5", "heuristic": "heuristic",
         "montecarlo": "montecarlo:playouts=5", "mcts": "mcts:max_simulations=20,seed=0",
         "mixture": "random+minimax"}


def test_the_specs_cover_every_built_in_player():
    assert set(SPECS) | {"policy"} == set(OPPONENTS)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_built_in_player_answers_both_forms(name):
    player = parse_opponent(SPECS[name])
    assert isinstance(player, Player) and as_player(player, T3) is player
    board = np.array([1, 0, 0, 0, 2, 0, 0, 0, 0], dtype=np.int8)  # X to move
    move = player.act(board.copy(), game.X, np.random.default_rng(0))
    assert board[move] == game.EMPTY
    # The policy form: the same board seen by the side to move (X here: no swap).
    assert board[player(board.copy(), (board == 0).astype(np.int8))] == game.EMPTY


def test_the_policy_player_answers_both_forms():
    player = PolicyOpponent(SolverPolicy())
    board = np.array([1, 1, 0, 2, 2, 0, 0, 0, 0], dtype=np.int8)  # X wins at 2
    assert player.act(board, game.X, np.random.default_rng(0)) == 2
    assert player(board, (board == 0).astype(np.int8)) == 2


def test_the_policy_form_sees_the_board_as_the_side_to_move():
    board = np.array([1, 1, 0, 2, 2, 0, 1, 0, 0], dtype=np.int8)  # O to move, wins at 5
    relative = game.SWAP[board]  # 1 = O's own marks
    assert MinimaxOpponent()(relative, (board == 0).astype(np.int8)) == 5


def test_alphabeta_is_a_player_and_plays_as_it_did_when_wrapped():
    """The same seeded games as when it was adapted through its ``act``: the single env and the
    vector env."""
    player = AlphaBetaPlayer(depth=2)
    assert as_player(player, T3) is player

    def episodes(opponent):
        env = gym.make("TicTacToe-v0", opponent=opponent)
        env.reset(seed=3)
        moves = []
        for _ in range(6):
            obs, info = env.reset()
            done = False
            while not done:
                action = int(np.flatnonzero(info["action_mask"])[0])
                obs, _, terminated, truncated, info = env.step(action)
                moves.append(obs.tolist())
                done = terminated or truncated
        return moves

    assert episodes(player) == episodes(ActPlayer(AlphaBetaPlayer(depth=2), T3))


def test_alphabeta_in_the_vector_env_plays_as_it_did_when_wrapped():
    def rollout(opponent):
        env = gym.make_vec("TicTacToe-v0", num_envs=3, vectorization_mode="vector_entry_point",
                           opponent=opponent)
        obs, info = env.reset(seed=5)
        seen = []
        for _ in range(8):
            actions = np.argmax(info["action_mask"], axis=1)
            obs, *_, info = env.step(actions)
            seen.append(obs.tolist())
        return seen

    assert rollout(AlphaBetaPlayer(depth=2)) == rollout(ActPlayer(AlphaBetaPlayer(depth=2), T3))


class Outside:
    """An object of a user's with only the documented ``act(board, mark, rng)``."""

    def __init__(self) -> None:
        self.inner = MinimaxOpponent(deterministic=True)

    def act(self, board, mark, rng):
        return self.inner.act(board, mark, rng)


def test_an_outside_object_is_adapted_once_and_evaluated():
    outside = Outside()
    adapted = as_player(outside, T3)
    assert isinstance(adapted, ActPlayer) and adapted.opponent is outside
    assert as_player(adapted, T3) is adapted
    assert evaluation.evaluate(outside).perfect
    assert evaluation.play_games(outside, "random", 4).losses == 0


class LowestEmpty(MinimaxOpponent):
    """A subclass of a built-in player that overrides ``act``: its ``act`` decides everywhere."""

    def act(self, board, mark, rng):
        return int(np.flatnonzero(np.asarray(board) == 0)[0])


def test_a_subclass_overriding_act_is_evaluated_by_its_act():
    assert isinstance(as_player(LowestEmpty(), T3), ActPlayer)
    moves = evaluation.policy_moves(LowestEmpty())
    codes, observations = evaluation.answers.boards(T3)
    assert np.array_equal(moves[codes], np.argmax(observations == 0, axis=1))
    assert not evaluation.evaluate(LowestEmpty()).perfect


def test_built_in_players_are_evaluated_as_players():
    assert evaluation.evaluate(MinimaxOpponent()).perfect
    searched = evaluation.best_response(AlphaBetaPlayer(depth=None, max_nodes=None),
                                        reached_only=True)
    assert [seat.result for seat in searched.values()] == ["draw", "draw"]
    # A random player is measured as the one fixed choice per position it draws (seed 0).
    first, again = (evaluation.policy_moves(RandomOpponent()) for _ in range(2))
    assert np.array_equal(first, again) and not evaluation.evaluate(RandomOpponent()).perfect


def test_capabilities_are_declared_not_guessed():
    assert capabilities(UniformPolicy()) == {"batch", "probabilities"}
    assert capabilities(SolverPolicy()) == {"batch"}
    assert capabilities(MinimaxOpponent()) == frozenset()
    assert capabilities(SymmetrizedPolicy(UniformPolicy(), stochastic=True)) == {
        "batch", "probabilities"}
    assert capabilities(SymmetrizedPolicy(SolverPolicy())) == {"batch"}
    assert cost_of(AlphaBetaPlayer(depth=2)) == "alpha-beta search of up to 25,000 positions a move"
    assert cost_of(AlphaBetaPlayer(depth=None, max_nodes=None)) is None
    assert cost_of(parse_opponent("montecarlo:playouts=7")) == "7 random playouts after each move"


def test_a_q_agent_gives_its_q_values_for_pictures():
    from agents.tabular.q_learning import QLearningAgent

    agent = QLearningAgent(seed=0)
    agent.q[:] = np.random.default_rng(0).normal(size=agent.q.shape)
    assert capabilities(agent) == {"batch", "cell values"}
    board = [1, 0, 0, 0, 2, 0, 0, 0, 0]
    found = policy_values(agent, board)
    observation = np.array(board, dtype=np.int8)
    legal = observation == 0
    assert found.kind == "Q-value"
    assert np.allclose(found.values[legal], agent.q_values(observation)[legal])


def test_an_sb3_model_gives_its_cell_values_as_the_pictures_read_them_before():
    """PPO: its action probabilities; DQN: its Q-values, asked on canonical images for a
    canonical model and mapped back (what the heat map computed itself before)."""
    pytest.importorskip("stable_baselines3")
    from agents import sb3
    from gym_tictactoe.game.symmetry import canonicalize, untransform_cells

    board = np.array([[1, 0, 0, 0, 2, 0, 0, 0, 1]], dtype=np.int8)  # O to move: seen as 1
    observation, mask = game.SWAP[board], (board == 0).astype(np.int8)
    for algo in ("dqn", "ppo"):
        model = sb3.build_model(algo, sb3.make_vec_env(algo, seed=0), seed=0)
        policy = sb3.ModelPolicy(model, algo, canonical=True)
        assert capabilities(policy) == {"batch", "cell values"}
        kind, values = policy.cell_values(observation, mask)
        if algo == "ppo":
            assert kind == "probability"
            assert np.array_equal(values, policy.probabilities(observation, mask))
            continue
        images, turned = canonicalize(T3, observation)
        expected = untransform_cells(T3, policy.preferences(images), turned)
        assert kind == "Q-value" and np.allclose(values, expected)
        assert policy_values(policy, board[0]).kind == "Q-value"


class Valued:
    """A player with cell values of a kind given to it."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __call__(self, observation, mask):
        return int(np.flatnonzero(mask)[-1])

    def cell_values(self, observations, masks):
        return self.kind, np.tile(np.arange(9.0), (len(observations), 1))


def test_pictures_read_the_cell_values_capability():
    found = policy_values(Valued("probability"), game.EMPTY_BOARD)
    assert found.kind == "probability" and found.values.tolist() == list(range(9))
    assert found.move == 8
    with pytest.raises(ValueError, match="cell_values must name its kind"):
        policy_values(Valued("logit"), game.EMPTY_BOARD)


def test_an_alphazero_search_declares_its_cost():
    pytest.importorskip("torch")
    from agents.alphazero import AlphaZeroPolicy
    from agents.alphazero.network import NetworkSettings, PolicyValueNet

    net = PolicyValueNet(NetworkSettings(channels=4, blocks=1))
    raw, searching = AlphaZeroPolicy(net, T3), AlphaZeroPolicy(net, T3, max_simulations=7)
    assert capabilities(raw) == {"batch"} and cost_of(raw) is None
    assert capabilities(searching) == {"batch", "costly"}
    assert cost_of(searching) == "search of 7 simulations a move"


# --- the loader registry ------------------------------------------------------------------------


def _python(code: str, *paths: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *map(str, paths)])}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)


def _entry_point(folder: Path) -> Path:
    """A distribution on a path of its own naming ``agents.models:LOADER`` in the loaders'
    group, as the installed package does (pyproject.toml)."""
    info = folder / "loaders_test-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: loaders-test\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        "[gym_tictactoe.model_loaders]\nagents = agents.models:LOADER\n")
    return folder


def test_pyproject_names_the_loader():
    text = (ROOT / "pyproject.toml").read_text()
    assert '[project.entry-points."gym_tictactoe.model_loaders"]' in text
    assert 'agents = "agents.models:LOADER"' in text


@pytest.mark.e2e
def test_the_command_line_finds_the_loader_through_the_entry_point(tmp_path):
    from agents.tabular.q_learning import QLearningAgent

    model = QLearningAgent(seed=0).save(tmp_path / "q.npz")
    code = ("import sys\nfrom gym_tictactoe.cli import models\n"
            "assert not any(m.split('.')[0] == 'agents' for m in sys.modules)\n"
            f"policy, kind = models.load({str(model)!r})\n"
            "print(kind, type(policy).__name__)")
    done = _python(code, _entry_point(tmp_path / "site"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["q", "QLearningAgent"]


def test_importing_agents_models_registers_it():
    import agents.models
    from gym_tictactoe.players import loaders

    assert loaders.model_loader() is agents.models.LOADER
    loaders.register(agents.models.LOADER)
    assert loaders._LOADERS.count(agents.models.LOADER) == 1
