"""Moved to :mod:`gym_tictactoe.game.solver`; kept so that ``import gym_tictactoe.solver`` works."""
import sys

from gym_tictactoe.game import solver

sys.modules[__name__] = solver  # the same module object: private names and patches too
