"""Zip archives that may be hostile: opened in one place, every way of being broken one error.

zipfile reports a damaged archive in many ways: BadZipFile, NotImplementedError (an unknown
"version needed" or compression method), OSError (an offset before the start of the file),
EOFError (a member cut short), zlib.error or LZMAError (a compressed stream that is not),
RuntimeError (an encrypted member), UnicodeDecodeError (a name flagged UTF-8 that is not),
struct.error, OverflowError. The model files (``agents.models``, ``agents.tabular.files``,
``agents.sb3.files``) open their archives only through :func:`open_zip`, which turns each into
the caller's own one-line error.
"""

from __future__ import annotations

import os
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from gym_tictactoe.files import open_regular
from gym_tictactoe.files.npz import check_directory

try:
    from lzma import LZMAError
except ImportError:  # Python built without lzma: zipfile then refuses LZMA members itself
    LZMAError = zlib.error

MAX_MEMBERS = 16  # a Q-table file holds 6 members, an SB3 one 7
MAX_FILE_BYTES = 2**34  # far above any model of ours: each member has its own, tighter bound

ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, LZMAError, EOFError, OSError,
              NotImplementedError, RuntimeError, UnicodeDecodeError, struct.error, OverflowError)
Bad = Callable[[str], Exception]


def one_line(error: BaseException) -> str:
    """``Type: message`` on one line, however many lines the message had."""
    return f"{type(error).__name__}: {' '.join(str(error).split())}"


@contextmanager
def open_zip(path: str | os.PathLike, bad: Bad, what: str,
             max_members: int = MAX_MEMBERS) -> Iterator[zipfile.ZipFile]:
    """The archive at ``path``, open for the block. The file is opened once, as a regular file
    (``gym_tictactoe.files.open_regular``: its own FileNotFoundError or ValueError), its
    directory bounded to ``max_members`` entries before zipfile parses it (an object per
    entry: a directory of many tiny entries costs several times the file's size); any of
    ``ZIP_ERRORS``, raised while opening it or reading its members in the block, becomes
    ``bad("not a readable zip archive (...)")``. The caller's own errors pass unchanged."""
    with open_regular(path, what, MAX_FILE_BYTES) as file:
        check_directory(file, max_members, bad, exact=False)
        try:
            with zipfile.ZipFile(file) as archive:
                yield archive
        except ZIP_ERRORS as error:
            raise bad(f"not a readable zip archive, perhaps truncated or damaged "
                      f"({one_line(error)})") from None


def read_member(archive: zipfile.ZipFile, name: str, max_bytes: int, bad: Bad) -> bytes:
    """Member ``name``, refused unread when it would inflate to more than ``max_bytes`` or is
    compressed otherwise than stored or deflated (zipfile inflates bzip2 and lzma data without
    bound). zipfile never inflates a member beyond the size its directory declares, and checks
    the CRC on reading it whole."""
    info = archive.getinfo(name)
    if info.file_size > max_bytes:
        raise bad(f"member {name!r} holds {info.file_size:,} bytes, more than the "
                  f"{max_bytes:,} it can need")
    check_compression(info, bad)
    return archive.read(info)


def check_compression(info: zipfile.ZipInfo, bad: Bad) -> None:
    """Only stored or deflated members, what our writers (zipfile, numpy, torch) make."""
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise bad(f"member {info.filename!r} is compressed with method {info.compress_type}; "
                  "ours are stored or deflated")
