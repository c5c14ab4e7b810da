"""The solution cache against hostile files: whatever is at its path (a named pipe, a link to
/dev/zero), a killed writer's leftovers, an oversized .npy header, and 300 seeded mutations of a
real cache file, each of which must give one clear line (a ValueError or an OSError: the cache
warns and rebuilds) or exactly the saved arrays, without hanging or allocating more than twice
the file's legitimate arrays."""

from __future__ import annotations

import ast
import io
import os
import signal
import stat
import subprocess
import sys
import tracemalloc
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
import thread_helpers

from gym_tictactoe import game
from gym_tictactoe.game import cache, solver

ROOT = Path(__file__).resolve().parents[2]
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
SMALL = (3, 3, 3)  # the cache stores any board; a 3x3 one is solved in 10 ms


class Builder:
    """Stands in for ``solver.build``, counting the calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, rules: game.Rules) -> solver.Solution:
        self.calls += 1
        return solver.build(rules)


def load(builder: Builder) -> tuple[solver.Solution, list[str]]:
    """``cache.load_or_build`` of the small board, and the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        solution = cache.load_or_build(game.rules(*SMALL), builder)
    return solution, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


@pytest.fixture
def cache_path(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path))
    return cache.cache_path(game.rules(*SMALL))


def in_thread(function: Callable, seconds: float) -> dict:
    """``function()``'s result or error; ``{"hung": True}`` if it had not returned in time."""
    worker, outcome = thread_helpers.in_thread(function, seconds)
    return {"hung": True} if worker.is_alive() else outcome


# --- what is at the cache's path ------------------------------------------------------------


@needs_fifo
def test_a_named_pipe_in_the_cache_is_solved_around_with_one_warning(cache_path):
    os.mkfifo(cache_path)
    builder = Builder()
    outcome = in_thread(lambda: load(builder), seconds=30)
    if outcome.get("hung"):
        os.close(os.open(cache_path, os.O_WRONLY | os.O_NONBLOCK))  # let the reader go
        pytest.fail("the cache blocked opening a named pipe")
    _, messages = outcome["value"]
    assert messages == [f"solving 3x3x3 without the cache: {cache_path} is not a regular file "
                        "but a named pipe (FIFO): refusing to replace it"]
    assert builder.calls == 1 and stat.S_ISFIFO(os.lstat(cache_path).st_mode)
    assert os.listdir(cache_path.parent) == [cache_path.name]


@needs_fifo
def test_a_link_to_a_named_pipe_in_the_cache_is_neither_read_nor_replaced(cache_path):
    os.mkfifo(cache_path.parent / "pipe")
    cache_path.symlink_to(cache_path.parent / "pipe")
    outcome = in_thread(lambda: load(Builder()), seconds=30)
    if outcome.get("hung"):
        os.close(os.open(cache_path, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("the cache blocked opening a named pipe")
    assert len(outcome["value"][1]) == 1 and "(a link to" in outcome["value"][1][0]
    assert cache_path.is_symlink() and stat.S_ISFIFO(os.lstat(cache_path.parent / "pipe").st_mode)


DEVICE_ENTRY = """
import os, resource, sys, tempfile, warnings
resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))  # a regression: MemoryError

from gym_tictactoe import game

from gym_tictactoe.game import cache

from gym_tictactoe.game import solver
folder, real_replace, real_mkstemp = os.environ[cache.ENV_VAR], os.replace, tempfile.mkstemp

def replace(source, destination):  # a regression must not replace the device: CI may be root
    if not os.path.realpath(destination).startswith(folder):
        sys.exit(f"a save replaced {destination}")
    return real_replace(source, destination)

def mkstemp(*args, dir=None, **kwargs):
    if not os.path.realpath(dir).startswith(folder):
        sys.exit(f"a save wrote a temporary file in {dir}")
    return real_mkstemp(*args, dir=dir, **kwargs)

os.replace, tempfile.mkstemp = replace, mkstemp
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    cache.load_or_build(game.rules(3, 3, 3), solver.build)
print("\\n".join(str(w.message) for w in caught))
"""


@pytest.mark.e2e
@pytest.mark.skipif(not Path("/dev/zero").exists() or os.name != "posix",
                    reason="no /dev/zero or no memory limits")
def test_a_link_to_dev_zero_in_the_cache_is_never_read(tmp_path):
    folder = tmp_path.resolve()
    (folder / "solution-3x3x3.npz").symlink_to("/dev/zero")
    environment = {**os.environ, cache.ENV_VAR: str(folder), "OPENBLAS_NUM_THREADS": "1",
                   "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", DEVICE_ENTRY], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [
        f"solving 3x3x3 without the cache: {folder / 'solution-3x3x3.npz'} (a link to /dev/zero) "
        "is not a regular file but a character device: refusing to replace it"]
    assert os.readlink(folder / "solution-3x3x3.npz") == "/dev/zero"


KILLED_CACHE_WRITER = """
import os, signal

from gym_tictactoe import game

from gym_tictactoe.game import cache

from gym_tictactoe.game import solver

def half(handle, **arrays):  # killed mid-write: no finally runs, as with kill -9
    handle.write(b"PK\\x03\\x04 half a cache")
    handle.flush()
    os.kill(os.getpid(), signal.SIGKILL)

rules = game.rules(3, 3, 3)
solution = solver.build(rules)
cache.np.savez = half
cache.save(cache.cache_path(rules), rules, solution.score, solution.reachable)
"""


@pytest.mark.e2e
@pytest.mark.skipif(os.name != "posix", reason="SIGKILL and process probes are POSIX")
def test_reading_a_whole_cache_removes_what_a_killed_writer_left(cache_path):
    first, _ = load(Builder())  # a whole cache, then a concurrent writer killed mid-write
    done = subprocess.run([sys.executable, "-c", KILLED_CACHE_WRITER], cwd=ROOT,
                          capture_output=True, timeout=60)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert len(os.listdir(cache_path.parent)) == 2  # the cache and the killed writer's litter
    builder = Builder()
    second, messages = load(builder)
    assert builder.calls == 0 and messages == [] and (second.score == first.score).all()
    assert os.listdir(cache_path.parent) == [cache_path.name]


def npy(header: str, data: bytes = b"", version: tuple[int, int] = (1, 0),
        length: int | None = None) -> bytes:
    """An .npy member by hand: magic, version, header length (``length``: a false one)."""
    text = header.encode("latin1")
    text += b" " * (-(len(text) + 10 + 2 * (version[0] > 1) + 1) % 64) + b"\n"
    width = 2 if version == (1, 0) else 4
    told = len(text) if length is None else length
    return b"\x93NUMPY" + bytes(version) + told.to_bytes(width, "little") + text + data


def with_member(data: bytes, name: str, member: bytes | None, **options) -> bytes:
    """The cache file ``data`` with its member ``name`` replaced (None: dropped)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", **options) as new:
        for info in source.infolist():
            if info.filename != name:
                new.writestr(info.filename, source.read(info))
            elif member is not None:
                new.writestr(name, member)
    return out.getvalue()


def test_an_oversized_npy_header_is_one_line_that_does_not_advise_pickle(tmp_path):
    rules = game.rules(*SMALL)
    solution = solver.build(rules)
    path = tmp_path / "solution.npz"
    cache.save(path, rules, solution.score, solution.reachable)
    header = npy("{'descr': '<U64', 'fortran_order': False, 'shape': (3,), }" + " " * 6000)
    path.write_bytes(with_member(path.read_bytes(), "header.npy", header))
    with pytest.raises(ValueError, match=r"^entry 'header' has an .npy header of 6,\d{3} bytes, "
                                         r"more than the 4,096 an array of ours takes$"):
        cache._read(path, rules)


# --- seeded mutations of a real cache file --------------------------------------------------

BOARD = (3, 4, 3)  # 600 KB, the format of the 14- to 16-cell boards' files, quick to read
MUTATIONS = 300


class Original(NamedTuple):
    rules: game.Rules
    score: np.ndarray
    reachable: np.ndarray
    data: bytes
    spots: list[tuple[int, int]]  # byte ranges of the zip's and the .npy's own structures

    @property
    def bound(self) -> int:
        """Twice the arrays a load returns (score, packed and unpacked mask): a clean load
        peaks at about 1.05 times."""
        n = self.rules.n_codes
        return 2 * (n + (n + 7) // 8 + n)


@pytest.fixture(scope="module")
def original(tmp_path_factory) -> Original:
    rules = game.rules(*BOARD)
    solution = solver.build(rules)
    path = tmp_path_factory.mktemp("fuzz") / "solution.npz"
    cache.save(path, rules, solution.score, solution.reachable)
    data = path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        directory = archive.start_dir
    spots = [(info.header_offset, info.header_offset + 200) for info in infos]
    spots.append((directory, len(data)))
    return Original(rules, solution.score, solution.reachable, data, spots)


def flip(rng: np.random.Generator, original: Original) -> bytes:
    """A few bytes XORed, mostly in the zip's headers and directory and the .npy headers."""
    data = bytearray(original.data)
    for _ in range(rng.integers(1, 5)):
        if rng.random() < 0.8:
            low, high = original.spots[rng.integers(len(original.spots))]
            at = int(rng.integers(low, min(high, len(data))))
        else:
            at = int(rng.integers(len(data)))
        data[at] ^= int(rng.integers(1, 256))
    return bytes(data)


EDGES = (0, 1, 8, 12, 14, 20, 45, 63, 80, 99, 0xFF, 0xFFFF, 0xFFFFFFFF)


def field(rng: np.random.Generator, original: Original) -> bytes:
    """One 2- or 4-byte field of a zip header set to an edge value or moved by up to 1000."""
    data = bytearray(original.data)
    low, high = original.spots[rng.integers(len(original.spots))]
    at, width = int(rng.integers(low, min(high, len(data)) - 4)), int(rng.choice([2, 4]))
    old = int.from_bytes(data[at:at + width], "little")
    new = int(rng.choice(EDGES)) if rng.random() < 0.6 else old + int(rng.integers(-1000, 1001))
    data[at:at + width] = (new % 2 ** (8 * width)).to_bytes(width, "little")
    return bytes(data)


def truncate(rng: np.random.Generator, original: Original) -> bytes:
    return original.data[: rng.integers(len(original.data))]


def extend(rng: np.random.Generator, original: Original) -> bytes:
    size = int(rng.integers(1, 70_000))
    return original.data + (bytes(size) if rng.random() < 0.5 else rng.bytes(size))


def insert(rng: np.random.Generator, original: Original) -> bytes:
    at = int(rng.integers(len(original.data)))
    return original.data[:at] + rng.bytes(int(rng.integers(1, 65))) + original.data[at:]


def hostile_npys(good: bytes, rng: np.random.Generator) -> list[bytes]:
    """Ways an .npy member lies about itself, and a few harmless variants of ``good``."""
    fields = ast.literal_eval(good[10:good.index(b"\n")].decode("latin1"))
    descr, shape = repr(fields["descr"]), repr(fields["shape"])
    data = good[good.index(b"\n") + 1:]
    head = f"{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}"
    return [
        npy(head.replace(shape, f"({10**12},)"), data), npy(head, data, length=65_535),
        npy(head + " " * 70_000, data, version=(2, 0)),
        npy(head, data, version=(2, 0), length=2**31), npy(head, data, version=(3, 0)),
        npy(head, data, version=(1, 7)), npy(head, data, version=(2, 0)),  # 2.0: the same
        npy(head.replace("False", "True"), data),  # 1-D: the same array
        npy(head.replace(descr, descr.replace("<", ">")), data),
        npy(head.replace(descr, "'<i2'"), data), npy(head.replace(descr, "'|O'"), data),
        npy(head.replace(descr, "[('a', '|i1')]"), data),
        npy(head.replace(descr, f"('|i1', ({10**9},))"), data),
        npy(head.replace(shape, "(-1,)"), data), npy(head.replace(shape, f"({2**62}, 4)"), data),
        npy("[1, 2]", data), npy("{'descr': '|i1'}", data), npy("{'descr': '|i1", data),
        npy("(" * 3000, data), npy(head.replace(shape, shape.replace(",", "L,")), data),
        npy(head, data[: len(data) // 2]), b"\x93NUMPZ" + good[6:], good[:9],
        npy(rng.bytes(120).decode("latin1"), data),
    ]


def member(rng: np.random.Generator, original: Original) -> bytes:
    """A member dropped, renamed, duplicated, added or replaced by a hostile one, or every
    member compressed (deflate loads the same; bzip2 and lzma are refused)."""
    name = ["header.npy", "score.npy", "reachable.npy"][rng.integers(3)]
    with zipfile.ZipFile(io.BytesIO(original.data)) as archive:
        good = archive.read(name)
    choice = int(rng.integers(6))
    if choice == 0:
        return with_member(original.data, name, None)
    if choice == 1:
        method = [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA][rng.integers(3)]
        return with_member(original.data, "", None, compression=method)
    if choice == 2:
        variants = hostile_npys(good, rng)
        return with_member(original.data, name, variants[rng.integers(len(variants))])
    data = with_member(original.data, name, None) if choice == 3 else original.data
    out = io.BytesIO(data)
    with warnings.catch_warnings(), zipfile.ZipFile(out, "a") as archive:
        warnings.simplefilter("ignore")  # zipfile's "Duplicate name"
        added = {3: "renamed.npy", 4: name, 5: "extra.npy"}[choice]
        archive.writestr(added, good)
    return out.getvalue()


MUTATORS = (flip, field, truncate, extend, insert, member)


def check(original: Original, data: bytes, path: Path) -> str:
    """``loaded`` or ``refused``, after checking which is right and what it cost."""
    path.write_bytes(data)
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    try:
        score, reachable = cache._read(path, original.rules)
    except (ValueError, OSError) as error:  # what load_or_build turns into one warning
        outcome, message = "refused", str(error)
        assert message and "\n" not in message and len(message) < 600, message[:300]
    else:
        outcome = "loaded"
        assert (score == original.score).all() and (reachable == original.reachable).all()
        del score, reachable
    peak = tracemalloc.get_traced_memory()[1] - before
    assert peak <= original.bound, f"{peak:,} bytes allocated, more than {original.bound:,}"
    return outcome


def fuzz(original: Original, path: Path) -> dict[str, int]:
    rng = np.random.default_rng(16)
    counts = {"loaded": 0, "refused": 0}
    tracemalloc.start()
    try:
        for number in range(MUTATIONS):
            mutate = MUTATORS[rng.integers(len(MUTATORS))]
            data = mutate(rng, original)
            try:
                counts[check(original, data, path)] += 1
            except BaseException as error:
                raise AssertionError(f"mutation {number} ({mutate.__name__}): "
                                     f"{type(error).__name__}: {str(error)[:500]}") from error
    finally:
        tracemalloc.stop()
    return counts


@pytest.mark.slow
def test_mutated_cache_files_give_one_line_or_the_exact_arrays(original, tmp_path):
    outcome = in_thread(lambda: fuzz(original, tmp_path / "solution.npz"), seconds=120)
    assert not outcome.get("hung"), "a mutated cache file made the reader hang"
    if "error" in outcome:
        raise outcome["error"]
    counts = outcome["value"]
    assert sum(counts.values()) == MUTATIONS
    assert counts["loaded"] >= 5 and counts["refused"] >= MUTATIONS // 2, counts


def test_every_hostile_npy_member_gives_one_line_or_the_exact_arrays(original, tmp_path):
    rng, outcomes = np.random.default_rng(11), []
    with zipfile.ZipFile(io.BytesIO(original.data)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    tracemalloc.start()
    try:
        for name, good in members.items():
            for variant in hostile_npys(good, rng):
                data = with_member(original.data, name, variant)
                outcomes.append(check(original, data, tmp_path / "solution.npz"))
    finally:
        tracemalloc.stop()
    assert outcomes.count("loaded") >= 3 and outcomes.count("refused") >= 3 * 20
