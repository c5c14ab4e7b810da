"""gym_tictactoe.files.atomic_path: all or nothing under the real name, no temporary file left."""

from __future__ import annotations

import os
import re
import stat

import pytest

from gym_tictactoe.files import atomic_path


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
