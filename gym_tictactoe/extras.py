"""Optional dependencies: a missing one is a one-line error naming the extra that brings it.

The core needs only gymnasium and numpy. ``train`` (tqdm, matplotlib) serves ``train.py``'s
progress bar and plot, ``sb3`` (stable-baselines3, sb3-contrib, torch) the deep agents, ``render``
(pygame-ce) the ``human`` window, ``distributed`` (ray) AlphaZero's self-play in Ray actors.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# How to install each extra from a clone; torch comes with sb3, pinned by the constraints file.
INSTALL = {
    "train": 'pip install ".[train]"',
    "plot": 'pip install ".[plot]"',
    "sb3": 'pip install ".[sb3]" -c constraints.txt (the README says how to get the CPU torch)',
    "render": 'pip install ".[render]"',
    "ratings": 'pip install ".[ratings]"',
    "distributed": 'pip install ".[distributed]"',
}


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message says which extra to install."""


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module``, or raise MissingExtra: "<purpose> needs <package>, which is not
    installed: pip install ".[<extra>]" (in a clone of gym-tictactoe)"."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        missing = (error.name or module).partition(".")[0]
        raise MissingExtra(missing_message(purpose, missing, extra), name=missing) from None


def missing_message(purpose: str, package: str, extra: str) -> str:
    return (f"{purpose} needs {package}, which is not installed: {INSTALL[extra]} "
            f"in a clone of gym-tictactoe")
