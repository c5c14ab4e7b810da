"""Moved to :mod:`gym_tictactoe.evaluation.policy_report`; kept so that
``import gym_tictactoe.policy_report`` works."""
import sys

from gym_tictactoe.evaluation import policy_report

sys.modules[__name__] = policy_report  # the same module object: private names and patches too
