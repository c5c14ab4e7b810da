"""gym_tictactoe.files: all or nothing under the real name, no temporary file left, even after
SIGKILL (the next save cleans up); only regular files replaced (links to them followed); what
is at a path to load named, and a named pipe never blocks."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from thread_helpers import in_thread

from gym_tictactoe.files import NotRegularFile, atomic_path, existing_file, open_regular

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parents[2]


def test_success_replaces_the_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "data.json"
    target.write_text("old")
    with atomic_path(target) as temp:
        assert temp.parent == tmp_path and temp.name.startswith(".data.json.")
        assert temp.suffix == ".json" and temp.is_file() and target.read_text() == "old"
        temp.write_text("new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert os.listdir(tmp_path) == ["data.json"]


def test_a_given_suffix_replaces_the_targets(tmp_path):
    with atomic_path(tmp_path / "model", suffix=".zip") as temp:
        assert temp.suffix == ".zip"
        temp.write_bytes(b"zip")
    assert os.listdir(tmp_path) == ["model"]


def test_an_error_in_the_block_keeps_the_old_file_and_removes_the_temporary(tmp_path):
    target = tmp_path / "data.json"
    target.write_text("old")
    with pytest.raises(OSError, match="disk full"), atomic_path(target) as temp:
        temp.write_text("half")
        raise OSError("disk full")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["data.json"]


def test_an_error_before_any_file_existed_leaves_nothing(tmp_path):
    with pytest.raises(ValueError, match="refused"), atomic_path(tmp_path / "new.png"):
        raise ValueError("refused")
    assert os.listdir(tmp_path) == []


def test_a_missing_folder_raises_file_not_found_naming_it(tmp_path):
    folder = tmp_path / "missing"
    message = re.escape(f"no directory {folder}")
    with pytest.raises(FileNotFoundError, match=message), atomic_path(folder / "data.json"):
        pass  # pragma: no cover
    assert os.listdir(tmp_path) == []


KILLED_WRITER = """
import os, signal, sys
from gym_tictactoe.files import atomic_path
with atomic_path(sys.argv[1]) as temp:
    temp.write_text("half")
    os.kill(os.getpid(), signal.SIGKILL)  # no finally runs, as with kill -9 or a power cut
"""


def _killed_save(target) -> None:
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(target)], cwd=ROOT,
                          capture_output=True, timeout=60)
    assert done.returncode == -signal.SIGKILL


@pytest.mark.e2e
@pytest.mark.skipif(os.name != "posix", reason="SIGKILL and process probes are POSIX")
def test_the_next_save_removes_what_a_killed_writer_left(tmp_path):
    target = tmp_path / "model.npz"
    target.write_text("old")
    _killed_save(target)
    first = set(os.listdir(tmp_path)) - {"model.npz"}
    assert target.read_text() == "old" and len(first) == 1  # the target is whole, plus litter
    _killed_save(target)  # cleans the first writer's leftover, leaves its own
    second = set(os.listdir(tmp_path)) - {"model.npz"}
    assert len(second) == 1 and second != first
    with atomic_path(target) as temp:
        temp.write_text("new")
    assert target.read_text() == "new" and os.listdir(tmp_path) == ["model.npz"]


@pytest.mark.e2e
@pytest.mark.skipif(os.name != "posix", reason="process probes are POSIX")
def test_a_save_in_progress_elsewhere_is_left_alone(tmp_path):
    target = tmp_path / "results.json"
    with subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                          stdin=subprocess.PIPE) as writer:
        theirs = tmp_path / f".results.json.{writer.pid}.abcd_123.json"
        theirs.write_text("their half")
        try:
            with atomic_path(target) as temp:
                temp.write_text("ours")
        finally:
            writer.communicate(b"")
    assert theirs.read_text() == "their half" and target.read_text() == "ours"


def test_other_files_beside_the_target_are_never_touched(tmp_path):
    keep = [".model.npz.backup", ".model.npz.123.npz", ".other.npz.99999999.abcdefgh.npz",
            "model.npz.1.abcdefgh.npz"]
    for name in keep:
        (tmp_path / name).write_text("keep")
    with atomic_path(tmp_path / "model.npz") as temp:
        temp.write_text("new")
    assert sorted(os.listdir(tmp_path)) == sorted([*keep, "model.npz"])


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")
def test_saving_onto_a_link_writes_the_file_it_points_to(tmp_path):
    (tmp_path / "runs").mkdir()
    real = tmp_path / "runs" / "model.npz"
    real.write_text("old")
    link = tmp_path / "latest.npz"
    link.symlink_to(real)
    with atomic_path(link) as temp:
        assert temp.parent == real.parent
        temp.write_text("new")
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert real.read_text() == "new" and os.listdir(tmp_path / "runs") == ["model.npz"]


def test_existing_file_names_what_is_there_instead(tmp_path):
    (tmp_path / "f").write_text("x")
    assert existing_file(tmp_path / "f", "model file") == tmp_path / "f"
    with pytest.raises(FileNotFoundError, match="no model file at"):
        existing_file(tmp_path / "missing", "model file")
    with pytest.raises(ValueError, match="is a folder, not a model file"):
        existing_file(tmp_path, "model file")


# --- only regular files are replaced; what is at a path to read is checked without opening it --

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")


@pytest.fixture
def writes_stay_in(tmp_path, monkeypatch):
    """A regression must fail the test, not replace a real device: CI may run as root."""
    import gym_tictactoe.files as files

    def inside(name) -> bool:
        return Path(name).resolve().is_relative_to(tmp_path.resolve())

    real_replace, real_mkstemp = os.replace, files.tempfile.mkstemp

    def replace(source, destination):
        assert inside(destination), f"a save replaced {destination}, outside {tmp_path}"
        return real_replace(source, destination)

    def mkstemp(*args, dir=None, **kwargs):
        assert inside(dir), f"a save wrote a temporary file in {dir}"
        return real_mkstemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(files.os, "replace", replace)
    monkeypatch.setattr(files.tempfile, "mkstemp", mkstemp)


def _refused(path, message: str) -> None:
    with pytest.raises(NotRegularFile, match=message) as caught, atomic_path(path) as temp:
        temp.write_text("new")  # pragma: no cover
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


@needs_fifo
def test_a_named_pipe_is_never_replaced(tmp_path, writes_stay_in):
    os.mkfifo(tmp_path / "model.npz")
    _refused(tmp_path / "model.npz", r"model.npz is not a regular file but a named pipe \(FIFO\): "
             "refusing to replace it")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "model.npz").st_mode)
    assert os.listdir(tmp_path) == ["model.npz"]


@needs_fifo
def test_a_link_to_a_named_pipe_is_refused_and_both_kept(tmp_path, writes_stay_in):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "model.npz").symlink_to(tmp_path / "pipe")
    _refused(tmp_path / "model.npz", r"\(a link to .*pipe\) is not a regular file but a named "
             "pipe")
    assert (tmp_path / "model.npz").is_symlink()
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)
    assert sorted(os.listdir(tmp_path)) == ["model.npz", "pipe"]


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null")
def test_a_link_to_a_device_is_refused_and_the_device_untouched(tmp_path, writes_stay_in):
    (tmp_path / "cache.npz").symlink_to("/dev/null")
    before = os.stat("/dev/null")
    _refused(tmp_path / "cache.npz", "is not a regular file but a character device: refusing")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert os.listdir(tmp_path) == ["cache.npz"]


def test_a_folder_a_dangling_link_and_a_loop_are_refused(tmp_path, writes_stay_in):
    (tmp_path / "runs").mkdir()
    _refused(tmp_path / "runs", "runs is not a regular file but a folder: refusing to replace")
    (tmp_path / "dangling").symlink_to(tmp_path / "missing.npz")
    _refused(tmp_path / "dangling", "is a link to .*missing.npz, which does not exist: refusing "
             "to write through it")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    _refused(tmp_path / "loop", r"a symbolic link \(a loop")
    assert sorted(os.listdir(tmp_path)) == ["dangling", "loop", "runs"]


@needs_fifo
def test_a_pipe_put_in_place_while_we_write_is_not_replaced(tmp_path, writes_stay_in):
    target = tmp_path / "results.json"
    target.write_text("old")
    with pytest.raises(NotRegularFile, match="a named pipe"), atomic_path(target) as temp:
        temp.write_text("new")
        target.unlink()
        os.mkfifo(target)  # another process takes the name between our check and our rename
    assert stat.S_ISFIFO(os.lstat(target).st_mode) and os.listdir(tmp_path) == ["results.json"]


@needs_fifo
def test_a_q_agent_saved_onto_a_link_to_a_pipe_is_refused(tmp_path, writes_stay_in):
    from agents.tabular.q_learning import QLearningAgent

    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "agent.npz").symlink_to(tmp_path / "pipe")
    with pytest.raises(NotRegularFile, match=r"agent.npz .* is not a regular file but a named"):
        QLearningAgent().save(tmp_path / "agent.npz")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null")
def test_existing_file_names_a_device_behind_a_link_without_opening_it(tmp_path):
    (tmp_path / "model.zip").symlink_to("/dev/null")
    with pytest.raises(NotRegularFile, match=r"model.zip is not a regular file but a character "
                                             r"device, so not a model file"):
        existing_file(tmp_path / "model.zip", "model file")


def unblock(fifo: Path) -> None:
    """Let a reader stuck opening ``fifo`` go on (it then reads an empty file)."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@needs_fifo
def test_open_regular_refuses_a_pipe_without_blocking(tmp_path):
    fifo = tmp_path / "model.npz"
    os.mkfifo(fifo)
    worker, outcome = in_thread(lambda: open_regular(fifo, "model file", 100))
    if worker.is_alive():
        unblock(fifo)
        pytest.fail("open_regular blocked on a named pipe")
    assert isinstance(outcome.get("error"), NotRegularFile)
    assert "is not a regular file but a named pipe (FIFO), so not a model file" in str(
        outcome["error"])


def test_open_regular_checks_the_size_of_what_it_opened(tmp_path):
    (tmp_path / "f").write_bytes(b"x" * 101)
    with pytest.raises(ValueError, match="holds 101 bytes, more than the 100 a model file can"):
        open_regular(tmp_path / "f", "model file", 100)
    with open_regular(tmp_path / "f", "model file", 101) as file:
        assert file.read() == b"x" * 101


def dead_pid() -> int:
    """The id of a process that has just ended."""
    with subprocess.Popen([sys.executable, "-c", "pass"]) as process:
        process.wait()
    return process.pid


@pytest.mark.e2e
@pytest.mark.skipif(fcntl is None, reason="no advisory locks")
def test_a_locked_temporary_of_a_seemingly_dead_process_is_left_alone(tmp_path):
    """A writer on another host or in another container has a process id we cannot probe:
    its lock on the file says it is alive."""
    pid = dead_pid()
    theirs, litter = (tmp_path / f".cache.npz.{pid}.{tag}.npz" for tag in ("abcd_123", "efgh_456"))
    theirs.write_text("their half")
    litter.write_text("a dead writer's half")
    handle = os.open(theirs, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        with atomic_path(tmp_path / "cache.npz") as temp:
            temp.write_text("ours")
    finally:
        os.close(handle)
    assert sorted(os.listdir(tmp_path)) == sorted(["cache.npz", theirs.name])


def test_remove_temporaries_takes_every_target_and_spares_live_writers(tmp_path):
    from gym_tictactoe.files import remove_temporaries

    fcntl = pytest.importorskip("fcntl")  # how a live writer holds its file
    dead = tmp_path / ".checkpoint.npz.999999999.abcdefgh.npz"  # no process has that id
    alive = tmp_path / f".model.zip.{os.getppid()}.abcdefgh.zip"  # a live (or zombie) id
    locked = tmp_path / ".results.json.999999999.abcdefgh.json"  # a writer holds it
    for path in (dead, alive, locked, tmp_path / "checkpoint.npz", tmp_path / ".training.lock"):
        path.write_bytes(b"")
    with open(locked) as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert remove_temporaries(tmp_path) == [dead]
        assert remove_temporaries(tmp_path, any_writer=True) == [alive]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".results.json.999999999.abcdefgh.json", ".training.lock", "checkpoint.npz"]
