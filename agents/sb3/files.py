"""SB3 model files: SB3's zip plus our marker ``gym_tictactoe.json``, read back without pickle.

:func:`save_model` writes one atomically. :func:`read_model` reads one back in a single opening
of the archive, checking it whole before anything is built: its members by name and size, its
settings, and the shape of every tensor against the network the settings describe
(``agents.sb3.network``), so a file can make us allocate no more than the network it describes.
:func:`load_model` then lets SB3 build the algorithm, every object SB3 would unpickle rebuilt
from the marker and SB3's plain JSON instead; ``agents.models.load_policy`` builds the policy
alone, to play.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import zipfile
from collections import deque
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym
from gymnasium import spaces
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.type_aliases import TrainFreq, TrainFrequencyUnit
from stable_baselines3.common.utils import FloatSchedule, LinearSchedule
from stable_baselines3.common.vec_env import VecEnv

from agents.archives import one_line, open_zip, read_member
from agents.limits import MAX_BUFFER_BYTES, MAX_N_ENVS, sb3_transition_bytes
from agents.sb3.network import Network, network, read_weights
from agents.sb3.policy import ALGO_CLASSES, ALGOS, algo_of, check_algo, observation_space
from gym_tictactoe import game
from gym_tictactoe.files import atomic_path, existing_file

MARKER = "gym_tictactoe.json"
FORMAT = "gym_tictactoe.sb3/1"
EXPECTED = f"expected a model zip written by agents.sb3.files.save_model ({FORMAT})"
_SMALL = 64 * 1024
# The members SB3's save writes, with ours, and the most each may hold; the weights' limits
# come from the network the settings describe. Any other member is refused.
MEMBER_BYTES = {"data": 4 * 2**20, MARKER: _SMALL, "pytorch_variables.pth": _SMALL,
                "_stable_baselines3_version": 64, "system_info.txt": _SMALL}


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
            # Refuse now what could not be loaded later.
            _check_settings(marker, data, rules.n_cells, path)
            _custom_objects(marker, data, path)
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


@dataclass(frozen=True)
class ModelFile:
    """A checked model file, read in one opening of its archive: its settings, the network
    they describe and that network's weights (``agents.sb3.network``)."""

    path: Path
    marker: dict[str, Any]
    data: dict[str, Any]
    rules: game.Rules
    network: Network
    weights: dict[str, Any]  # the policy's state dict, shapes checked

    @property
    def algo(self) -> str:
        return self.marker["algo"]

    @property
    def canonical(self) -> bool:
        return self.marker.get("canonical", False)


def read_model(path: str | os.PathLike) -> ModelFile:
    """Read and check a file :func:`save_model` wrote, building nothing.

    One opening of the archive: unknown members are refused by name, every member read is
    bounded by what the board and network need, the settings must describe the exact shapes
    of the weights' tensors (read from their headers first), and only data, the marker and
    the policy's weights are inflated. FileNotFoundError, or a one-line ValueError.
    """
    path = existing_file(path, "model file")
    with open_zip(path, partial(_not_ours, path), "model file") as archive:
        marker, data, net = _read_settings(archive, path)
        raw = read_member(archive, "policy.pth", net.max_file_bytes(), partial(_not_ours, path))
    try:
        weights = read_weights(raw, net)
    except ValueError as error:
        raise ValueError(f"{path} is not a model file we wrote: {error}; {EXPECTED}") from None
    return ModelFile(path, marker, data, _board(marker, path), net, weights)


def load_model(path: str | os.PathLike, algo: str | None = None,
               env: gym.Env | VecEnv | None = None, device: str = "auto",
               rules: game.Rules | None = None) -> BaseAlgorithm:
    """Load a model written by :func:`save_model`, without unpickling anything.

    The whole file is checked first (:func:`read_model`), with the settings that size the
    algorithm's buffers (``n_envs``, ``buffer_size``, ``n_steps``: ``MAX_BUFFER_BYTES``); then
    SB3 builds the algorithm, every entry it would unpickle rebuilt from the marker and the
    plain JSON (it loads the weights itself with ``torch.load(weights_only=True)``). Raises
    FileNotFoundError for a missing file and ValueError for a file that is not ours, is damaged,
    or holds another ``algo`` than asked. Pass ``env`` to go on training; to play, build the
    policy alone (``agents.models.load_policy``).
    """
    contents = read_model(path)
    if algo is not None and check_algo(algo) != contents.algo:
        raise ValueError(f"{contents.path} holds a {contents.algo} model, not {algo}")
    if rules is not None and contents.rules != rules:
        raise ValueError(f"{contents.path} was trained on the {contents.rules.name} board, not "
                         f"on {rules.name}")
    custom = _custom_objects(contents.marker, contents.data, contents.path)
    try:
        return ALGO_CLASSES[contents.algo].load(contents.path, env=env, device=device,
                                                custom_objects=custom)
    except (pickle.UnpicklingError, RuntimeError, KeyError, TypeError, IndexError, ValueError,
            AttributeError, AssertionError, EOFError, OSError, zipfile.BadZipFile):
        # Checked above, so this is a file changed since, or a member playing never reads
        # (the optimiser's state): torch's own message would advise unsafe loading.
        raise ValueError(f"{contents.path} is not a model file we wrote: its "
                         f"{contents.algo} weights or settings do not load; {EXPECTED}") from None


def model_board(path: str | os.PathLike) -> game.Rules:
    """The board a model file was trained on (3x3 for files from before boards had sizes)."""
    path = existing_file(path, "model file")
    return _board(_settings(path)[0], path)


def model_canonical(path: str | os.PathLike) -> bool:
    """Whether the model was trained on canonical boards (False for older files)."""
    return _settings(existing_file(path, "model file"))[0].get("canonical", False)


def _board(marker: dict[str, Any], path: Path) -> game.Rules:
    size = marker.get("board", [3, 3, 3])
    try:
        return game.rules(*size) if isinstance(size, list) and len(size) == 3 else game.rules(0)
    except (ValueError, TypeError):
        raise ValueError(f"{path} names an impossible board {size!r} in {MARKER}: "
                         f"{EXPECTED}") from None


def _not_ours(path: Path, problem: str) -> ValueError:
    return ValueError(f"{path}: {problem}: {EXPECTED}")


def _settings(path: Path) -> tuple[dict[str, Any], dict[str, Any], Network]:
    with open_zip(path, partial(_not_ours, path), "model file") as archive:
        return _read_settings(archive, path)


def _read_settings(archive: zipfile.ZipFile,
                   path: Path) -> tuple[dict[str, Any], dict[str, Any], Network]:
    """The marker, SB3's data JSON and the network they describe, after checking the members'
    names and the settings, and bounding every member by what that network needs."""
    infos = _check_members(archive, path)
    marker, data = _json(archive, MARKER, path), _json(archive, "data", path)
    if not (isinstance(marker, dict) and marker.get("format") == FORMAT
            and marker.get("algo") in ALGOS):
        raise ValueError(f"{path} has an unknown {MARKER} {marker!r}: {EXPECTED}")
    if not isinstance(data, dict):
        raise ValueError(f"{path}: SB3's 'data' member must be a JSON object, found "
                         f"{type(data).__name__}: {EXPECTED}")
    if not isinstance(marker.get("canonical", False), bool):
        raise ValueError(f"{path}: 'canonical' in {MARKER} must be true or false: {EXPECTED}")
    net = _check_settings(marker, data, _board(marker, path).n_cells, path)
    _check_sizes(infos, {"policy.pth": net.max_file_bytes(),  # Adam: two moments and steps
                         "policy.optimizer.pth": net.max_file_bytes(copies=3)}, path)
    return marker, data, net


def _check_sizes(infos: dict[str, zipfile.ZipInfo], limits: dict[str, int], path: Path) -> None:
    huge = sorted(name for name, limit in limits.items()
                  if name in infos and infos[name].file_size > limit)
    if huge:
        raise ValueError(f"{path}: members {huge} are larger than they can be in a file of its "
                         f"board and network ({', '.join(f'{limits[n]:,}' for n in huge)} "
                         f"bytes): {EXPECTED}")


def _check_members(archive: zipfile.ZipFile, path: Path) -> dict[str, zipfile.ZipInfo]:
    infos = archive.infolist()
    names = {info.filename: info for info in infos}
    if len(names) < len(infos):  # a later copy would hide an earlier one from these checks
        repeated = sorted({info.filename for info in infos if names[info.filename] is not info})
        raise ValueError(f"{path} holds more than one member named {repeated}: {EXPECTED}")
    unknown = sorted(set(names) - set(MEMBER_BYTES) - {"policy.pth", "policy.optimizer.pth"})
    if unknown:
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise ValueError(f"{path} holds unknown members {unknown[:5]}{more}: {EXPECTED}")
    missing = sorted({"data", "policy.pth", MARKER} - set(names))
    if missing:
        raise ValueError(f"{path} lacks {missing}: {EXPECTED}")
    _check_sizes(names, MEMBER_BYTES, path)
    return names


def _json(archive: zipfile.ZipFile, name: str, path: Path) -> Any:
    raw = read_member(archive, name, MEMBER_BYTES[name], partial(_not_ours, path))
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_not_finite)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError, JSONDecodeError too
        raise ValueError(f"{path}: member {name!r} is not JSON ({one_line(error)}): "
                         f"{EXPECTED}") from None


def _not_finite(constant: str) -> None:
    """Python's json reads NaN and Infinity, which JSON has not: no setting of ours is one."""
    raise ValueError(f"{constant} is not a finite number")


def _check_settings(marker: dict[str, Any], data: dict[str, Any], n_cells: int,
                    path: Path) -> Network:
    """The values rebuilt from plain JSON instead of unpickled must be what SB3 expects, and
    the ones that size the network and the buffers must fit: the network they describe."""
    problems = _schedule_problems(marker, data) + _buffer_problems(marker["algo"], data, n_cells)
    if not _is_count(data.get("_stats_window_size", 100)):
        problems.append(f"_stats_window_size must be a positive integer, found "
                        f"{data.get('_stats_window_size')!r}")
    try:
        net = network(marker["algo"], n_cells, data.get("policy_kwargs"))
    except ValueError as error:
        problems.append(str(error))
    if problems:
        raise ValueError(f"{path} has bad settings: {'; '.join(problems)}: {EXPECTED}")
    return net


def _schedule_problems(marker: dict[str, Any], data: dict[str, Any]) -> list[str]:
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
    return problems


def _buffer_problems(algo: str, data: dict[str, Any], n_cells: int) -> list[str]:
    """What sizes the replay or rollout buffer SB3 allocates on loading: ``n_envs`` and
    ``buffer_size`` (DQN) or ``n_steps`` (PPO), bounded by ``MAX_BUFFER_BYTES``."""
    key = "buffer_size" if algo == "dqn" else "n_steps"
    n_envs, length = data.get("n_envs"), data.get(key)
    if not (_is_count(n_envs) and n_envs <= MAX_N_ENVS and _is_count(length)):
        return [f"n_envs must be an integer from 1 to {MAX_N_ENVS:,} and {key} a positive "
                f"integer, found {n_envs!r} and {length!r}"]
    problems = [f"{name} must be {{}} (the default), found {data[name]!r}"
                for name in ("replay_buffer_kwargs", "rollout_buffer_kwargs")
                if data.get(name, {}) != {}]
    if not isinstance(data.get("optimize_memory_usage", False), bool):
        problems.append("optimize_memory_usage must be true or false")
    per_step = sb3_transition_bytes(algo, n_cells)
    steps = length if algo == "dqn" else length * n_envs
    if steps * per_step > MAX_BUFFER_BYTES:
        problems.append(f"{key} {length:,} with {n_envs:,} envs needs a buffer of "
                        f"{steps * per_step:,} bytes, more than {MAX_BUFFER_BYTES:,}")
    return problems


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
