"""Moved to :mod:`gym_tictactoe.evaluation.policy_heatmap`; kept so that
``import gym_tictactoe.policy_heatmap`` works."""
import sys

from gym_tictactoe.evaluation import policy_heatmap

sys.modules[__name__] = policy_heatmap  # the same module object: private names and patches too
