"""The on-disk cache of proven values of boards of 17 to 64 cells, so a second question is a
look-up.

One small JSON file per board, ``proofs-<board>.json`` beside the solved boards of
:mod:`.cache` (``$GYM_TICTACTOE_CACHE``, else the user's cache folder): the value for the side to
move of each proven position, keyed by the position's canonical code (the least of its
symmetric images). Only values are kept, never an unfinished search's guess.

The same trust rules as the table cache: the file is untrusted (a regular file of at most
``_MAX_BYTES`` checked on the open file before a byte is read, then every key and value); one
that fails is ignored with a warning and replaced by the next save; a symbolic link, a folder, a
named pipe or a device at the path is ignored with a warning and never written; saves are
atomic. At most ``MAX_ENTRIES`` positions are kept: past that, new proofs are not added.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from gym_tictactoe import files
from gym_tictactoe.game import Rules
from gym_tictactoe.game.cache import cache_dir

FORMAT = "gym-tictactoe proofs v1"
MAX_ENTRIES = 20_000
_MAX_BYTES = 48 * MAX_ENTRIES + 1024  # a 64-cell code has at most 31 digits


def proofs_path(rules: Rules) -> Path:
    return cache_dir() / f"proofs-{rules.name}.json"


class ProofCache:
    """The proven values of one board, read once from disk and saved after each new one."""

    def __init__(self, rules: Rules) -> None:
        self.rules, self.path = rules, proofs_path(rules)
        self.values: dict[int, int] = {}
        self.writable = True
        try:
            self.values = read(self.path, rules)
        except FileNotFoundError:
            pass
        except files.NotRegularFile as error:  # neither readable nor ours to replace
            self.writable = False
            warnings.warn(f"proving {rules.name} without the proof cache: {error}", stacklevel=2)
        except (OSError, ValueError) as error:
            warnings.warn(f"ignoring the proof cache {self.path}: it is unusable ({error})",
                          stacklevel=2)

    def get(self, code: int) -> int | None:
        return self.values.get(self.rules.canonical(code))

    def put(self, code: int, value: int) -> None:
        key = self.rules.canonical(code)
        if key in self.values or len(self.values) >= MAX_ENTRIES:
            return
        self.values[key] = value
        if self.writable:
            self._save()

    def _save(self) -> None:
        data = {"format": FORMAT, "board": self.rules.name,
                "values": {str(code): value for code, value in self.values.items()}}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.is_symlink():
                raise files.NotRegularFile(f"{self.path} is a symbolic link")
            with files.atomic_path(self.path) as temp:
                temp.write_text(json.dumps(data))
        except (OSError, ValueError) as error:  # a read-only cache must not stop the answer
            self.writable = False
            warnings.warn(f"could not keep the {self.rules.name} proofs in {self.path}: "
                          f"{error}", stacklevel=3)


def read(path: Path, rules: Rules) -> dict[int, int]:
    """The values in a proof cache file, every key and value checked (a ValueError saying
    which); a link or anything but a regular file is a NotRegularFile."""
    data = read_json(path, "proof cache", _MAX_BYTES)
    if not isinstance(data, dict) or set(data) != {"format", "board", "values"} \
            or [data["format"], data["board"]] != [FORMAT, rules.name]:
        raise ValueError(f"it is not a {FORMAT} file for the {rules.name} board")
    return checked_values(data["values"], rules, MAX_ENTRIES)


def read_json(path: Path, what: str, max_bytes: int) -> object:
    """The JSON in a regular file of at most ``max_bytes`` (checked on the open file before a
    byte is read); a link or anything but a regular file is a NotRegularFile."""
    if path.is_symlink():
        raise files.NotRegularFile(f"{path} is a symbolic link, not a {what}")
    with files.open_regular(path, what, max_bytes) as file:
        text = file.read(max_bytes)
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(f"it nests deeper than a {what} does") from None


def checked_values(values: object, rules: Rules, max_entries: int) -> dict[int, int]:
    """``{"code": value}`` as ints, every key a position code of ``rules`` and every value -1,
    0 or 1, at most ``max_entries`` of them; a ValueError saying what is wrong otherwise."""
    if not isinstance(values, dict) or len(values) > max_entries:
        raise ValueError(f"its values are not a mapping of at most {max_entries:,} positions")
    out = {}
    for key, value in values.items():
        if not (key.isascii() and key.isdigit() and len(key) <= 32 and int(key) < rules.n_codes):
            raise ValueError(f"{key[:40]!r} is not a position code of the {rules.name} board")
        if type(value) is not int or value not in (-1, 0, 1):
            raise ValueError(f"the value {value!r} is not -1, 0 or 1")
        out[int(key)] = value
    return out
