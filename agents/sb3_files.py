"""SB3 model files: SB3's zip plus our marker ``gym_tictactoe.json``, read back without pickle.

:func:`save_model` writes one atomically; :func:`load_model` rebuilds every object SB3 would
unpickle from the marker and SB3's plain JSON instead.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import zipfile
import zlib
from collections import deque
from pathlib import Path
from typing import Any

import gymnasium as gym
from gymnasium import spaces
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.type_aliases import TrainFreq, TrainFrequencyUnit
from stable_baselines3.common.utils import FloatSchedule, LinearSchedule
from stable_baselines3.common.vec_env import VecEnv

from agents.sb3 import ALGO_CLASSES, ALGOS, algo_of, check_algo, observation_space
from gym_tictactoe import game
from gym_tictactoe.files import atomic_path, existing_file

MARKER = "gym_tictactoe.json"
FORMAT = "gym_tictactoe.sb3/1"
EXPECTED = f"expected a model zip written by agents.sb3_files.save_model ({FORMAT})"
MAX_MEMBER_BYTES = 64 * 2**20  # our networks' weights and optimiser state take a few MB


def save_model(model: BaseAlgorithm, path: str | os.PathLike,
               rules: game.Rules = game.TICTACTOE, canonical: bool = False) -> Path:
    """Write ``model`` to ``path`` (exactly, no suffix added) atomically; returns the path.

    The file is SB3's zip plus ``gym_tictactoe.json`` naming the algorithm, the board ``rules``
    it plays, whether it was trained on canonical boards, and the settings that
    :func:`load_model` rebuilds instead of unpickling.
    """
    path = Path(path)
    if int(model.action_space.n) != rules.n_cells:
        raise ValueError(f"the model plays {model.action_space.n} cells, not the "
                         f"{rules.n_cells} of {rules.name}: pass its board as rules=")
    path.parent.mkdir(parents=True, exist_ok=True)
    marker = {**_marker(model), "board": list(rules.size), "canonical": bool(canonical)}
    with atomic_path(path, suffix=".zip") as temp:  # SB3 would add .zip to a name without it
        model.save(temp)
        with zipfile.ZipFile(temp, "a") as archive:
            data = json.loads(archive.read("data"))
            _custom_objects(marker, data, path)  # refuse now what could not be loaded later
            archive.writestr(MARKER, json.dumps(marker, indent=2))
    return path


def _marker(model: BaseAlgorithm) -> dict[str, Any]:
    algo = algo_of(model)
    marker: dict[str, Any] = {"format": FORMAT, "algo": algo}
    if algo == "dqn":
        marker["train_freq"] = [model.train_freq.frequency, model.train_freq.unit.value]
    else:
        start, end = model.clip_range(1.0), model.clip_range(0.0)
        if start != end:
            raise ValueError(f"only a constant clip_range can be saved; got {model.clip_range}")
        marker["clip_range"] = start
    return marker


def load_model(path: str | os.PathLike, algo: str | None = None,
               env: gym.Env | VecEnv | None = None, device: str = "auto",
               rules: game.Rules | None = None) -> BaseAlgorithm:
    """Load a model written by :func:`save_model`, without unpickling anything.

    Every entry SB3 would unpickle is rebuilt from the marker and the plain JSON instead (SB3
    loads the weights itself with ``torch.load(weights_only=True)``). Raises FileNotFoundError
    for a missing file and ValueError for a file that is not ours, is damaged, or holds another
    ``algo`` than asked. Pass ``env`` to go on training.
    """
    path = existing_file(path, "model file")
    marker, data = _read_archive(path)
    if algo is not None and check_algo(algo) != marker["algo"]:
        raise ValueError(f"{path} holds a {marker['algo']} model, not {algo}")
    board = _board(marker, path)
    if rules is not None and board != rules:
        raise ValueError(f"{path} was trained on the {board.name} board, not on {rules.name}")
    custom = _custom_objects(marker, data, path)
    try:
        return ALGO_CLASSES[marker["algo"]].load(path, env=env, device=device,
                                                 custom_objects=custom)
    except (pickle.UnpicklingError, RuntimeError, KeyError, TypeError, IndexError, ValueError,
            AttributeError, AssertionError, EOFError, OSError, zipfile.BadZipFile):
        # Weights torch's safe loader refuses (garbage, or a pickle that would run code), or
        # that do not fit the marker: torch's own message would advise unsafe loading.
        raise ValueError(f"{path} is not a model file we wrote: its {marker['algo']} weights "
                         f"or settings do not load; {EXPECTED}") from None


def model_board(path: str | os.PathLike) -> game.Rules:
    """The board a model file was trained on (3x3 for files from before boards had sizes)."""
    path = existing_file(path, "model file")
    return _board(_read_archive(path)[0], path)


def model_canonical(path: str | os.PathLike) -> bool:
    """Whether the model was trained on canonical boards (False for older files)."""
    path = existing_file(path, "model file")
    canonical = _read_archive(path)[0].get("canonical", False)
    if not isinstance(canonical, bool):
        raise ValueError(f"{path}: 'canonical' in {MARKER} must be true or false: {EXPECTED}")
    return canonical


def _board(marker: dict[str, Any], path: Path) -> game.Rules:
    size = marker.get("board", [3, 3, 3])
    try:
        return game.rules(*size) if isinstance(size, list) and len(size) == 3 else game.rules(0)
    except (ValueError, TypeError):
        raise ValueError(f"{path} names an impossible board {size!r} in {MARKER}: "
                         f"{EXPECTED}") from None


def _read_archive(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The marker and SB3's data JSON of a model zip, after checking every member's size and
    CRC, and the settings the marker and data must hold."""
    try:
        with zipfile.ZipFile(path) as archive:
            _check_members(archive, path)
            marker, data = json.loads(archive.read(MARKER)), json.loads(archive.read("data"))
    except (zipfile.BadZipFile, zlib.error, EOFError, UnicodeDecodeError, json.JSONDecodeError,
            RecursionError, NotImplementedError, RuntimeError) as error:
        raise ValueError(f"{path} is not a readable zip ({error}): {EXPECTED}") from None
    if not (isinstance(marker, dict) and marker.get("format") == FORMAT
            and marker.get("algo") in ALGOS):
        raise ValueError(f"{path} has an unknown {MARKER} {marker!r}: {EXPECTED}")
    if not isinstance(data, dict):
        raise ValueError(f"{path}: SB3's 'data' member must be a JSON object, found "
                         f"{type(data).__name__}: {EXPECTED}")
    _check_settings(marker, data, path)
    return marker, data


def _check_members(archive: zipfile.ZipFile, path: Path) -> None:
    infos = archive.infolist()
    names = {info.filename: info for info in infos}
    if len(names) < len(infos):  # a later copy would hide an earlier one from these checks
        repeated = sorted({info.filename for info in infos if names[info.filename] is not info})
        raise ValueError(f"{path} holds more than one member named {repeated}: {EXPECTED}")
    missing = sorted({"data", "policy.pth", MARKER} - set(names))
    if missing:
        raise ValueError(f"{path} lacks {missing}: {EXPECTED}")
    huge = sorted(name for name, info in names.items() if info.file_size > MAX_MEMBER_BYTES)
    if huge:
        raise ValueError(f"{path}: members {huge} are larger than any model of ours "
                         f"({MAX_MEMBER_BYTES:,} bytes): {EXPECTED}")
    damaged = archive.testzip()
    if damaged is not None:
        raise ValueError(f"{path} is damaged (bad CRC in {damaged!r}): {EXPECTED}")


def _check_settings(marker: dict[str, Any], data: dict[str, Any], path: Path) -> None:
    """The values rebuilt from plain JSON instead of unpickled must be what SB3 expects."""
    problems = []
    if marker["algo"] == "dqn":
        freq = marker.get("train_freq")
        if not (isinstance(freq, list) and len(freq) == 2 and _is_count(freq[0])
                and freq[1] in ("step", "episode")):
            problems.append(f"train_freq must be [a positive integer, 'step' or 'episode'], "
                            f"found {freq!r}")
        for key in ("exploration_initial_eps", "exploration_final_eps", "exploration_fraction"):
            if not _is_fraction(data.get(key)):
                problems.append(f"{key} must be a number in [0, 1], found {data.get(key)!r}")
    elif not (_is_number(marker.get("clip_range")) and marker["clip_range"] > 0):
        problems.append(f"clip_range must be a positive number, found "
                        f"{marker.get('clip_range')!r}")
    if not _is_count(data.get("_stats_window_size", 100)):
        problems.append(f"_stats_window_size must be a positive integer, found "
                        f"{data.get('_stats_window_size')!r}")
    if problems:
        raise ValueError(f"{path} has bad settings: {'; '.join(problems)}: {EXPECTED}")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) \
        and math.isfinite(value)


def _is_fraction(value: Any) -> bool:
    return _is_number(value) and 0 <= value <= 1


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _custom_objects(marker: dict[str, Any], data: dict[str, Any], path: Path) -> dict[str, Any]:
    """A pickle-free replacement for every entry of ``data`` that SB3 would unpickle."""
    known = _rebuilt_objects(marker, data, _board(marker, path).n_cells)
    custom = {}
    for key, item in data.items():
        if isinstance(item, dict) and ":serialized:" in item:
            if key not in known:
                raise ValueError(f"{path}: {key!r} can only be read by unpickling; "
                                 f"pickle-free entries are {sorted(known)}")
            _check_described(key, item, known[key], path)
            custom[key] = known[key]
    return custom


def _rebuilt_objects(marker: dict[str, Any], data: dict[str, Any],
                     n_cells: int) -> dict[str, Any]:
    """Our own values for the entries SB3 pickles; None buffers and classes mean the defaults,
    and empty observation state makes the next ``learn`` reset the env."""
    algo, window = marker["algo"], data.get("_stats_window_size", 100)
    objects: dict[str, Any] = {
        "policy_class": ALGO_CLASSES[algo].policy_aliases["MlpPolicy"],
        "observation_space": observation_space(algo, n_cells),
        "action_space": spaces.Discrete(n_cells),
        "_last_obs": None, "_last_episode_starts": None, "_last_original_obs": None,
        "ep_info_buffer": deque(maxlen=window), "ep_success_buffer": deque(maxlen=window),
        "rollout_buffer_class": None, "replay_buffer_class": None,
    }
    if isinstance(data.get("learning_rate"), float | int):
        objects["lr_schedule"] = FloatSchedule(data["learning_rate"])
    if "clip_range" in marker:
        objects["clip_range"] = FloatSchedule(marker["clip_range"])
    if "train_freq" in marker:
        frequency, unit = marker["train_freq"]
        objects["train_freq"] = TrainFreq(int(frequency), TrainFrequencyUnit(unit))
        objects["exploration_schedule"] = LinearSchedule(
            data["exploration_initial_eps"], data["exploration_final_eps"],
            data["exploration_fraction"])
    return objects


def _check_described(key: str, item: dict[str, Any], value: Any, path: Path) -> None:
    # SB3 records each pickled object's type (and a class's module) in plain JSON: a cheap check
    # that our replacement is the same kind of thing.
    if key in ("observation_space", "action_space") and item[":type:"] != str(type(value)):
        raise ValueError(f"{path}: {key} is a {item[':type:']}, expected {type(value)}")
    if key == "policy_class" and item.get("__module__") != value.__module__:
        raise ValueError(f"{path}: policy class from {item.get('__module__')!r}, expected "
                         f"{value.__module__!r}")
