"""Moved to :mod:`gym_tictactoe.players.stochastic`; kept so that
``import gym_tictactoe.stochastic`` works."""
import sys

from gym_tictactoe.players import stochastic

sys.modules[__name__] = stochastic  # the same module object: private names and patches too
