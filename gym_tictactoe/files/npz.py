"""Reading ``.npz`` files that may be hostile: each array checked before any of its data is read.

``np.load`` allocates whatever an ``.npy`` header declares before reading a byte of data, so a
small file can ask for terabytes. Here each member's size in the zip and its header (dtype,
shape) are checked against what the caller expects first; object arrays (which would need
unpickling), headers longer than ours and compression that ``zipfile`` inflates without bound
(bzip2, lzma) are refused, each with one line; :func:`check_directory` bounds the zip's
directory before ``zipfile`` reads it; :func:`check_finite` refuses NaN and infinities. Used by
the Q-table files (``agents.tabular.files``), AlphaZero's model and checkpoint files
(``agents.alphazero``) and the solution cache (``gym_tictactoe.game.cache``); ``bad(problem)``
builds the caller's own error.
"""

from __future__ import annotations

import ast
import io
import os
import struct
import zipfile
from collections.abc import Callable
from typing import Any, BinaryIO, NamedTuple

import numpy as np
import numpy.typing as npt

HEADER_BYTES = 4096  # an .npy header is a few hundred bytes; far more is not ours
DIRECTORY_ENTRY_BYTES = 1024  # a zip directory entry of ours: about 100 bytes with zip64 fields
_END = struct.Struct("<4s4H2LH")  # a zip's end-of-central-directory record
Bad = Callable[[str], Exception]


class Entry(NamedTuple):
    """What one array of a file must be: its dtype kind and item size, its shape, and the most
    bytes its member of the zip may hold (header included)."""

    kind: str
    itemsize: int | None  # None: any (strings)
    shape: tuple[int, ...]
    max_bytes: int


def array_entry(kind: str, itemsize: int, shape: tuple[int, ...]) -> Entry:
    """An entry for a numeric array of ``shape``: its data plus at most a header's bytes."""
    return Entry(kind, itemsize, shape, int(np.prod(shape)) * itemsize + HEADER_BYTES)


def describe(entry: Entry) -> str:
    """``float64``, ``int8``, ``a string``: what the entry's dtype must be, in words."""
    return "a string" if entry.kind == "U" else np.dtype(f"{entry.kind}{entry.itemsize}").name


def check_directory(file: BinaryIO, members: int, bad: Bad, exact: bool = True) -> None:
    """Refuse a zip whose directory is not that of ``members`` arrays (at most ``members``
    entries when not ``exact``), before ``zipfile`` reads it: zipfile keeps an object per entry,
    so a directory of many tiny entries costs several times the file's size. Our writers
    (zipfile, numpy) end a file with a plain end record, without a comment."""
    if file.seek(0, os.SEEK_END) < _END.size:
        raise bad("it is too short to be a zip archive")
    file.seek(-_END.size, os.SEEK_END)
    signature, _, _, here, total, size, _, comment = _END.unpack(file.read(_END.size))
    file.seek(0)
    if signature != b"PK\x05\x06" or comment:
        raise bad("not a readable zip archive, perhaps truncated or damaged (it does not end "
                  "with a plain directory record)")
    if size > members * DIRECTORY_ENTRY_BYTES or (
            here != members or total != members if exact else max(here, total) > members):
        ours = members if exact else f"at most {members}"
        raise bad(f"its zip directory lists {total:,} entries in {size:,} bytes; ours hold "
                  f"{ours}")


def read_entry(archive: zipfile.ZipFile, key: str, entry: Entry, bad: Bad) -> npt.NDArray:
    """The array ``key.npy`` of ``archive``, after its size and .npy header match ``entry``."""
    info = archive.getinfo(f"{key}.npy")
    if info.file_size > entry.max_bytes:
        raise bad(f"entry {key!r} holds {info.file_size:,} bytes, more than the "
                  f"{entry.max_bytes:,} it can need")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        # zipfile inflates bzip2 and lzma data without bound, whatever we ask it to read
        raise bad(f"entry {key!r} is compressed with method {info.compress_type}; numpy "
                  "writes stored or deflated entries")
    with archive.open(info) as member:
        shape, fortran, dtype = _header(member, key, bad)
        if dtype.hasobject:
            raise bad(f"{key!r} holds an object array, which would need unpickling")
        if dtype.itemsize == 0:  # '<U0', '|S0', '|V0': numpy cannot make an array of them
            raise bad(f"entry {key!r} has a dtype of zero size ({dtype.str!r}); "
                      f"{key!r} must be {describe(entry)}")
        if (dtype.kind != entry.kind or shape != entry.shape
                or (entry.itemsize is not None and dtype.itemsize != entry.itemsize)):
            raise bad(f"{key!r} must be {describe(entry)} of shape {entry.shape}, found "
                      f"{short(dtype)} {short(shape)}")
        size = dtype.itemsize * int(np.prod(shape))
        data = member.read(size)
    if len(data) != size:
        raise bad(f"entry {key!r} is truncated")
    array = np.frombuffer(data, dtype).reshape(shape, order="F" if fortran else "C")
    return array.astype(array.dtype.newbyteorder("="))


def check_finite(array: npt.NDArray, key: str, bad: Bad) -> npt.NDArray:
    """``array`` (of entry ``key``) if every value in it is finite, else ``bad(problem)``: what
    a model or checkpoint file holds must not make a network or table compute NaN."""
    finite = np.isfinite(array).ravel()
    if not finite.all():
        raise bad(f"entry {key!r} holds values that are not finite (NaN or infinite): "
                  f"{finite.size - np.count_nonzero(finite):,} of {finite.size:,}, the first at "
                  f"index {finite.argmin():,}")
    return array


def _header(member: Any, key: str, bad: Bad) -> tuple[tuple[int, ...], bool, np.dtype]:
    """Shape, Fortran order and dtype from an .npy header, read without its data. The header's
    length is checked first: numpy's own refusal of a long one is three lines of advice."""
    try:
        version = np.lib.format.read_magic(member)
    except ValueError as error:
        raise bad(f"entry {key!r} is not an .npy array ({short(error)})") from None
    if version not in ((1, 0), (2, 0)):
        raise bad(f"entry {key!r} is .npy format version {version[0]}.{version[1]}; numpy "
                  "writes ours in versions 1.0 and 2.0")
    width = 2 if version == (1, 0) else 4
    length = member.read(width)
    header_bytes = int.from_bytes(length, "little")
    if header_bytes > HEADER_BYTES:
        raise bad(f"entry {key!r} has an .npy header of {header_bytes:,} bytes, more than "
                  f"the {HEADER_BYTES:,} an array of ours takes")
    text = member.read(header_bytes)
    read_header = getattr(np.lib.format, f"read_array_header_{version[0]}_0")
    try:
        # numpy retries a header that is no Python literal as Python 2's, with a warning
        ast.literal_eval(text.decode("latin1"))
        return read_header(io.BytesIO(length + text), max_header_size=HEADER_BYTES)
    except (ValueError, TypeError, SyntaxError, RecursionError) as error:
        raise bad(f"entry {key!r} has no valid .npy header ({short(error)})") from None


def short(thing: object, limit: int = 120) -> str:
    """``thing`` as one line of at most ``limit`` characters: errors quote what they found,
    which a hostile file makes as long as it likes."""
    text = " ".join(str(thing).split())
    return text if len(text) <= limit else f"{text[:limit - 3]}..."
