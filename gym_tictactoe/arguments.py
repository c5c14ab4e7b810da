"""Moved to :mod:`gym_tictactoe.cli.arguments`; kept so that
``import gym_tictactoe.arguments`` works."""
import sys

from gym_tictactoe.cli import arguments

sys.modules[__name__] = arguments  # the same module object: private names and patches too
