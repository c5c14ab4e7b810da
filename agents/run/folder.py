"""A run's folder, written whole or not at all, never over another run.

Run folders are numbered as rl_zoo3 numbers its logs (``logs/ALGO/ENV_1``, ``ENV_2``, ...):
``OUT/STEM_N``, where ``N`` is one more than the greatest ``N`` already in ``OUT`` for that
stem (``rl_zoo3.utils.get_latest_run_id``), so the first run is ``STEM_1`` and a later run never
replaces an earlier one.

While a run trains, its files go to a temporary sibling folder ``OUT/.STEM.PID.XXXXXXXX.partial``
(named after the writing process, like ``gym_tictactoe.files``' temporary files). At the end the
number is reserved with an exclusive ``os.mkdir`` (two runs finishing at once get different
numbers) and the temporary folder is renamed onto it, so a run folder holds every file of its run
or does not exist. A failure removes the temporary folder; a writer killed outright leaves it,
and the next run of the same stem in ``OUT`` removes it once that process is gone.

An AlphaZero run reserves its number when it starts and saves its training state there as it
trains (``checkpoint.npz``, replaced atomically at each checkpoint), so that a killed run can be
continued (``train.py --resume OUT/STEM_N``, :meth:`RunFolder.reopen`): a folder holding a
checkpoint but no ``results.json`` is an unfinished run. When it ends, its other files are moved
in beside the checkpoint, ``results.json`` last. While it trains it holds a lock on the folder
itself (``flock`` on the open folder, released by the system when the process ends in any way),
so a second ``--resume`` of it is refused in one line whatever happens to the folder's files;
``.training.lock``, a file beside the checkpoint, only shows that a run holds it (removed at the
end). A reserved folder that holds nothing to resume from (no checkpoint: a run killed outright
before its first one) is removed by the next run of the same stem in ``OUT`` once no process
holds its lock, as the temporary folders are; and a reopened or finished folder is rid of the
temporary files that writers killed in the middle of a checkpoint left there.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gym_tictactoe.files import (
    _process_exists,  # the same liveness probe as for files
    remove_temporaries,
)

try:
    import fcntl
except ImportError:  # Windows: a lock file (filelock) instead of a lock on the folder
    fcntl = None  # type: ignore[assignment]

NAME_MAX = 255  # bytes in a folder name on common file systems
# The temporary folder's name adds ".", ".PID" (up to 7 digits), ".XXXXXXXX" and ".partial".
STEM_MAX = NAME_MAX - 26
FULL = (errno.ENOSPC, errno.EDQUOT)
LOCK = ".training.lock"  # in a run folder while a process trains there (RunFolder.lock)
STATE = "checkpoint.npz"  # what a run that can resume saves there (agents.alphazero.state)


class OutputError(Exception):
    """Writing the run's files failed (a full disk, a vanished or read-only folder): one line."""


def check_stem(stem: str) -> str:
    """``stem`` if it can name run folders; else a ValueError saying what is allowed."""
    if not stem or Path(stem).name != stem or stem in (".", ".."):
        raise ValueError(f"--name must be a plain folder name; got {stem!r}")
    if not stem.isprintable():  # a newline or an escape sequence would garble every listing
        raise ValueError(f"--name must be printable: no control characters such as a newline "
                         f"or an escape; got {stem!r}")
    size = len(os.fsencode(stem))
    if size > STEM_MAX:
        raise ValueError(f"--name is {size} bytes long; a folder name has at most {NAME_MAX}, "
                         f"and the run number and temporary name need {NAME_MAX - STEM_MAX} "
                         f"of them: at most {STEM_MAX}")
    return stem


def latest_run_id(out: Path, stem: str) -> int:
    """The greatest ``N`` of the entries ``STEM_N`` in ``out`` (0 when there are none)."""
    pattern = re.compile(rf"{re.escape(stem)}_([0-9]+)")
    found = [int(match.group(1)) for entry in os.scandir(out)
             if (match := pattern.fullmatch(entry.name))]
    return max(found, default=0)


def run_folders(out: str | os.PathLike, stem: str) -> list[Path]:
    """The finished run folders ``OUT/STEM_N``, oldest (lowest ``N``) first."""
    out, pattern = Path(out), re.compile(rf"{re.escape(stem)}_([0-9]+)")
    found = [(int(match.group(1)), out / entry.name) for entry in os.scandir(out)
             if (match := pattern.fullmatch(entry.name)) and entry.is_dir()]
    return [path for _, path in sorted(found)]


class RunFolder:
    """The folder of one run under ``out``: files are written in :attr:`temp` and appear together
    as ``out/STEM_N`` on :meth:`commit`. Use :meth:`create`."""

    def __init__(self, out: Path, stem: str, temp: Path, made_out: bool) -> None:
        self.out, self.stem, self.temp, self.made_out = out, stem, temp, made_out
        self.final: Path | None = None
        self._lock: Any = None

    @classmethod
    def create(cls, out: str | os.PathLike, stem: str) -> RunFolder:
        """Make ``out`` if missing and the temporary folder in it. An OSError as one line naming
        the folder (a read-only or virtual file system such as /proc); an OutputError for a full
        disk or quota."""
        out, stem = Path(out), check_stem(stem)
        made_out = not out.exists()
        try:
            out.mkdir(parents=True, exist_ok=True)
            remove_stale(out, stem)
            temp = Path(tempfile.mkdtemp(prefix=f".{stem}.{os.getpid()}.", suffix=".partial",
                                         dir=out))
        except OSError as error:
            if made_out:
                with contextlib.suppress(OSError):
                    out.rmdir()
            # A full disk is no usage error: the same exit as a full disk at the end.
            kind = OutputError if error.errno in FULL else OSError
            raise kind(f"cannot create a run folder in {out}: "
                       f"{error.strerror or error}") from None
        return cls(out, stem, temp, made_out)

    @classmethod
    def reopen(cls, run: str | os.PathLike) -> RunFolder:
        """The run folder ``run`` (``OUT/STEM_N``, reserved by an unfinished run) to finish:
        its files are written beside it as for a new run and moved into it on :meth:`commit`."""
        run = Path(run)
        found = re.fullmatch(r"(.+)_[0-9]+", run.name)
        if found is None or not run.is_dir():
            raise ValueError(f"{run} is not a run folder OUT/NAME_N")
        folder = cls.create(run.parent, found.group(1))
        folder.final = run
        try:
            folder.lock()
        except ValueError:
            folder.final = None  # the other process's folder: discard leaves it alone
            folder.discard()
            raise
        remove_temporaries(run, any_writer=True)  # ours alone now: a killed save's leftovers
        return folder

    def lock(self) -> None:
        """Hold the reserved folder's lock until :meth:`commit` or :meth:`discard` (and show
        it with the file ``LOCK``): a run that trains there, fresh or resumed, is the only one.
        A ValueError of one line when another process holds it."""
        assert self.final is not None, "reserve the folder first"
        if self._lock is not None:
            return
        lock = hold(self.final)
        if lock is None:
            raise ValueError(f"{self.final} is being trained by another process now; "
                             "--resume it once that process has stopped")
        self._lock = lock
        with contextlib.suppress(OSError), open(self.final / LOCK, "w") as shown:
            shown.write(f"{os.getpid()}\n")

    def _unlock(self) -> None:
        if self._lock is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.final / LOCK)  # type: ignore[operator]
            release(self._lock)
            self._lock = None

    def file(self, name: str) -> Path:
        """Where to write the run's file ``name`` now."""
        return self.temp / name

    @contextlib.contextmanager
    def writing(self, what: str) -> Iterator[None]:
        """Turn an OSError raised in the block (writing ``what``) into an OutputError."""
        try:
            yield
        except OSError as error:
            raise OutputError(f"cannot write {what} for the run in {self.out}: "
                              f"{error.strerror or error}") from None

    def reserve(self) -> Path:
        """The final folder ``out/STEM_N``, created empty and exclusively (a concurrent run that
        took ``N`` first makes this one try ``N + 1``)."""
        with self.writing("the run folder"):
            number = latest_run_id(self.out, self.stem) + 1
            while True:
                candidate = self.out / f"{self.stem}_{number}"
                try:
                    candidate.mkdir()
                except FileExistsError:
                    number += 1
                    continue
                self.final = candidate
                return candidate

    def commit(self) -> Path:
        """Put the written files in place as the reserved folder; returns it."""
        final = self.final if self.final is not None else self.reserve()
        with self.writing(final.name):
            if any(final.iterdir()):  # a run that saved its state there as it trained
                remove_temporaries(final, any_writer=True)  # we hold it: none is live
                # results.json last: once it is there the run is finished
                for name in sorted(os.listdir(self.temp), key=lambda n: n == "results.json"):
                    os.replace(self.temp / name, final / name)
                os.rmdir(self.temp)
                self._unlock()
                return final
            os.chmod(self.temp, 0o755)  # mkdtemp makes it private; a run is ordinary data
            os.replace(self.temp, final)  # onto the empty folder that reserve made: atomic
        return final

    def discard(self) -> None:
        """Remove what this run wrote: the temporary folder, the reserved folder if still
        empty and ``out`` if this run made it and it is empty."""
        shutil.rmtree(self.temp, ignore_errors=True)
        self._unlock()
        for folder in (self.final, self.out if self.made_out else None):
            if folder is not None:
                with contextlib.suppress(OSError):
                    folder.rmdir()


def remove_stale(out: Path, stem: str) -> list[Path]:
    """Remove the temporary folders of ``stem`` in ``out`` whose writing process is gone, and
    its reserved run folders that hold nothing to resume from and no live lock; returns them.
    Those of live processes (a run still training) are left alone."""
    pattern = re.compile(rf"\.{re.escape(stem)}\.(\d+)\.[a-z0-9_]{{8}}\.partial")
    reserved = re.compile(rf"{re.escape(stem)}_[0-9]+")
    removed = []
    for entry in os.scandir(out):
        found = pattern.fullmatch(entry.name)
        if found and entry.is_dir(follow_symlinks=False) \
                and not _process_exists(int(found.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
        elif reserved.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False) \
                and _remove_abandoned(Path(entry.path)):
            removed.append(Path(entry.path))
    return removed


def _remove_abandoned(folder: Path) -> bool:
    """Remove ``folder`` if a run reserved it (its ``LOCK`` file is there), left nothing to
    resume from (no ``STATE``, no other file but our temporaries) and no process holds it."""
    if fcntl is None or not _nothing_to_resume(folder):  # a lock file alone proves nothing
        return False
    try:
        lock = hold(folder)
    except OSError:  # gone already, or not ours to open
        return False
    if lock is None:
        return False
    try:
        if not _nothing_to_resume(folder):  # its run saved a checkpoint before it let go
            return False
        remove_temporaries(folder, any_writer=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(folder / LOCK)
        folder.rmdir()  # anything else in it (not ours) keeps it
        return True
    except OSError:
        return False
    finally:
        release(lock)


def _nothing_to_resume(folder: Path) -> bool:
    """Whether ``folder`` holds its ``LOCK`` file and nothing else but hidden files (no
    ``STATE``, no results): a reserved run folder that no run can continue from."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    return LOCK in names and all(name.startswith(".") for name in names)


def hold(folder: Path) -> Any:
    """A lock on ``folder`` held until :func:`release` (or the process ends, however), or
    None when another process holds it: ``flock`` on the open folder, so that no file in it,
    deleted or replaced, can let a second holder in. Without ``flock`` (Windows), the lock
    file ``LOCK`` in it (filelock)."""
    if fcntl is not None:
        handle = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return handle
        except OSError as error:
            os.close(handle)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return None
            # a file system without flock: the lock file below
    from filelock import FileLock, Timeout  # torch's dependency, so AlphaZero's too

    lock = FileLock(folder / LOCK, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        return None
    return lock


def release(lock: Any) -> None:
    """Let go of a lock from :func:`hold`."""
    if isinstance(lock, int):
        os.close(lock)  # closing the folder releases its flock
    else:
        lock.release()
