"""The on-disk cache of solved boards that are too big to solve at every start.

A solution is saved as an ``.npz`` of plain arrays (loaded with ``allow_pickle=False``): the int8
scores, the packed reachable mask, and a header naming the board, the format and a SHA-256 of the
arrays. It lives in ``$GYM_TICTACTOE_CACHE`` if set, else in the user's cache folder
(``$XDG_CACHE_HOME/gym-tictactoe`` or ``~/.cache/gym-tictactoe``). A file that is unreadable,
corrupt, or of another board or format is rebuilt with a warning; writes are atomic.

A cache file is untrusted: its type and size are checked on the open file before a byte is read
(a regular file, at most the bytes the board's arrays need), so a named pipe never blocks and a
link to a device is never read; anything but a regular file at the path is solved without the
cache, with one warning, and never replaced. Each read or save also removes the temporary files
that writers killed mid-save left beside the entry (see ``gym_tictactoe.files``).

Solving a board that is not cached yet takes seconds to a minute, once: it is said once, as a
``logging`` warning of the ``gym_tictactoe`` logger (shown on stderr where logging is not
configured; ``logging.getLogger("gym_tictactoe").setLevel(logging.ERROR)`` silences it).
"""

from __future__ import annotations

import hashlib
import logging
import os
import warnings
import zipfile
import zlib
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import numpy as np

from gym_tictactoe import files
from gym_tictactoe.files.npz import Entry, array_entry, check_directory, read_entry, short
from gym_tictactoe.game import Rules
from gym_tictactoe.game.solution import Solution

LOG = logging.getLogger(__name__)  # under "gym_tictactoe": one logger silences the package
ENV_VAR = "GYM_TICTACTOE_CACHE"
FORMAT = "gym-tictactoe solution v1"
_TEXT_BYTES = 64 * 1024  # the header: three short strings of 4-byte code points
_ZIP_BYTES = 64 * 1024  # zip headers and directory beside the arrays: ours take a few hundred


def cache_dir() -> Path:
    """Where solved boards are kept (see the module docstring)."""
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gym-tictactoe"


def cache_path(rules: Rules) -> Path:
    return cache_dir() / f"solution-{rules.name}.npz"


def load_or_build(rules: Rules, build: Callable[[Rules], Solution]) -> Solution:
    """The cached solution of ``rules``, or a new one (built, saved, returned)."""
    path = cache_path(rules)
    try:
        cached = _load(path, rules)
    except files.NotRegularFile as error:  # neither readable nor ours to replace
        warnings.warn(f"solving {rules.name} without the cache: {error}", stacklevel=3)
        return build(rules)
    except (OSError, ValueError) as error:
        warnings.warn(f"rebuilding the {rules.name} solution: the cache file {path} "
                      f"is unusable ({error})", stacklevel=3)
        cached = None
    if cached is not None:
        return cached
    # Nothing is wrong, and nothing for the caller to change: a note (logging), not a warning.
    LOG.warning("gym_tictactoe: solving the %s board once (seconds to a minute; the solution is "
                "kept in %s for later runs)", rules.name, path.parent)
    solution = build(rules)
    try:
        save(path, solution.rules, solution.score, solution.reachable)
    except (OSError, ValueError) as error:  # a read-only home must not stop the game
        warnings.warn(f"could not cache the {rules.name} solution in {path}: {error}",
                      stacklevel=3)
    return solution


def _load(path: Path, rules: Rules) -> Solution | None:
    """The solution cached at ``path``, or None when there is none yet."""
    if not path.parent.is_dir():
        return None
    files.replaceable(path)  # anything but a regular file there is neither read nor replaced
    _remove_dead_writers_files(path)
    if not os.path.lexists(path):
        return None
    return Solution(rules, *_read(path, rules))


def _remove_dead_writers_files(path: Path) -> None:
    """Saves clean up after writers killed mid-save, but a whole cache is only read, never
    saved again: reads clean up too."""
    with suppress(OSError):  # a missing or read-only folder: nothing to clean, or not ours
        files.remove_stale_temporaries(files.target_of(path), path.suffix)


def save(path: Path, rules: Rules, score: np.ndarray, reachable: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    packed = np.packbits(reachable)
    header = np.array([FORMAT, rules.name, _digest(score, packed)])
    with files.atomic_path(path) as temp, open(temp, "wb") as handle:
        np.savez(handle, header=header, score=score, reachable=packed)


def _read(path: Path, rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """The scores and reachable mask of a cache file, its type and size checked before it is
    opened and each array's size and header before its data is read (``gym_tictactoe.files.npz``): a
    damaged or hostile file is a ValueError (or an OSError), never a huge allocation."""
    entries = {"header": Entry("U", None, (3,), _TEXT_BYTES),
               "score": array_entry("i", 1, (rules.n_codes,)),
               "reachable": array_entry("u", 1, ((rules.n_codes + 7) // 8,))}
    most = sum(entry.max_bytes for entry in entries.values()) + _ZIP_BYTES
    with files.open_regular(path, "cache file", most) as file:
        try:
            check_directory(file, len(entries), lambda problem: ValueError(
                f"not a readable .npz: {problem}"))
            with zipfile.ZipFile(file) as archive:
                names = archive.namelist()
                expected = [f"{key}.npy" for key in entries]
                if sorted(names) != sorted(expected):
                    raise ValueError(f"its entries are {short(names)}, not {expected}")
                header = read_entry(archive, "header", entries.pop("header"), ValueError)
                if header.tolist()[:2] != [FORMAT, rules.name]:  # first: the clearest reason
                    raise ValueError(f"it is not a {FORMAT} file for the {rules.name} board")
                score, packed = (read_entry(archive, key, entry, ValueError)
                                 for key, entry in entries.items())
        except (OSError, EOFError, KeyError, RuntimeError, NotImplementedError, zlib.error,
                zipfile.BadZipFile) as error:  # a damaged, encrypted or odd zip
            problem = f"{type(error).__name__}: {short(error)}"
            raise ValueError(f"not a readable .npz ({problem})") from None
    if _digest(score, packed) != header[2]:
        raise ValueError("its checksum does not match its contents")
    return score, np.unpackbits(packed, count=rules.n_codes).view(bool)


def _digest(score: np.ndarray, packed: np.ndarray) -> str:
    digest = hashlib.sha256(score.tobytes())
    digest.update(packed.tobytes())
    return digest.hexdigest()
