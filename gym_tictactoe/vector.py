"""Moved to :mod:`gym_tictactoe.envs.vector`; kept so that ``import gym_tictactoe.vector`` works."""
import sys

from gym_tictactoe.envs import vector

sys.modules[__name__] = vector  # the same module object: private names and patches too
