"""Moved to :mod:`gym_tictactoe.envs.wrappers`; kept so that
``import gym_tictactoe.wrappers`` works."""
import sys

from gym_tictactoe.envs import wrappers

sys.modules[__name__] = wrappers  # the same module object: private names and patches too
