"""Zip archives that may be hostile: opened in one place, every way of being broken one error.

zipfile reports a damaged archive in many ways: BadZipFile, NotImplementedError (an unknown
"version needed" or compression method), OSError (an offset before the start of the file),
EOFError (a member cut short), zlib.error or LZMAError (a compressed stream that is not),
RuntimeError (an encrypted member), UnicodeDecodeError (a name flagged UTF-8 that is not),
struct.error, OverflowError. The model files (``agents.models``, ``agents.q_files``,
``agents.sb3_files``) open their archives only through :func:`open_zip`, which turns each into
the caller's own one-line error.
"""

from __future__ import annotations

import os
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

try:
    from lzma import LZMAError
except ImportError:  # Python built without lzma: zipfile then refuses LZMA members itself
    LZMAError = zlib.error

ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, LZMAError, EOFError, OSError,
              NotImplementedError, RuntimeError, UnicodeDecodeError, struct.error, OverflowError)
Bad = Callable[[str], Exception]


def one_line(error: BaseException) -> str:
    """``Type: message`` on one line, however many lines the message had."""
    return f"{type(error).__name__}: {' '.join(str(error).split())}"


@contextmanager
def open_zip(file: str | os.PathLike | IO[bytes], bad: Bad) -> Iterator[zipfile.ZipFile]:
    """The archive, open for the block; any of ``ZIP_ERRORS``, raised while opening it or
    reading its members in the block, becomes ``bad("not a readable zip archive (...)")``.
    Errors of other types raised in the block (the caller's own) pass unchanged."""
    try:
        with zipfile.ZipFile(file) as archive:
            yield archive
    except ZIP_ERRORS as error:
        raise bad(f"not a readable zip archive, perhaps truncated or damaged "
                  f"({one_line(error)})") from None


def read_member(archive: zipfile.ZipFile, name: str, max_bytes: int, bad: Bad) -> bytes:
    """Member ``name``, refused unread when it would inflate to more than ``max_bytes``.
    zipfile never inflates a member beyond the size its directory declares, and checks the
    CRC on reading it whole."""
    info = archive.getinfo(name)
    if info.file_size > max_bytes:
        raise bad(f"member {name!r} holds {info.file_size:,} bytes, more than the "
                  f"{max_bytes:,} it can need")
    return archive.read(info)
