"""Moved to :mod:`gym_tictactoe.players.opponents`; kept so that
``import gym_tictactoe.opponents`` works."""
import sys

from gym_tictactoe.players import opponents

sys.modules[__name__] = opponents  # the same module object: private names and patches too
