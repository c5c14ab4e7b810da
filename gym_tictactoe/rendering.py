"""Moved to :mod:`gym_tictactoe.envs.rendering`; kept so that
``import gym_tictactoe.rendering`` works."""
import sys

from gym_tictactoe.envs import rendering

sys.modules[__name__] = rendering  # the same module object: private names and patches too
