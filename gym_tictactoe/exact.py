"""Moved to :mod:`gym_tictactoe.evaluation.exact`; kept so that
``import gym_tictactoe.exact`` works."""
import sys

from gym_tictactoe.evaluation import exact

sys.modules[__name__] = exact  # the same module object: private names and patches too
