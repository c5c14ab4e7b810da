"""Moved to :mod:`gym_tictactoe.players.search`; kept so that
``import gym_tictactoe.search`` works."""
import sys

from gym_tictactoe.players import search

sys.modules[__name__] = search  # the same module object: private names and patches too
