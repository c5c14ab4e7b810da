"""Moved to :mod:`gym_tictactoe.players.threats`; kept so that
``import gym_tictactoe.threats`` works."""
import sys

from gym_tictactoe.players import threats

sys.modules[__name__] = threats  # the same module object: private names and patches too
