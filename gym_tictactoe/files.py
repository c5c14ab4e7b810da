"""Atomic writes: a crash or an error never leaves a half-written file under the real name."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """A temporary path beside ``path`` to write in the block, renamed onto ``path`` after it.

    The file exists, empty, as ``.NAME.XXXXXXXX`` plus ``suffix`` (by default ``path``'s: SB3's
    ``save`` adds one that is missing). On success it is made readable by all and replaces
    ``path``; on error it is removed and ``path`` stays as it was. A missing folder is a
    FileNotFoundError naming it.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot save to {path}: no directory {path.parent}")
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent,
                                    suffix=path.suffix if suffix is None else suffix)
    os.close(handle)
    temp = Path(name)
    try:
        yield temp
        os.chmod(temp, 0o644)  # mkstemp makes it private; what we save is ordinary data
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
