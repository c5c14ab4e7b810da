"""gym_tictactoe.files: all or nothing under the real name, no temporary file left, even after
SIGKILL (the next save cleans up); links followed; what is at a path to load named."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gym_tictactoe.files import atomic_path, existing_file

ROOT = Path(__file__).resolve().parents[1]


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
