"""Damaging zip archives at the byte level, and loading the damage under bounds, for the tests
of model files that may be hostile."""

from __future__ import annotations

import io
import signal
import struct
import tracemalloc
import warnings
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

CENTRAL = b"PK\x01\x02"  # a central-directory header
END = b"PK\x05\x06"  # the end-of-central-directory record


def set_version_needed(path: Path, version: int = 80) -> Path:
    """The first central-directory header says it needs zip version ``version / 10``."""
    data = bytearray(path.read_bytes())
    at = _central_directory(data)
    data[at + 6 : at + 8] = struct.pack("<H", version)
    path.write_bytes(bytes(data))
    return path


def move_central_directory(path: Path, by: int = 1000) -> Path:
    """The end record points ``by`` bytes past where the central directory starts."""
    data = bytearray(path.read_bytes())
    end = data.rindex(END)
    (offset,) = struct.unpack_from("<I", data, end + 16)
    struct.pack_into("<I", data, end + 16, offset + by)
    path.write_bytes(bytes(data))
    return path


def mutate(data: bytes, rng: np.random.Generator) -> bytes:
    """One random mutation, most of them in the zip's structure: a few bytes of the central
    directory or end record, of a local header, or anywhere; a cut; a repeated chunk."""
    out = bytearray(data)
    kind = rng.integers(6)
    if kind == 4:
        return bytes(out[: rng.integers(len(out))])
    if kind == 5:
        start = int(rng.integers(len(out)))
        chunk = out[start : start + int(rng.integers(1, 64))]
        at = int(rng.integers(len(out)))
        return bytes(out[:at] + chunk + out[at:])
    low = {0: _central_directory(out), 1: 0, 2: max(0, len(out) - 64)}.get(int(kind), 0)
    high = {1: min(len(out), 4096)}.get(int(kind), len(out))
    for _ in range(int(rng.integers(1, 4))):
        at = int(rng.integers(low, high))
        out[at] = int(rng.choice([0, 0xFF, 80, int(rng.integers(256))]))
    return bytes(out)


def _central_directory(data: bytes | bytearray) -> int:
    end = data.rindex(END)
    return struct.unpack_from("<I", data, end + 16)[0]


def mutate_member(data: bytes, name: str, rng: np.random.Generator) -> bytes:
    """The archive ``data`` with member ``name`` mutated (``mutate``) and stored again with a
    matching CRC: what a damaged inner structure (torch's own zip of the weights) looks like to
    a reader past the outer archive's checks."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    members[name] = mutate(members[name], rng)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for member, content in members.items():
            archive.writestr(member, content)
    return out.getvalue()


@contextmanager
def bounded(path: Path, peak_bytes: int, hang_seconds: int = 30,
            warnings_fail: bool = False) -> Iterator[None]:
    """Fail on a hang or on Python allocations beyond ``peak_bytes`` while loading ``path``
    (``warnings_fail``: on a warning too, so that a refusal is our one line, not a library's)."""
    def hang(*args):
        raise AssertionError(f"loading {path} did not end within {hang_seconds} s")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(hang_seconds)
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            if warnings_fail:
                warnings.simplefilter("error")
            yield
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert peak <= peak_bytes, f"loading {path} allocated {peak:,} bytes"
