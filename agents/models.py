"""Load any model file this project writes as a Policy, telling the kinds apart by content.

Both kinds are zip archives: a Q-table ``.npz`` (``QLearningAgent.save``) holds ``format.npy``;
an SB3 model (``agents.sb3_files.save_model``) holds SB3's members and our ``gym_tictactoe.json``.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

from gym_tictactoe.evaluation import Policy

EXPECTED = ("a Q-table .npz written by QLearningAgent.save or an SB3 .zip written by "
            "agents.sb3_files.save_model (train.py writes either)")


def model_kind(path: str | os.PathLike) -> str:
    """``"q"`` or ``"sb3"``; FileNotFoundError or a ValueError saying what was expected."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no model file at {path}")
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError) as error:
        raise ValueError(f"{path} is not a model file ({error}); expected {EXPECTED}") from None
    if "format.npy" in names:
        return "q"
    if "gym_tictactoe.json" in names:
        return "sb3"
    raise ValueError(f"{path} is a zip archive but not one of ours; expected {EXPECTED}")


def load_policy(path: str | os.PathLike) -> tuple[Policy, str]:
    """The policy stored at ``path`` and its kind (``"q"`` or the SB3 algorithm's name)."""
    if model_kind(path) == "q":
        from agents.q_learning import QLearningAgent

        return QLearningAgent.load(path), "q"
    from agents.sb3 import ModelPolicy, algo_of  # torch only when needed
    from agents.sb3_files import load_model

    model = load_model(path)
    return ModelPolicy(model), algo_of(model)
