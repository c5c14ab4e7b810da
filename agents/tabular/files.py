"""Q-learning agent files: an ``.npz`` of plain arrays, written atomically, read without pickle.

The arrays are ``format`` (``FORMAT``), ``config`` and ``rng`` (JSON strings), ``q`` (float64),
``visits`` and ``episodes`` (int64); the config holds the board (``rows``, ``cols``,
``win_length``; files without them are 3x3x3), which fixes the tables' shape. :func:`read` never
trusts a file: it refuses unknown or missing entries, checks each entry's size in the zip and
its .npy header (dtype, shape) before reading any data, then the values, and says what is wrong
with a file that is not such a file.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from agents.archives import MAX_FILE_BYTES, check_compression, open_zip
from gym_tictactoe import game
from gym_tictactoe.files import atomic_path, open_regular
from gym_tictactoe.files.npz import Entry, _header, array_entry, check_finite, describe, read_entry

FORMAT = "gym_tictactoe.q_learning/1"
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip's first entry, or an empty zip
MAX_COUNT = 2**62  # visits and episodes: far above any training, and n + 1 still fits int64


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
         table_shape: Callable[[Any], tuple[int, ...]]) -> Contents:
    """The checked contents of a file ``write`` wrote; ``make_config(**fields)`` builds the
    config, ``table_shape(config)`` gives the shape its tables must have and
    may raise a ValueError of its own (a board other than the one asked for). Raises
    FileNotFoundError for a missing file and ValueError, saying what is wrong, for anything
    else; nothing in the file is ever unpickled."""
    path = Path(path)
    config, arrays = _read_npz(path, make_config, table_shape)
    return Contents(config, _table(arrays, "q", path), _table(arrays, "visits", path),
                    _count(arrays, path), _rng_state(arrays, path))


class _BadFile(ValueError):
    """A file that is not ours, with our message (told apart from errors raised by libraries)."""


def _bad_file(path: Path, problem: str) -> ValueError:
    return _BadFile(f"{path} is not a Q-learning agent file: {problem}; expected an .npz "
                      f"written by QLearningAgent.save (format {FORMAT!r})")


_TEXT_BYTES = 64 * 1024  # JSON of a few hundred characters, stored as 4-byte code points
ENTRIES = {
    "format": Entry("U", None, (), _TEXT_BYTES), "config": Entry("U", None, (), _TEXT_BYTES),
    "rng": Entry("U", None, (), _TEXT_BYTES), "episodes": Entry("i", 8, (), 256),
}
TABLES = {"q": "f", "visits": "i"}  # float64 and int64 of the board's table shape


def _table_entry(key: str, shape: tuple[int, ...]) -> Entry:
    return array_entry(TABLES[key], 8, shape)


def _read_npz(path: Path, make_config: Callable[..., Any],
              table_shape: Callable[[Any], tuple[int, ...]]) -> tuple[Any, dict]:
    """The config and the expected arrays of an .npz, read in one opening of the archive, each
    checked from its zip entry and .npy header before any data is read, never unpickled.
    The tables' headers are checked against the config's board before ``table_shape`` (which
    may build the board's index: seconds on 16 cells) is asked for their exact shape."""
    with open_regular(path, "Q-learning agent file", MAX_FILE_BYTES) as file:
        if file.read(4) not in ZIP_MAGIC:  # else np.load would try it as .npy or pickle
            raise _bad_file(path, "it is not a zip archive")
    with open_zip(path, partial(_bad_file, path), "Q-learning agent file") as archive:
        _check_members(archive, path)
        arrays = {key: _read_entry(archive, key, path, entry)
                  for key, entry in ENTRIES.items()}
        config = _config(arrays, path, make_config)
        _check_declared_tables(archive, path, config)
        # A board other than the one asked for is table_shape's own ValueError.
        shape = tuple(table_shape(config))
        arrays.update({key: _read_entry(archive, key, path, _table_entry(key, shape))
                       for key in TABLES})
    return config, arrays


def _check_declared_tables(archive: zipfile.ZipFile, path: Path, config: Any) -> None:
    """The tables' .npy headers fit the config's board: one column per cell, at most a row
    per code (exactly one on the dense boards of at most ``game.TABLE_CELLS`` cells)."""
    cells = getattr(config, "rows", 3) * getattr(config, "cols", 3)
    n_codes, dense = 3**cells, cells <= game.TABLE_CELLS
    expected = f"({n_codes}, {cells})" if dense else f"(rows, {cells}) with rows <= {n_codes}"
    shapes = []
    for key in TABLES:
        check_compression(archive.getinfo(f"{key}.npy"), partial(_bad_file, path))
        with archive.open(f"{key}.npy") as member:
            shape, _, dtype = _header(member, key, partial(_bad_file, path))
        if dtype.hasobject:
            raise _bad_file(path, f"{key!r} holds an object array, which would need unpickling")
        if not (len(shape) == 2 and shape[1] == cells and 1 <= shape[0] <= n_codes
                and (shape[0] == n_codes or not dense)):
            raise _bad_file(path, f"{key!r} must be {describe(_table_entry(key, (0,)))} of shape "
                                  f"{expected}, found {dtype} {shape} (its config's board has "
                                  f"{cells} cells)")
        shapes.append(shape)
    if shapes[0] != shapes[1]:
        raise _bad_file(path, f"its tables differ in shape: {shapes[0]} and {shapes[1]}")


def _check_members(archive: zipfile.ZipFile, path: Path) -> None:
    names = archive.namelist()
    expected = {f"{key}.npy" for key in (*ENTRIES, *TABLES)}
    unknown = sorted(set(names) - expected)
    if unknown or len(names) != len(set(names)):
        raise _bad_file(path, f"unexpected entries {unknown or 'repeated'}; a Q-learning file "
                              f"holds exactly {sorted(expected)}")
    missing = sorted(expected - set(names))
    if missing:
        raise _bad_file(path, f"missing entries {missing}")


def _read_entry(archive: zipfile.ZipFile, key: str, path: Path, entry: Entry) -> npt.NDArray:
    return read_entry(archive, key, entry, partial(_bad_file, path))


def _config(arrays: dict[str, npt.NDArray], path: Path, make_config: Callable[..., Any]) -> Any:
    found = str(arrays["format"])  # a string: checked on reading
    if found != FORMAT:
        raise _bad_file(path, f"its format is {found!r}")
    try:
        return make_config(**json.loads(str(arrays["config"])))
    except (json.JSONDecodeError, RecursionError, TypeError, ValueError) as error:
        raise _bad_file(path, f"bad hyper-parameters ({error})") from None


def _table(arrays: dict[str, npt.NDArray], key: str, path: Path) -> npt.NDArray:
    table = arrays[key]  # shape and dtype checked on reading
    if key == "q":
        check_finite(table, key, partial(_bad_file, path))
    if key == "visits" and ((table < 0) | (table > MAX_COUNT)).any():
        raise _bad_file(path, f"'visits' must be counts from 0 to {MAX_COUNT:,}")
    return table


def _count(arrays: dict[str, npt.NDArray], path: Path) -> int:
    episodes = int(arrays["episodes"])
    if not 0 <= episodes <= MAX_COUNT:
        raise _bad_file(path, f"'episodes' must be a count from 0 to {MAX_COUNT:,}")
    return episodes


def _rng_state(arrays: dict[str, npt.NDArray], path: Path) -> dict:
    try:
        state = json.loads(str(arrays["rng"]))
        probe = np.random.default_rng()
        probe.bit_generator.state = state  # validates it without touching the agent's
    except (json.JSONDecodeError, RecursionError, TypeError, ValueError, KeyError,
            OverflowError) as error:  # OverflowError: a number beyond the state's 64 bits
        raise _bad_file(path, f"bad generator state ({error})") from None
    return state
