"""Moved to :mod:`gym_tictactoe.envs.env`; kept so that ``import gym_tictactoe.env`` works."""
import sys

from gym_tictactoe.envs import env

sys.modules[__name__] = env  # the same module object: private names and patches too
