"""gym-tictactoe: tic-tac-toe for reinforcement learning, solved exactly.

``import gym_tictactoe`` registers ``TicTacToe-v0`` with Gymnasium::

    import gymnasium as gym
    import gym_tictactoe

    env = gym.make("TicTacToe-v0", opponent="minimax", agent_mark="random")
"""

from gymnasium.envs.registration import register, registry

from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.players.opponents import OPPONENTS, Opponent, make_opponent

__all__ = ["OPPONENTS", "Opponent", "TicTacToeEnv", "make_opponent"]
__version__ = "0.1.0"

ENV_ID = "TicTacToe-v0"

if ENV_ID not in registry:
    # No max_episode_steps: a game ends by itself within five agent moves.
    register(
        id=ENV_ID,
        entry_point="gym_tictactoe.envs.env:TicTacToeEnv",
        vector_entry_point="gym_tictactoe.envs.vector:TicTacToeVectorEnv",
    )
