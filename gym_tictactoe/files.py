"""Atomic writes: a crash or an error never leaves a half-written file under the real name.

Every file we save is written to a temporary file beside its target and renamed onto it. The
temporary file is named ``.NAME.PID.XXXXXXXX`` plus a suffix, after the writing process's id, so
that a later save to the same target can tell the leftovers of a writer that was killed outright
(SIGKILL, a power cut: no ``finally`` runs) from a save still in progress, and remove them.

Saving onto a symbolic link writes the file the link points to and keeps the link (as ``open``
for writing does); the link itself is never replaced.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """A temporary path beside ``path`` to write in the block, renamed onto ``path`` after it.

    The file exists, empty, as ``.NAME.PID.XXXXXXXX`` plus ``suffix`` (by default ``path``'s: SB3's
    ``save`` adds one that is missing). On success it is made readable by all and replaces
    ``path``; on error it is removed and ``path`` stays as it was. Temporary files of the same
    target left by dead processes are removed first. A missing folder is a FileNotFoundError
    naming it.
    """
    path = target_of(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot save to {path}: no directory {path.parent}")
    suffix = path.suffix if suffix is None else suffix
    remove_stale_temporaries(path, suffix)
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", dir=path.parent,
                                    suffix=suffix)
    os.close(handle)
    temp = Path(name)
    try:
        yield temp
        os.chmod(temp, 0o644)  # mkstemp makes it private; what we save is ordinary data
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def target_of(path: str | os.PathLike) -> Path:
    """The file a save to ``path`` writes: ``path`` itself, or where it points if it is a link."""
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def remove_stale_temporaries(path: Path, suffix: str) -> list[Path]:
    """Remove the temporary files of ``path`` whose writing process no longer exists; returns
    them. Files of live processes (a concurrent save) are left alone."""
    pattern = re.compile(rf"\.{re.escape(path.name)}\.(\d+)\.[a-z0-9_]{{8}}{re.escape(suffix)}")
    removed = []
    for entry in os.scandir(path.parent):
        found = pattern.fullmatch(entry.name)
        if found and not _process_exists(int(found.group(1))):
            Path(entry.path).unlink(missing_ok=True)
            removed.append(Path(entry.path))
    return removed


def _process_exists(pid: int) -> bool:
    if os.name != "posix" or pid == os.getpid():
        return True  # elsewhere os.kill(pid, 0) is no probe; our own pid may be another thread
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone, or an id no process ever had
        return False
    except PermissionError:  # another user's process
        return True
    return True


def existing_file(path: str | os.PathLike, what: str) -> Path:
    """``path`` if it is a regular file (or a link to one). FileNotFoundError when nothing is
    there; a ValueError saying what is there instead (a folder, a device such as /dev/null)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no {what} at {path}")
    if not path.is_file():
        kind = "a folder" if path.is_dir() else "not a regular file (a device, a pipe...)"
        raise ValueError(f"{path} is {kind}, not a {what}")
    return path
