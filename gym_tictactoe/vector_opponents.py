"""Moved to :mod:`gym_tictactoe.players.vector_opponents`; kept so that
``import gym_tictactoe.vector_opponents`` works."""
import sys

from gym_tictactoe.players import vector_opponents

sys.modules[__name__] = vector_opponents  # the same module object: private names and patches too
