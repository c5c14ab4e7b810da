"""The registry of saved-model loaders: how a model file becomes a player, filled in by the
package that writes the models, so that the command line loads them without importing it.

``agents.models`` registers itself when imported, and the installed package names it under the
entry-point group ``gym_tictactoe.model_loaders`` (``pyproject.toml``), which
:func:`model_loader` reads the first time a model is asked for in a process where none is
registered yet: ``python -m gym_tictactoe evaluate model.zip`` finds the loader without the
library importing ``agents``. Another package may register its own loader the same way; the
first one registered answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from importlib import metadata
from typing import Any, Protocol

GROUP = "gym_tictactoe.model_loaders"
_LOADERS: list[ModelLoader] = []


class ModelLoader(Protocol):
    """What the command line asks of saved models."""

    def model_kind(self, path: str) -> str:
        """The kind of model ``path`` holds (FileNotFoundError, or a ValueError saying what
        was expected)."""
        ...

    def load_policy(self, path: str, *, max_simulations: int | None = None,
                    threats: bool = False) -> tuple[Any, str]:
        """(player, kind) of the model at ``path``; ``max_simulations``: a search on top, where
        the model has one (ValueError where it has none), reading the immediate threats with
        ``threats``."""
        ...

    def playing(self, kinds: Sequence[str]) -> AbstractContextManager[Any]:
        """What to hold while models of ``kinds`` play (one torch thread for small networks)."""
        ...


def register(loader: ModelLoader) -> None:
    """Add ``loader`` to the registry (once; registering it again changes nothing)."""
    if not any(known is loader for known in _LOADERS):
        _LOADERS.append(loader)


def model_loader() -> ModelLoader:
    """The first registered loader, after reading the entry points if none is registered yet;
    a ValueError saying how to get one when there is none."""
    if not _LOADERS:
        for entry in metadata.entry_points(group=GROUP):
            register(entry.load())
    if not _LOADERS:
        raise ValueError(f"no saved-model loader is registered (entry-point group {GROUP}): "
                         "install gymnasium-tictactoe, whose agents package registers one (in a "
                         "checkout, pip install -e . writes the entry point)")
    return _LOADERS[0]
