"""Load any model file this project writes as a Policy, telling the kinds apart by content.

All kinds are zip archives: a Q-table ``.npz`` (``QLearningAgent.save``) holds ``format.npy``;
an SB3 model (``agents.sb3.files.save_model``) holds SB3's members and our ``gym_tictactoe.json``;
an AlphaZero ``.npz`` (``agents.alphazero.files.save``) holds ``alphazero.npy``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from agents.archives import open_zip
from gym_tictactoe.evaluation import Policy
from gym_tictactoe.extras import require
from gym_tictactoe.files import existing_file
from gym_tictactoe.players import loaders

EXPECTED = ("a Q-table .npz written by QLearningAgent.save, an SB3 .zip written by "
            "agents.sb3.files.save_model or an AlphaZero .npz written by "
            "agents.alphazero.files.save (train.py writes each)")


def model_kind(path: str | os.PathLike) -> str:
    """``"q"``, ``"sb3"`` or ``"alphazero"``; FileNotFoundError or a ValueError saying what was
    expected."""
    path = existing_file(path, "model file")
    with open_zip(path, partial(_not_a_model, path), "model file") as archive:
        names = set(archive.namelist())
    if "format.npy" in names:
        return "q"
    if "gym_tictactoe.json" in names:
        return "sb3"
    if "alphazero.npy" in names:
        return "alphazero"
    raise ValueError(f"{path} is a zip archive but not one of ours; expected {EXPECTED}")


def _not_a_model(path: Path, problem: str) -> ValueError:
    return ValueError(f"{path} is not a model file: {problem}; expected {EXPECTED}")


def load_policy(path: str | os.PathLike, *, stochastic: bool = False,
                max_simulations: int | None = None, threats: bool = False
                ) -> tuple[Policy, str]:
    """The policy stored at ``path`` and its kind (``"q"``, ``"alphazero"`` or the SB3
    algorithm's name).

    ``max_simulations``: an AlphaZero network plays through a PUCT search of that many
    simulations (deterministic); None plays the raw network, greedy on its prior. ``threats``:
    that search reads the immediate threats (``agents.alphazero.search``).
    ``stochastic=True``: a (Maskable)PPO model's own action distribution over the legal cells
    (``ModelPolicy(stochastic=True)``), measured by ``gym_tictactoe.evaluation`` as the
    stochastic policy it is; a Q-table or DQN model has none (ValueError).
    FileNotFoundError, ValueError for a file that is not a model of ours, and
    ``gym_tictactoe.extras.MissingExtra`` when an SB3 model meets an install without the extra.
    """
    kind = model_kind(path)
    if (max_simulations is not None or threats) and kind != "alphazero":
        raise ValueError(f"{path} is a {kind} model, which has no search: max_simulations is "
                         "for AlphaZero models")
    if kind == "alphazero":
        return _alphazero(path, stochastic, max_simulations, threats), kind
    if kind == "q":
        from agents.tabular.q_learning import QLearningAgent

        if stochastic:
            raise ValueError(f"{path} is a Q-table, which plays its greedy move: it has no "
                             "action distribution (stochastic=True is for (maskable-)ppo)")
        return QLearningAgent.load(path), "q"
    for module in ("torch", "stable_baselines3", "sb3_contrib"):  # only when needed
        require(module, "sb3", "loading an SB3 model")
    from agents.sb3 import ModelPolicy
    from agents.sb3.files import read_model
    from agents.sb3.network import build_policy

    # One reading of the file, and the policy alone: playing needs no buffer, env or optimiser.
    model = read_model(path)
    policy = ModelPolicy(build_policy(model.network, model.weights), model.algo,
                         rules=model.rules, canonical=model.canonical, stochastic=stochastic)
    return policy, model.algo


def torch_threads(count: int) -> Any:
    """``agents.sb3.torch_threads`` (torch imported only when an SB3 model plays)."""
    from agents.sb3 import torch_threads as threads

    return threads(count)


def playing(kinds: Sequence[str]) -> contextlib.AbstractContextManager[Any]:
    """One torch thread while networks (SB3, AlphaZero) play; nothing for Q-tables alone."""
    if all(kind == "q" for kind in kinds):
        return contextlib.nullcontext()
    return torch_threads(1)


def _alphazero(path: str | os.PathLike, stochastic: bool, max_simulations: int | None,
               threats: bool = False) -> Policy:
    if stochastic:
        raise ValueError(f"{path} is an AlphaZero model, which plays its greedy move "
                         "(stochastic=True is for (maskable-)ppo)")
    if threats and max_simulations is None:
        raise ValueError(f"threats is for a search: give {path} max_simulations too")
    require("torch", "sb3", "loading an AlphaZero model")
    from agents.alphazero import AlphaZeroPolicy, load

    model = load(path)
    return AlphaZeroPolicy(model.net, model.rules, max_simulations, threats=threats)


class SavedModels:
    """This module as the command line's loader of saved models
    (``gym_tictactoe.players.loaders.ModelLoader``)."""

    model_kind = staticmethod(model_kind)
    load_policy = staticmethod(load_policy)
    playing = staticmethod(playing)


# Registered on import; pyproject.toml names it under the loaders' entry-point group too, so that
# the command line finds it without importing agents itself.
LOADER = SavedModels()
loaders.register(LOADER)
