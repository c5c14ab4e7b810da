"""Moved to :mod:`gym_tictactoe.game.symmetry` (``SymmetrizedPolicy`` to
:mod:`gym_tictactoe.players.symmetrized`); kept so that ``import gym_tictactoe.symmetry`` works."""

from gym_tictactoe.game.symmetry import *  # noqa: F403
from gym_tictactoe.game.symmetry import __all__ as _moved
from gym_tictactoe.players.symmetrized import SymmetrizedPolicy

__all__ = [*_moved, "SymmetrizedPolicy"]
