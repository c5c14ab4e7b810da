"""Moved to :mod:`gym_tictactoe.game.positions`; kept so that
``import gym_tictactoe.positions`` works."""
import sys

from gym_tictactoe.game import positions

sys.modules[__name__] = positions  # the same module object: private names and patches too
