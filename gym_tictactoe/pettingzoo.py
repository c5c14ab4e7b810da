"""Moved to :mod:`gym_tictactoe.envs.pettingzoo`; kept so that
``import gym_tictactoe.pettingzoo`` works."""
import sys

from gym_tictactoe.envs import pettingzoo

sys.modules[__name__] = pettingzoo  # the same module object: private names and patches too
