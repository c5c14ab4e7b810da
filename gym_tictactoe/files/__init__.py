"""Files we write and read: atomic writes that only ever replace a regular file, checked reads.

**Writes.** Every file we save is written to a temporary file beside its target and renamed onto
it, so a crash or an error never leaves a half-written file under the real name. A save only
ever replaces a regular file or creates a missing one: a folder, a device, a named pipe or a
socket at the path is a :class:`NotRegularFile` error naming the path and what is there, and
the check is made again just before the rename (something else may have taken the name while
we wrote). A symbolic link is followed: if it leads to a regular file, that file is replaced and
the link kept (as ``open`` for writing does); a link to anything else, or to nothing (GNU ``cp``
likewise refuses to write through a dangling link), is refused.

The temporary file is named ``.NAME.PID.XXXXXXXX`` plus a suffix, after the writing process's
id, and its writer holds a lock on it, so that a later save or cache read of the same target
can tell the leftovers of a writer that was killed outright (SIGKILL, a power cut: no
``finally`` runs) from a save still in progress, and remove them.

**Reads.** Whatever is at a path we read is untrusted: :func:`existing_file` says what is there
when it is not a regular file without opening it, and :func:`open_regular` opens a file
non-blocking and checks the open file itself (a regular file, at most so many bytes), so a
named pipe never blocks and a device such as ``/dev/zero`` is never read.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; a writer's process id alone tells
    fcntl = None  # type: ignore[assignment]


class NotRegularFile(ValueError):
    """Something other than a regular file at a path we were asked to read or replace."""


@contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """A temporary path beside ``path`` to write in the block, renamed onto ``path`` after it.

    The file exists, empty, as ``.NAME.PID.XXXXXXXX`` plus ``suffix`` (by default ``path``'s: SB3's
    ``save`` adds one that is missing). On success it is made readable by all and replaces
    ``path`` (or the regular file ``path`` links to); on error it is removed and ``path`` stays
    as it was. Temporary files of the same target left by dead processes are removed first. A
    missing folder is a FileNotFoundError naming it; anything at ``path`` but a regular file is
    a :class:`NotRegularFile` error (see the module docstring).
    """
    target = replaceable(path)
    suffix = target.suffix if suffix is None else suffix
    remove_stale_temporaries(target, suffix)
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", dir=target.parent,
                                    suffix=suffix)
    temp = Path(name)
    try:
        _lock(handle)  # held until we are done: a live writer's file is never removed
        yield temp
        os.chmod(temp, 0o644)  # mkstemp makes it private; what we save is ordinary data
        replaceable(path, target)  # again: what is there may have changed while we wrote
        os.replace(temp, target)
    finally:
        os.close(handle)
        temp.unlink(missing_ok=True)


def _lock(handle: int) -> None:
    if fcntl is not None:
        with suppress(OSError):  # a file system without locks: the process id alone tells
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)


def replaceable(path: str | os.PathLike, target: Path | None = None) -> Path:
    """The file a save to ``path`` replaces or creates: ``path``, or the regular file its link
    leads to. FileNotFoundError for a missing folder; :class:`NotRegularFile` when something
    else than a regular file is there, or the link leads nowhere (``target``: the file a first
    call found, checked again)."""
    path = Path(path)
    target = target_of(path) if target is None else target
    if not target.parent.is_dir():
        raise FileNotFoundError(f"cannot save to {path}: no directory {target.parent}")
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        if target == path:
            return target  # nothing there yet: ours to create
        raise NotRegularFile(f"{path} is a link to {target}, which does not exist: refusing "
                             "to write through it") from None
    if not stat.S_ISREG(mode):
        raise NotRegularFile(f"{_named(path, target)} is not a regular file but {kind(mode)}: "
                             "refusing to replace it")
    return target


def target_of(path: str | os.PathLike) -> Path:
    """The file a save to ``path`` writes: ``path`` itself, or where it points if it is a link."""
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def kind(mode: int) -> str:
    """What a file of ``mode`` (``os.stat``'s ``st_mode``) is, in words: ``a folder``..."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


_KINDS = ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISLNK, "a symbolic link (a loop, or one made while we wrote)"))


def _named(path: Path, target: Path) -> str:
    return str(path) if target == path else f"{path} (a link to {target})"


def remove_stale_temporaries(path: Path, suffix: str) -> list[Path]:
    """Remove the temporary files of ``path`` whose writing process no longer exists (and that
    no process holds locked); returns them. A concurrent save's files are left alone."""
    pattern = re.compile(rf"\.{re.escape(path.name)}\.(\d+)\.[a-z0-9_]{{8}}{re.escape(suffix)}")
    removed = []
    for entry in os.scandir(path.parent):
        found = pattern.fullmatch(entry.name)
        if (found and entry.is_file(follow_symlinks=False)
                and not _process_exists(int(found.group(1))) and _remove_unlocked(entry.path)):
            removed.append(Path(entry.path))
    return removed


_TEMPORARY = re.compile(r"\..+\.(\d+)\.[a-z0-9_]{8}(\.[A-Za-z0-9]+)?")


def remove_temporaries(folder: str | os.PathLike, any_writer: bool = False) -> list[Path]:
    """Remove the temporary files of :func:`atomic_path` in ``folder``, whatever their target,
    that no writer holds locked and whose writing process is gone (``any_writer``: whichever
    process wrote them, for a caller that knows none writes there now, such as the holder of
    a run folder's lock: a killed writer's process id may live on as a zombie or another
    process's); returns them."""
    removed = []
    for entry in os.scandir(Path(folder)):
        found = _TEMPORARY.fullmatch(entry.name)
        if (found and entry.is_file(follow_symlinks=False)
                and (any_writer or not _process_exists(int(found.group(1))))
                and _remove_unlocked(entry.path)):
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


def _remove_unlocked(name: str) -> bool:
    """Remove the regular file ``name`` unless a writer holds its lock (a process id that looks
    dead may be a live writer's on another host or in another container sharing the folder)."""
    try:
        handle = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                         | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False  # gone already, or not ours to read
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return False
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.unlink(name)
        return True
    except OSError:  # locked by a live writer, or not ours to remove
        return False
    finally:
        os.close(handle)


def existing_file(path: str | os.PathLike, what: str) -> Path:
    """``path`` if it is a regular file (or a link to one), found without opening it.
    FileNotFoundError when nothing is there; a :class:`NotRegularFile` (a ValueError) saying
    what is there instead (a folder, a device such as /dev/null, a named pipe)."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode  # follows links; never opens, so a pipe cannot block
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(f"no {what} at {path}") from None
    except OSError as error:
        if error.errno != errno.ELOOP:
            raise
        raise NotRegularFile(f"{path} is a loop of symbolic links, not a {what}") from None
    if stat.S_ISDIR(mode):
        raise NotRegularFile(f"{path} is a folder, not a {what}")
    if not stat.S_ISREG(mode):
        raise NotRegularFile(f"{path} is not a regular file but {kind(mode)}, so not a {what}")
    return path


def open_regular(path: str | os.PathLike, what: str, max_bytes: int) -> BinaryIO:
    """``path`` opened for reading in binary, once the open file itself is known to be a
    regular file of at most ``max_bytes`` (a larger one is a ValueError: it is not ours).
    Opened non-blocking, so a named pipe swapped in after the first check cannot block."""
    path = existing_file(path, what)  # its clear messages, before anything is opened
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        info = os.fstat(handle)  # what we opened, whatever the path names by now
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(f"{path} is not a regular file but {kind(info.st_mode)}, so "
                                 f"not a {what}")
        if info.st_size > max_bytes:
            raise ValueError(f"{path} holds {info.st_size:,} bytes, more than the "
                             f"{max_bytes:,} a {what} can need")
        return os.fdopen(handle, "rb")  # O_NONBLOCK means nothing for a regular file
    except BaseException:
        with suppress(OSError):
            os.close(handle)
        raise
