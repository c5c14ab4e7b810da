"""Q-learning agent files: an ``.npz`` of plain arrays, written atomically, read without pickle.

The arrays are ``format`` (``FORMAT``), ``config`` and ``rng`` (JSON strings), ``q``, ``visits``
and ``episodes``; the config holds the board (``rows``, ``cols``, ``win_length``; files without
them are 3x3x3), which fixes the tables' shape. :func:`read` checks every one and says what is
wrong with a file that is not such a file.
"""

from __future__ import annotations

import json
import os
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.files import atomic_path

FORMAT = "gym_tictactoe.q_learning/1"
TABLE_SHAPE = (game.N_CODES, game.N_CELLS)  # 3x3's; other boards' come from the caller
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip's first entry, or an empty zip


class Contents(NamedTuple):
    """What an agent file holds; ``config`` is a ``QLearningConfig``."""

    config: Any
    q: npt.NDArray[np.float64]
    visits: npt.NDArray[np.int64]
    episodes: int
    rng_state: dict[str, Any]


def write(path: str | os.PathLike, contents: Contents) -> Path:
    """Write ``contents`` to ``path`` (that exact name) atomically; returns the path."""
    arrays = {
        "format": np.array(FORMAT),
        "config": np.array(json.dumps(asdict(contents.config))),
        "rng": np.array(json.dumps(contents.rng_state)),
        "q": contents.q, "visits": contents.visits,
        "episodes": np.array(contents.episodes, np.int64),
    }
    path = Path(path)
    with atomic_path(path) as temp, open(temp, "wb") as file:
        np.savez_compressed(file, **arrays)
    return path


def read(path: str | os.PathLike, make_config: Callable[..., Any],
         table_shape: Callable[[Any], tuple[int, ...]] | None = None) -> Contents:
    """The checked contents of a file ``write`` wrote; ``make_config(**fields)`` builds the
    config, ``table_shape(config)`` gives the shape its tables must have (default: 3x3's) and
    may raise a ValueError of its own (a board other than the one asked for). Raises
    FileNotFoundError for a missing file and ValueError, saying what is wrong, for anything
    else; nothing in the file is ever unpickled."""
    path = Path(path)
    arrays = _read_npz(path)
    config = _config(arrays, path, make_config)
    shape = TABLE_SHAPE if table_shape is None else tuple(table_shape(config))
    return Contents(
        config, _table(arrays, "q", "f", path, shape),
        _table(arrays, "visits", "iu", path, shape), _count(arrays, path),
        _rng_state(arrays, path),
    )


def _bad_file(path: Path, problem: str) -> ValueError:
    return ValueError(f"{path} is not a Q-learning agent file: {problem}; expected an .npz "
                      f"written by QLearningAgent.save (format {FORMAT!r})")


def _read_npz(path: Path) -> dict[str, npt.NDArray]:
    """Every array of an .npz, read without pickle; clear errors for anything else."""
    if not path.exists():
        raise FileNotFoundError(f"no Q-learning agent file at {path}")
    if not path.is_file():
        raise _bad_file(path, "it is not a regular file")
    with open(path, "rb") as file:
        if file.read(4) not in ZIP_MAGIC:  # else np.load would try it as .npy or pickle
            raise _bad_file(path, "it is not a zip archive")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
        return {key: value for key, value in arrays.items() if isinstance(value, np.ndarray)}
    except ValueError as error:
        problem = (
            "it holds an object array, which would need unpickling"
            if "object arrays" in str(error).lower() else f"unreadable ({error})")
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error) as error:
        problem = f"unreadable, perhaps truncated ({type(error).__name__}: {error})"
    raise _bad_file(path, problem)


def _string(arrays: dict[str, npt.NDArray], key: str, path: Path) -> str:
    value = arrays.get(key)
    if value is None or value.shape != () or value.dtype.kind != "U":
        raise _bad_file(path, f"no {key!r} string")
    return str(value)


def _config(arrays: dict[str, npt.NDArray], path: Path, make_config: Callable[..., Any]) -> Any:
    found = _string(arrays, "format", path)
    if found != FORMAT:
        raise _bad_file(path, f"its format is {found!r}")
    try:
        return make_config(**json.loads(_string(arrays, "config", path)))
    except (json.JSONDecodeError, TypeError, ValueError) as error:
        raise _bad_file(path, f"bad hyper-parameters ({error})") from None


def _table(arrays: dict[str, npt.NDArray], key: str, kinds: str, path: Path,
           shape: tuple[int, ...]) -> npt.NDArray:
    table = arrays.get(key)
    kind = "floats" if kinds == "f" else "integers"
    if table is None or table.shape != shape or table.dtype.kind not in kinds:
        found = "missing" if table is None else f"{table.dtype} {table.shape}"
        raise _bad_file(path, f"{key!r} must be {kind} of shape {shape}, found {found}")
    if (~np.isfinite(table) if kinds == "f" else table < 0).any():
        raise _bad_file(path, f"{key!r} holds {'non-finite' if kinds == 'f' else 'negative'} "
                              "values")
    return table


def _count(arrays: dict[str, npt.NDArray], path: Path) -> int:
    episodes = arrays.get("episodes")
    if episodes is None or episodes.shape != () or episodes.dtype.kind not in "iu" \
            or episodes < 0:
        raise _bad_file(path, "'episodes' must be a non-negative integer")
    return int(episodes)


def _rng_state(arrays: dict[str, npt.NDArray], path: Path) -> dict:
    try:
        state = json.loads(_string(arrays, "rng", path))
        probe = np.random.default_rng()
        probe.bit_generator.state = state  # validates it without touching the agent's
    except (json.JSONDecodeError, TypeError, ValueError, KeyError) as error:
        raise _bad_file(path, f"bad generator state ({error})") from None
    return state
